"""Confirmations by reply: a request to join or to move is acted on only once its address says
yes (rule 201). Pure: the token a request's confirmation mail carries in its thread, the thread
a reply answers, and whether the reply is a bare yes.

The token is derived from the request mail (its sender, Message-ID and body), so a replay of
the same mail makes the same confirmation mail; it proves nothing by itself, which is why the
referee checks the confirming reply's sender as it checks every player's (`[auth]`).
"""

from __future__ import annotations

import hashlib

from referee.core.threads import ThreadKind
from referee.desk.prompts import YES, first_words
from referee.mail.commands import fold
from referee.mail.outgoing import thread_in

TOKEN_LENGTH = 16


def token(dedupe_key: str, kind: str) -> str:
    """The confirmation's name in its thread (`verify-<token>`), stable for the same mail."""
    return hashlib.sha256(f"{kind}|{dedupe_key}".encode()).hexdigest()[:TOKEN_LENGTH]


def confirmation_thread(references: tuple[str, ...], in_reply_to: str, game: str) -> str | None:
    """The token of the confirmation mail a reply answers, if it answers one."""
    for reference in (in_reply_to, *reversed(references)):
        thread = thread_in(reference, game)
        if thread is not None and thread.kind is ThreadKind.VERIFY:
            return thread.key
    return None


def bare_yes(text: str) -> bool:
    """The reply's first line is a yes and nothing more ("yes", "Sì!", "OK")."""
    answer = fold(first_words(text)).strip(" .!,;")
    return answer in YES
