"""The desk's one door to the store: what a mail's unit of work writes and looks up (205, 212, 213).

Every call the desk makes into the store's unit of work for an inbound mail stands here, so
that a change of the store's interface is made in one place: the letters queued in the order
the desk made them (`post`), the decisions kept for an APPEAL in reply (`keep_answer`), and
what the reply says of a mail read late (`late`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from referee.core import clock
from referee.core.model import GameState
from referee.desk.letters import Letter, answer_token
from referee.mail.parse import InboundMail
from referee.store.store import UnitOfWork

# A mail that takes effect this much or more after its delivery (read after a later event was
# logged) is told so in its reply; a smaller gap is the clocks' grain, not worth a word.
LATE = timedelta(seconds=1)


def post(work: UnitOfWork, letters: Sequence[Letter], at: datetime) -> int:
    """Queue the rendered letters in the outbox, in order; how many were made (a replay for
    the state alone counts letters it does not render)."""
    for letter in letters:
        if letter.raw is not None:
            work.enqueue(letter.message_id, letter.recipient, letter.kind, letter.raw, at)
    return len(letters)


def record(
    work: UnitOfWork, mail: InboundMail, at: datetime, status: str, note: str, commands: int
) -> None:
    """Write the mail's inbound row: its status, a note of why, how many commands it held."""
    work.record_inbound(mail, at, status, note, commands)


def keep_answer(
    work: UnitOfWork, mail: InboundMail, at: datetime, facts: list[dict[str, Any]]
) -> None:
    """Keep the decisions of this mail under its answer's token, for an APPEAL in reply."""
    if facts:
        kept = {"sender": mail.sender, "subject": mail.subject, "at": at.isoformat()}
        text = json.dumps({**kept, "decisions": facts}, sort_keys=True)
        work.keep_answer(answer_token(mail), mail.sender, text, at)


def late(work: UnitOfWork, at: datetime, state: GameState) -> dict[str, Any] | None:
    """For the reply to a mail that took effect `LATE` or more after it was delivered (it
    was read only after later events had been logged): both times, and those events, from
    the chain, so a replay says the same: each deadline that closed a debate or a vote
    (`clock.closed_at`), then how many others there were and when the last was."""
    delivered = work.delivered
    if delivered is None or at - delivered < LATE:
        return None
    reasons: list[dict[str, Any]] = []
    others: list[datetime] = []
    for kind, when in work.links_after(delivered):
        passed = clock.closed_at(state, when) if kind == "tick" else None
        if passed is None:
            others.append(when)
        else:
            reasons.append({"what": passed.closed.value, "number": passed.number, "at": when})
    if others or not reasons:  # an operator's change of the roster is logged, not chained
        reasons.append({"what": "events", "count": len(others) or 1, "at": (others or [at])[-1]})
    return {"delivered": delivered, "at": at, "reasons": reasons}
