"""Appeals about the referee's own decisions: the facts, the draft ruling, the correction
(rules 212, 108, and the row of the legality table that decided the move).

An APPEAL written in reply to one of the referee's answers is about the decision that answer
gave (`Decided`, kept by the mail layer). The judge's prompt carries the facts (the mail, its
delivery time, the rule and the row of `procedure.TABLE` that decided it) and a draft ruling:

- a command a rule refused (its row, or its handler), or a command the referee accepted, is
  upheld: the draft is `DISMISSED` (the decision stands, for the reasons the rule gives);
- a command refused by one of the referee's own guards, which no rule of the game makes (a
  line that repeats the referee's mail, the limits on mail per day or per message), is
  corrected: the draft is `UPHELD`, since the appeal shows the line was the player's own.

The judge approves the draft with a bare yes, or writes `RULING` as always. Once the players
agree (212), a ruling `UPHELD` on a refused command is carried out where its effects are still
open: the command is decided again now, through the same gate, and counts if the rules allow
it now (a vote while its vote is open, a proposal while it is the proposer's turn). What the
rules no longer allow stays as it was: the ruling is published and nothing is undone (108).
"""

from __future__ import annotations

import json
from typing import Any

from referee.core import codec, notices, outcomes, procedure, view
from referee.core.events import EVERYONE, Command, Outcome
from referee.core.model import Appeal, Decided, GameState, Verdict, replace
from referee.core.step import Step
from referee.core.threads import Thread

# Refusals no rule of the game makes: the referee's own guards (the mail layer's limits and
# its check for lines repeating its own mail). An appeal against one is drafted as upheld.
GUARDS = frozenset(
    {
        outcomes.Reason.QUOTED_NOTICE.value,
        outcomes.Reason.TWO_ANSWERS.value,
        outcomes.Reason.TOO_MANY_COMMANDS.value,
        outcomes.Reason.TOO_MANY_MAILS.value,
        outcomes.Reason.DAILY_LIMIT.value,
    }
)


def command_of(decided: Decided) -> Command | None:
    """The command the decision was about, as the log has it; None when none was read."""
    if not decided.command:
        return None
    event = codec.event_from_data(json.loads(decided.command))
    return event if type(event) in procedure.LEGALITY else None  # type: ignore[return-value]


def draft(decided: Decided) -> Verdict:
    """UPHELD (correct the decision) for a command a guard refused; DISMISSED otherwise."""
    guarded = not decided.ok and decided.code in GUARDS
    return Verdict.UPHELD if guarded and command_of(decided) is not None else Verdict.DISMISSED


def decided_data(state: GameState, appeal: Appeal) -> dict[str, Any]:
    """The facts of the decision and the draft, for the judge's prompt and the ruling."""
    decided = appeal.about
    assert decided is not None
    command = command_of(decided)
    move = procedure.LEGALITY.get(type(command)) if command is not None else None
    sender = state.player(decided.sender)
    return {
        "sender": sender.name if sender is not None else decided.sender,
        "at": decided.at,
        "subject": decided.subject,
        "line": decided.line,
        "code": decided.code,
        "ok": decided.ok,
        "guard": decided.code in GUARDS,
        "row": None
        if move is None
        else {
            "name": move.name,
            "role": move.role.value,
            "stages": [s.value for s in procedure.Stage if s in move.stages],
            "mechanics": [m.value for m in move.grants],
            "note": move.note,
        },
        "draft": appeal.draft.value if appeal.draft is not None else None,
    }


def file_about(appeal: Appeal, decided: Decided) -> Appeal:
    """The appeal made about a decision: its facts and the referee's draft."""
    return replace(appeal, about=decided, draft=draft(decided))


def prompt_judge(step: Step, appeal: Appeal) -> None:
    """Put the facts and the draft to the judge; a bare yes by reply approves the draft."""
    judge = step.state.judge_of(appeal)
    if appeal.about is None or judge is None:
        return
    step.notify(
        (judge,),
        notices.RulingPrompt(
            view.appeal_data(step.state, appeal), decided_data(step.state, appeal)
        ),
        thread=Thread.appeal(appeal.id),
    )


DUE = "due"  # settled, the correction not yet carried out (within the same step)


def mark_due(step: Step, appeal: Appeal) -> None:
    """A settled ruling UPHELD on a refused command: its correction is due in this step."""
    decided = appeal.about
    if decided is None or appeal.verdict is not Verdict.UPHELD or decided.ok:
        return
    if command_of(decided) is not None:
        step.state = step.state.with_appeal(replace(appeal, applied=DUE))


def carry_out_due(step: Step, decide: Any) -> None:
    """Carry out the corrections settled in this step (see `carry_out`)."""
    for appeal in step.state.appeals:
        if appeal.applied == DUE:
            carry_out(step, appeal, decide)


def carry_out(step: Step, appeal: Appeal, decide: Any) -> Appeal:
    """212, 108: a settled ruling that corrects a refusal is applied if still open.

    `decide(step, command)` runs a command through the engine's gate and handlers (the
    machine's, passed in to keep the import graph one-way). Returns the appeal with how the
    correction went ("applied", "closed" or "" when there was nothing to apply)."""
    decided = appeal.about
    if decided is None or appeal.verdict is not Verdict.UPHELD or decided.ok:
        return appeal
    command = command_of(decided)
    if command is None:
        return appeal
    step.state = step.state.with_appeal(replace(appeal, applied="closed"))  # due no more
    trial = Step(step.state, step.now)
    decide(trial, command)
    outcome = trial.effects[0]
    assert isinstance(outcome, Outcome)
    if outcome.ok:
        step.state = trial.state
        for rule_change in trial.changes.rules:
            step.record(rule_change)
        for score_change in trial.changes.scores:
            step.record(score_change)
    applied = replace(appeal, applied="applied" if outcome.ok else "closed")
    step.state = step.state.with_appeal(applied)
    step.notify(
        EVERYONE,
        notices.RulingApplied(
            view.appeal_data(step.state, applied),
            decided_data(step.state, applied),
            applied=outcome.ok,
            code=outcome.code,
            data=dict(outcome.data),
        ),
        thread=Thread.appeal(appeal.id),
    )
    if outcome.ok:
        step.effects.extend(trial.effects[1:])
    return applied
