"""Which mail is debate, and what of it goes to the table (rule 112); pure.

A player's mail is debate when the mail it answers, the nearest of the game's own Message-IDs
in its In-Reply-To, then its References from the latest, belongs to a proposal's thread (the
circulation, a reminder, a result, or another player's relayed words) or to the table's thread
(words said with SAY). A reply to one of the referee's answers or prompts is never debate, even
when that answer was itself about a proposal: the player is talking to the referee. What goes
to the table is the mail's own words (the quoted history and the signature already cut) less
every line a command took and every line held back as a command the player may have meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from referee.core.model import GameState
from referee.core.threads import Thread, ThreadKind
from referee.mail.outgoing import domain_of, slug, thread_in


def nearest_thread(
    references: tuple[str, ...], in_reply_to: str, game: str, address: str
) -> Thread | None:
    """The thread of the nearest of the game's own mails this mail answers (None: none, or
    one of the referee's unthreaded answers)."""
    ours = re.compile(rf"<{re.escape(slug(game))}\.[^@>]+@{re.escape(domain_of(address))}>", re.I)
    for reference in (in_reply_to, *reversed(references)):
        if ours.fullmatch(reference.strip()):
            return thread_in(reference, game)  # the nearest of ours decides, whatever it is
    return None


def debate_thread(
    references: tuple[str, ...], in_reply_to: str, game: str, address: str, state: GameState
) -> Thread | None:
    """The proposal's (or the table's) thread this mail talks in, or None."""
    thread = nearest_thread(references, in_reply_to, game, address)
    if thread is None:
        return None
    if thread.kind is ThreadKind.TABLE:
        return thread
    if thread.kind is ThreadKind.PROPOSAL and thread.number is not None:
        return thread if state.proposal(thread.number) is not None else None
    return None


def leftover(text: str, taken: Iterable[tuple[int, int]]) -> str:
    """The lines of `text` outside every span in `taken`, blank runs closed, ends trimmed."""
    used: set[int] = set()
    for first, last in taken:
        used.update(range(first, last))
    kept: list[str] = []
    for index, line in enumerate(text.split("\n")):
        if index in used:
            continue
        line = line.rstrip()
        if not line and (not kept or not kept[-1]):
            continue
        kept.append(line)
    while kept and not kept[-1]:
        kept.pop()
    return "\n".join(kept)
