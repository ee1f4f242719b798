"""The engine's one entry point: `decide(state, event, now)`, and the game's opening (101-215).

Every command passes the legality table of `procedure` (one gate), then goes to the handler of
its concern: proposals (103-112), voting (203-208), turns (201, 202, 209), appeals (212-215),
leaving (114) and queries. Pure: no clock, no I/O; a refusal is an Outcome, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from referee.core import (
    blocks,
    changes,
    labels,
    mechanics,
    notices,
    outcomes,
    params,
    procedure,
    rulings,
    view,
)
from referee.core.adoption import check_sets, check_state_limits, find_rule
from referee.core.appeals import (
    accuse,
    agree,
    crown,
    crown_successor_of,
    give_ruling,
    name_champion,
    open_appeal,
    prompt_champion,
    weigh,
    withdraw_waiting,
)
from referee.core.changes import (
    Changes,
    RuleChange,
    RuleChangeKind,
)
from referee.core.clock import tick
from referee.core.debate import choose_delivery, debate, suggest
from referee.core.events import (
    EVERYONE,
    AcceptOffer,
    Accuse,
    Act,
    Admit,
    Agree,
    AnswerQuestion,
    Archive,
    ArchiveRequest,
    AskToJoin,
    Award,
    ChooseDelivery,
    Command,
    Confirm,
    Crown,
    Debate,
    Enrol,
    Event,
    Extend,
    GiveRuling,
    MoveAddress,
    NameChampion,
    NameWinner,
    OpenAppeal,
    Outcome,
    Propose,
    Query,
    QueryKind,
    Quit,
    Revise,
    SetParameter,
    Suggest,
    Tick,
    Vote,
)
from referee.core.model import (
    GameState,
    HistoryEntry,
    ParameterQuestion,
    Phase,
    ProposalKind,
    ProposalStatus,
    Rule,
    replace,
)
from referee.core.numbering import first_proposal_number
from referee.core.order import rotation
from referee.core.proposals import extend, propose, revise
from referee.core.roster import admit, ask_to_join, enrol, move_address
from referee.core.step import Decision, Refusal, Step
from referee.core.threads import Thread
from referee.core.turns import (
    award,
    check_block_wins,
    end_turn,
    finish,
    name_winner,
    settle_tie,
    start_turn,
)
from referee.core.voting import close_vote, everyone_voted, vote


def command(step: Step, cmd: Command | Enrol) -> None:
    handler = HANDLERS[type(cmd)]
    before = step.state
    try:
        gate(step, cmd)
        done = handler(step, cmd)
        rulings.carry_out_due(step, command)  # 212, 108: a settled correction, if still open
    except Refusal as refusal:  # a refused command changes nothing and says only why
        step.state = before
        step.effects = [Outcome(refusal.payload)]
        step.changes = Changes()
        return
    step.effects.insert(0, Outcome(done))


def gate(step: Step, cmd: Command | Enrol) -> None:
    """The one legality check, from the table in `procedure` (every rule of who and when)."""
    refused = procedure.bar(step.state, cmd)
    if refused is not None:
        raise Refusal(refused)


def quit(step: Step, cmd: Quit) -> outcomes.Accepted:
    me = step.state.player(cmd.sender)
    assert me is not None
    was_turn = step.state.turn_player == cmd.sender
    step.state = step.state.with_player(replace(me, active=False))
    blocks.happen(step, "player.left", {"player": cmd.sender})
    left = outcomes.QuitRecorded(waiting=withdraw_waiting(step, cmd.sender))  # 114, 212
    for open_proposal in step.state.proposals:  # 114: who left no longer votes; JSON = mail
        if open_proposal.status in (ProposalStatus.DEBATE, ProposalStatus.VOTING):
            votes = tuple(v for v in open_proposal.votes if v[0] != cmd.sender)
            if votes != open_proposal.votes:
                step.state = step.state.with_proposal(replace(open_proposal, votes=votes))
    withdrawn = None
    proposal = step.state.current
    if (
        was_turn
        and proposal is not None
        and proposal.status
        in (
            ProposalStatus.DEBATE,
            ProposalStatus.VOTING,
        )
    ):
        withdrawn = proposal.number
        step.state = step.state.with_proposal(
            replace(proposal, status=ProposalStatus.REJECTED, outcome="withdrawn")
        )
    step.notify(EVERYONE, notices.PlayerQuit(player=me.name, withdrawn=withdrawn))
    if not step.state.active_players:
        finish(step, None, "leaving")
        return left
    if step.state.king == cmd.sender or step.state.deposed == cmd.sender:
        crown_successor_of(step, cmd.sender)
    for appeal in step.state.open_appeals:
        if appeal.champion == cmd.sender:  # 212: the King names another Champion
            appeal = replace(appeal, champion=None)
            step.state = step.state.with_appeal(appeal)
            if step.state.judge_of(appeal) is None:
                prompt_champion(step, appeal)
        weigh(step, appeal.id)
    settle_tie(step)
    if step.state.over or step.state.tie:
        return left
    if was_turn and step.state.turn_player == cmd.sender and step.state.phase is not Phase.APPEAL:
        end_turn(step, completed=False)
    elif step.state.phase is Phase.VOTING and everyone_voted(step):
        close_vote(step)
    return left


def query(step: Step, cmd: Query) -> outcomes.Accepted:
    s = step.state
    if cmd.what is QueryKind.STATUS:
        return outcomes.Status(
            **view.status_data(s), waiting_appeals=view.waiting_data(s, cmd.sender)
        )
    if cmd.what is QueryKind.RULES:
        return outcomes.Rules(**view.ruleset_data(s))
    if cmd.what is QueryKind.SCORES:
        return outcomes.Scores(scores=view.scores_data(s))
    if cmd.what is QueryKind.HELP:
        return outcomes.Help()
    rule = find_rule(step, cmd.ref or cmd.number)
    asked = cmd.number if not cmd.ref else rule.number  # a label names the rule as it is
    shown = outcomes.Rule if cmd.what is QueryKind.RULE else outcomes.History
    return shown(asked=asked, rule=view.rule_data(rule, s.rules))


def archive(step: Step, cmd: Archive) -> outcomes.Accepted:
    """ARCHIVE (213): the request is recorded, once a day (UTC) per player, and the service
    attaches the players' mail and the game's config to the reply (`ArchiveRequest`)."""
    today = step.now.astimezone(UTC).date()
    last = step.state.archived_at(cmd.sender)
    if last is not None and last.astimezone(UTC).date() == today:
        tomorrow = datetime(today.year, today.month, today.day, tzinfo=UTC) + timedelta(days=1)
        raise Refusal(outcomes.ArchiveDailyLimit(next=tomorrow))
    kept = tuple((who, at) for who, at in step.state.archives if who != cmd.sender)
    step.state = replace(step.state, archives=(*kept, (cmd.sender, step.now)))
    step.effects.append(ArchiveRequest(cmd.sender))
    return outcomes.ArchiveSent()


def confirm(step: Step, cmd: Confirm) -> outcomes.Accepted:
    rule = labels.resolve(step.state.rules, cmd.ref or cmd.rule).rule
    questions = [q for q in step.state.parameter_questions if rule and q.rule == rule.identity]
    if rule is None or not questions:
        raise Refusal(outcomes.NoParameterQuestion(rule=cmd.ref or cmd.rule))
    step.state = replace(
        step.state,
        parameter_questions=tuple(
            q for q in step.state.parameter_questions if q.rule != rule.identity
        ),
    )
    kept = [{"name": n, "value": rule.parameter(n)} for q in questions for n in q.names]
    return outcomes.ParametersConfirmed(rule=rule.number, parameters=kept)


def set_parameter(step: Step, cmd: SetParameter) -> outcomes.Accepted:
    name = cmd.name.strip().lower()
    asked = [q for q in step.state.parameter_questions if name in q.names]
    if not asked:
        raise Refusal(outcomes.NoParameterQuestion(name=name))
    question = asked[0]
    rule = step.state.rule_by_identity(question.rule)
    assert rule is not None
    try:
        _check_answer(step, rule, name, cmd.value.strip())
    except Refusal as refusal:
        if isinstance(refusal.payload, outcomes.BadParameter):  # the question stays open
            raise Refusal(replace(refusal.payload, question=rule.number)) from None
        raise
    return _settle(step, question, rule, name, cmd)


def _check_answer(step: Step, rule: Rule, name: str, value: str) -> None:
    """The King's value for a parameter of `rule` as the SET lines and the limits allow it."""
    check_sets(step, ProposalKind.AMEND, ((name, value),))
    changed = replace(rule, parameters=params.merge(rule.parameters, ((name, value),)))
    check_state_limits(step, step.state.with_rule(changed))


def _settle(
    step: Step, question: ParameterQuestion, rule: Rule, name: str, cmd: SetParameter
) -> outcomes.Accepted:
    entry = HistoryEntry(rule.number, "parameter", step.now, note=f"{name} = {cmd.value}")
    changed = replace(
        rule,
        parameters=params.merge(rule.parameters, ((name, cmd.value.strip()),)),
        history=(*rule.history, entry),
    )
    rest = tuple(n for n in question.names if n != name)
    questions = tuple(
        (replace(q, names=rest) if q is question else q) for q in step.state.parameter_questions
    )
    step.state = replace(
        step.state.with_rule(changed),
        parameter_questions=tuple(q for q in questions if q.names),
    )
    step.record(
        RuleChange(
            RuleChangeKind.PARAMETER,
            rule.identity,
            rule.number,
            rule.number,
            proposal=question.proposal,
            parameters=changes.parameter_changes(rule.parameters, changed.parameters),
        )
    )
    return outcomes.ParameterSet(rule=rule.number, name=name, value=cmd.value.strip())


def start_game(state: GameState, now: datetime) -> Decision:
    """The opening: the ruleset to every player and the first turn (101, 105, 201, 205)."""
    first = max(state.next_proposal_number, first_proposal_number(state.rules))  # 109
    step = Step(replace(state, next_proposal_number=first), now)
    order = rotation(step.state)
    step.notify(
        EVERYONE,
        notices.GameStarted(
            **view.ruleset_data(step.state),
            example=mechanics.example_rule(step.state),
            first=order[0].name if order else "",
            proposal=first,
        ),
        Thread.ruleset(),
    )
    if order:
        start_turn(step, order[0].email)
    return Decision(replace(step.state, events=step.state.events + 1), tuple(step.effects))


def decide(state: GameState, event: Event, now: datetime) -> Decision:
    """Apply one event at time `now`; return the new state and what must be said to whom."""
    step = Step(state, now)
    if isinstance(event, Tick):
        tick(step)
    else:
        command(step, event)
    check_block_wins(step)  # issue 26: a rule's WIN, checked after every event's effects
    step.publish_changes()
    return Decision(replace(step.state, events=step.state.events + 1), tuple(step.effects))


Handler = Callable[[Step, Any], outcomes.Accepted]
HANDLERS: dict[type, Handler] = {
    Propose: propose,
    Revise: revise,
    Vote: vote,
    OpenAppeal: open_appeal,
    NameChampion: name_champion,
    GiveRuling: give_ruling,
    Agree: agree,
    Accuse: accuse,
    Crown: crown,
    Award: award,
    Extend: extend,
    Quit: quit,
    Confirm: confirm,
    SetParameter: set_parameter,
    NameWinner: name_winner,
    Debate: debate,
    ChooseDelivery: choose_delivery,
    Suggest: suggest,
    Query: query,
    Archive: archive,
    AskToJoin: ask_to_join,
    Admit: admit,
    MoveAddress: move_address,
    Enrol: enrol,
    Act: blocks.act,
    AcceptOffer: blocks.accept,
    AnswerQuestion: blocks.answer,
}
