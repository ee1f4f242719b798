"""Lines the referee itself circulated: a command that repeats one in a reply is not obeyed.

Serves rules 107 (proposals are circulated in writing) and every rule a command acts under:
a proposal's text, an appeal's question or a ruling may hold lines such as `VOTE 301 YES` or
`QUIT`, planted for a client that quotes the notice without `>` marks under a header this
referee does not know. The referee knows what it sent: the texts are in the game's state, so
live service and replay reach the same answer whether or not mail is rendered. A mail that
answers one of the referee's mails (its In-Reply-To or References name the game's Message-IDs)
has each command line compared, word for word after folding case and accents, with the
command-like lines of what was circulated in that thread (a proposal's or an appeal's), or of
every circulated text when the thread is not one of those. A text's line longer than the
notice's plain part is wrapped there (`referee.mail.markup.wrap`), so its copy is compared with
the wrapped lines as well as the raw ones. A command line that stands alone in a text of the
thread answered (a one-line proposal `VOTE 301 YES`) has no line beside it to tell a copy from a
line typed: in that thread, that line is never the player's (typed in a new mail, it is).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from referee.core import numerals
from referee.core.model import GameState
from referee.mail.commands import fold, match
from referee.mail.markup import WIDTH, wrap


def normalise(line: str) -> str:
    """A line as compared: no quote marks or emphasis, folded, single spaces."""
    return " ".join(fold(line.lstrip(" \t>*_")).split())


def referee_thread(
    references: tuple[str, ...], in_reply_to: str, slug: str, domain: str
) -> str | None:
    """None when the mail answers none of the game's mails; else the thread's name or ""."""
    # a thread's root `<game.proposal-301@domain>` or a notice's own `<game.proposal-301.<20
    # hex>@domain>`, which names its thread too (outgoing.thread_message_id)
    pattern = re.compile(
        rf"<{re.escape(slug)}\.([a-z0-9-]+)(?:\.[0-9a-f]{{20}})?@{re.escape(domain)}>", re.I
    )
    found: str | None = None
    for reference in (in_reply_to, *reversed(references)):
        hit = pattern.fullmatch(reference.strip())
        if hit is None:
            continue
        name = hit.group(1).lower()
        if re.fullmatch(r"(proposal|appeal)-[a-z0-9]+", name):
            return name
        found = ""
    return found


def _texts(state: GameState, thread: str) -> list[str]:
    """The texts circulated in `thread` ("" for all of them)."""
    texts: list[str] = []
    if thread.startswith("proposal-") and numerals.is_number(thread[9:]):
        proposal = state.proposal(int(thread[9:]))
        texts += [proposal.text, proposal.old_text] if proposal else []
    elif thread.startswith("appeal-"):
        appeal = state.appeal(thread[7:].upper())
        texts += [appeal.question, appeal.ruling or ""] if appeal else []
    else:
        texts += [t for p in state.proposals for t in (p.text, p.old_text)]
        texts += [t for a in state.appeals for t in (a.question, a.ruling or "")]
        texts += [r.full_text for r in state.rules]
    return texts


def copied(own_words: str, state: GameState, thread: str) -> frozenset[str]:
    """The command-like lines of the circulated texts that stand in `own_words` as part of a
    copy of such a text: next to another line of it (the line above or below, blank lines
    skipped). A command the player typed among their own words is theirs, even when a
    proposal planted the same line (attacker review: a planted `VOTE 301 NO` must not void
    every vote typed in reply); a block the mail program quoted without `>` marks is not."""
    texts = _texts(state, thread)
    commands = frozenset(_command_lines(texts))
    if not commands:
        return frozenset()
    every = {normalise(line) for text in texts for line in _rendered(text)} - {""}
    lines = [normalise(line) for line in own_words.split("\n")]
    filled = [i for i, line in enumerate(lines) if line]
    alone = _alone(texts) if thread else frozenset()
    found: set[str] = set()
    for place, index in enumerate(filled):
        line = lines[index]
        if line not in commands:
            continue
        if line in alone:
            found.add(line)
            continue
        near = [filled[place - 1]] if place > 0 else []
        near += [filled[place + 1]] if place + 1 < len(filled) else []
        if any(lines[n] in every for n in near):
            found.add(line)
    return frozenset(found)


def _rendered(text: str) -> list[str]:
    """A text's lines as written and as the notice's plain part wraps them."""
    return [*text.splitlines(), *wrap(text, WIDTH)]


def _alone(texts: Iterable[str]) -> frozenset[str]:
    """The command lines that are the only line of their text (blank lines aside)."""
    found: set[str] = set()
    for text in texts:
        lines = [normalise(line) for line in text.splitlines()]
        filled = [line for line in lines if line]
        if len(filled) == 1 and match(filled[0]) is not None:
            found.add(filled[0])
    return frozenset(found)


def _command_lines(texts: Iterable[str]) -> Iterable[str]:
    for text in texts:
        for line in text.splitlines():
            cleaned = normalise(line)
            if cleaned and match(cleaned) is not None:
                yield cleaned
