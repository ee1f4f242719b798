"""The clock: deadlines and reminders fired by Tick events (112, 202, 203, 212, 213).

The debate's end opens the vote (202 (3)); the vote's deadline closes it (203); reminders go to
the turn player, the King and the voters; the day's debate goes to who asked for a digest
(112); a deposed King is reminded to crown a successor (213); at the turn of a UTC day the
appeals that waited for it open (212). `next_deadline` says when the caller must send the next
Tick, and `catch_up` when a referee that was off fires it; `closed_at` what a Tick fired at a
given time closed (a mail read after it is told, 203, 213). `utc` and `tomorrow` are the
desk's arithmetic of times.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, datetime

from referee.core import blocks, notices
from referee.core.appeals import crown_due, crown_successor_of, open_waiting
from referee.core.debate import send_digest
from referee.core.events import (
    EVERYONE,
)
from referee.core.model import (
    GameState,
    Phase,
    ProposalStatus,
    replace,
)
from referee.core.step import DAY, Step, day_start
from referee.core.threads import Thread
from referee.core.turns import prompt_award
from referee.core.voting import close_vote, everyone_voted, missing_voters


def next_deadline(state: GameState) -> datetime | None:
    """When the next Tick is due, or None when nothing waits on the clock."""
    times: list[datetime] = [state.digest_at] if state.digest_at is not None else []  # 112
    if state.waiting_appeals:  # 212: the next day an appeal waits for
        times.append(min(w.opens_at for w in state.waiting_appeals))
    if state.over:
        return min(times) if times else None
    every = blocks.next_edge(state)  # issue 26: the rules' EVERY statements
    if every is not None:
        times.append(every)
    if state.deposed_at is not None and state.crown_reminder_at is not None:  # 213
        times.append(min(state.crown_reminder_at, crown_due(state)))
    if state.tie:
        return min(times) if times else None
    if state.reminder_at is not None:
        times.append(state.reminder_at)
    current = state.current
    if current is not None:
        if state.phase is Phase.DEBATE:
            times.append(current.debate_ends)
        elif state.phase is Phase.VOTING:
            times.append(current.vote_deadline)
    return min(times) if times else None


class Closed(enum.StrEnum):
    """What a deadline closes."""

    DEBATE = "debate"  # 202 (3): the vote opens
    VOTE = "vote"  # 203


@dataclass(frozen=True)
class Passed:
    """A deadline that closed the debate or the vote on proposal `number` at `at`."""

    closed: Closed
    number: int
    at: datetime


def closed_at(state: GameState, at: datetime) -> Passed | None:
    """What the Tick fired at `at` closed, read from any state after it: the debate on the
    proposal whose debate ended then and is over, or the vote on the proposal whose vote
    deadline it was and is decided (a real deadline fires at its own time, never later:
    `catch_up`). None for a Tick that closed neither (a reminder, a digest, the crown
    passing on)."""
    for proposal in reversed(state.proposals):
        if proposal.debate_ends == at and proposal.status is not ProposalStatus.DEBATE:
            return Passed(Closed.DEBATE, proposal.number, at)
        decided = proposal.status in (ProposalStatus.ADOPTED, ProposalStatus.REJECTED)
        if proposal.vote_deadline == at and decided:
            return Passed(Closed.VOTE, proposal.number, at)
    return None


def tick(step: Step) -> None:
    send_digest(step)
    crown_deadline(step)
    open_waiting(step)
    if not step.state.over:
        blocks.clock(step)
    s = step.state
    if s.over or s.tie:
        return
    proposal = s.current
    if s.phase is Phase.DEBATE and proposal is not None and step.now >= proposal.debate_ends:
        voting = replace(proposal, status=ProposalStatus.VOTING)
        step.state = replace(s.with_proposal(voting), phase=Phase.VOTING)
        if everyone_voted(step):  # no "vote now" when the vote closes at once
            close_vote(step)
        else:
            step.notify(
                EVERYONE,
                notices.DebateEnded(
                    number=proposal.number,
                    vote_deadline=proposal.vote_deadline,
                    missing=missing_voters(step),
                ),
                thread=Thread.proposal(proposal.number),
            )
    elif s.phase is Phase.VOTING and proposal is not None and step.now >= proposal.vote_deadline:
        close_vote(step)
    remind(step)


def remind(step: Step) -> None:
    s = step.state
    if s.reminder_at is None or step.now < s.reminder_at or s.over:
        return
    following = s.reminder_at
    while following <= step.now:
        following += DAY
    if s.phase is Phase.PROPOSE and s.turn_player:
        step.state = replace(s, reminder_at=following)
        step.notify(
            (s.turn_player,),
            notices.TurnReminder(player=step.name_of(s.turn_player), since=s.turn_started_at),
        )
    elif s.phase is Phase.AWARD:
        step.state = replace(s, reminder_at=following)
        prompt_award(step, reminder=True)
    elif s.phase in (Phase.DEBATE, Phase.VOTING) and s.current is not None:
        proposal = replace(s.current, reminded=True)
        step.state = replace(s.with_proposal(proposal), reminder_at=None)
        missing = missing_voters(step)
        if missing:
            step.notify(
                EVERYONE,
                notices.VoteReminder(
                    number=proposal.number, vote_deadline=proposal.vote_deadline, missing=missing
                ),
                thread=Thread.proposal(proposal.number),
            )
    else:
        step.state = replace(s, reminder_at=None)


def crown_deadline(step: Step) -> None:
    """213: remind the deposed King daily; when `crown_days` pass, the crown passes on."""
    s = step.state
    if s.over or s.deposed is None or s.deposed_at is None or s.crown_reminder_at is None:
        return
    due = crown_due(s)
    if step.now >= due:
        crown_successor_of(step, s.deposed, rule="deposition")
        return
    if step.now < s.crown_reminder_at:
        return
    following = s.crown_reminder_at
    while following <= step.now:
        following += DAY
    step.state = replace(s, crown_reminder_at=following)
    accusations = [a for a in s.appeals if a.accused == s.deposed]
    step.notify(
        (s.deposed,),
        notices.CrownPrompt(reminder=True, due=due),
        thread=Thread.appeal(accusations[-1].id) if accusations else None,
    )


def catch_up(state: GameState, due: datetime, now: datetime) -> datetime:
    """When to fire the deadline due at `due`, `now` being later (112, 213).

    A deadline that only repeats daily reminders is fired at the latest repetition of any of
    them before `now` and before the next real deadline (debate end, vote deadline, the crown
    passing on): a referee that was off for days sends each kind of reminder once, the latest,
    not one a day.
    """
    crown = crown_due(state) if state.deposed_at and state.crown_reminder_at else None
    real = next_deadline(replace(state, reminder_at=None, crown_reminder_at=crown))
    if real is not None and real <= due:
        return due
    at = due
    daily = [state.crown_reminder_at if crown else None, None if state.tie else state.reminder_at]
    for first in (r for r in daily if r is not None and r <= now):
        latest = first + (now - first) // DAY * DAY
        while real is not None and latest >= real:
            latest -= DAY
        at = max(at, latest)
    return at


def utc(at: datetime) -> datetime:
    """`at` in UTC; a naive time is taken to be UTC already."""
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def tomorrow(at: datetime) -> datetime:
    """Midnight UTC after `at`: when the daily limits start again."""
    return day_start(at) + DAY
