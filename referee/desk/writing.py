"""The desk's one door to the store: what a mail's unit of work writes and looks up (205, 212, 213).

Every call the desk makes into the store's unit of work for an inbound mail stands here, so
that a change of the store's interface is made in one place. A player's mail is written once,
after it is decided (`decided`): the requests it made and their confirmation mails
(`requests`), its inbound row, its events, the decisions kept for an APPEAL in reply
(`keep_answer`); a mail refused whole by `refused`. The letters are queued in the order the
desk made them (`post`); `late` is what the reply says of a mail read late.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from referee.core import clock, codec, engine
from referee.core.events import Reason, Suggest
from referee.core.model import GameState
from referee.desk.checks import MailRefusal
from referee.desk.letters import Letter, answer_token
from referee.desk.run import Run
from referee.mail.parse import InboundMail
from referee.store.store import Pending, UnitOfWork
from referee.store.tables import InboundStatus

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


@dataclass(frozen=True)
class Asked:
    """A request to join or to move made while deciding, and the mail asking to confirm it."""

    request: Pending
    letter: Letter


def requests(work: UnitOfWork, asked: Sequence[Asked], at: datetime) -> None:
    """Write the requests made while deciding, each with the mail asking for its confirmation."""
    for made in asked:
        work.add_pending(made.request, at)
        post(work, [made.letter], at)


def decided(work: UnitOfWork, run: Run, asked: Sequence[Asked]) -> GameState:
    """Write what deciding a player's mail made, once it is decided: the requests and their
    confirmation mails, the inbound row, the events in order, the votes kept for a bare yes
    (or used by one), the decisions kept for an APPEAL in reply. The state after them."""
    said, mail, at, state = run.said, run.mail, run.at, run.state
    requests(work, asked, at)
    note = "" if said.lines or run.votes else Reason.NO_COMMAND.value
    work.record_inbound(mail, at, InboundStatus.PROCESSED, note, len(said.lines))
    for payload in run.events:
        work.append_event(payload, at, mail.message_id)
    if run.votes or said.confirmed:  # kept for a bare yes, or used by one
        kept = Suggest(mail.sender, "\n".join(run.votes))
        state = engine.decide(state, kept, at).state
        work.append_event(codec.event_to_data(kept), at, mail.message_id)
    keep_answer(work, mail, at, run.facts)
    return state


def refused(work: UnitOfWork, mail: InboundMail, at: datetime, refusal: MailRefusal) -> None:
    """Write a mail a check of `checks.MAIL_CHECKS` refused whole: its row, its decisions."""
    work.record_inbound(mail, at, InboundStatus.REFUSED, refusal.note, refusal.counted)
    keep_answer(work, mail, at, list(refusal.facts))


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
