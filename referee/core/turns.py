"""Turns, rounds, the King's award, winning and the tie (201, 202, 204, 209, 212).

A turn is propose, debate, vote, award (202); a round ends when every active player has
completed a turn (201), and after `majority_after_rounds` of them an unamended 204 asks only a
majority. The first to reach the winning score wins (209); players level are a tie the King
decides.
"""

from __future__ import annotations

from fractions import Fraction

from referee.core import blocks, mechanics, notices, outcomes, view
from referee.core.changes import (
    RuleChange,
    RuleChangeKind,
    ScoreCause,
    ScoreChange,
)
from referee.core.events import (
    EVERYONE,
    Award,
    NameWinner,
    Notice,
)
from referee.core.interpreter import Value
from referee.core.model import (
    Adoption,
    HistoryEntry,
    Phase,
    ProposalStatus,
    replace,
)
from referee.core.order import player_key, rotation, turn_order
from referee.core.step import DAY, Refusal, Step
from referee.core.threads import Thread


def start_turn(step: Step, email: str) -> None:
    step.state = replace(
        step.state,
        phase=Phase.PROPOSE,
        turn_player=email,
        turn_started_at=step.now,
        current_proposal=None,
        reminder_at=step.now + DAY,
    )
    step.notify(
        EVERYONE,
        notices.TurnStarted(
            player=step.name_of(email),
            email=email,
            round=step.state.rounds_completed + 1,
            example=mechanics.example_rule(step.state),
        ),
    )
    blocks.happen(step, "turn.started", {"player": email})


def end_turn(step: Step, completed: bool) -> None:
    """The turn is over: count the round (201, 204), then the next turn unless held (212)."""
    if step.state.turn_player is not None:
        blocks.happen(step, "turn.ended", {"player": step.state.turn_player})
    s = step.state
    current = s.turn_player
    taken = s.turns_taken
    if completed and current is not None and current not in taken:
        taken = (*taken, current)
    step.state = replace(s, turns_taken=taken, reminder_at=None)
    active = {p.email for p in rotation(step.state)}
    if active and active <= set(taken):
        step.state = replace(
            step.state, turns_taken=(), rounds_completed=step.state.rounds_completed + 1
        )
        maybe_switch_to_majority(step)
    next_turn_or_hold(step)


def next_turn_or_hold(step: Step) -> None:
    if step.state.over:
        return
    if step.state.open_appeals:  # 212: the next turn waits for a settlement
        step.state = replace(step.state, phase=Phase.APPEAL, reminder_at=None)
        return
    upcoming = player_after(step, step.state.turn_player)
    if upcoming is None:
        step.state = replace(step.state, phase=Phase.OVER, reminder_at=None)
        return
    start_turn(step, upcoming)


def player_after(step: Step, email: str | None) -> str | None:
    order = rotation(step.state)
    if not order:
        return None
    if email is None:
        return order[0].email
    who = step.state.player(email)
    if who is None:
        return order[0].email
    mine = player_key(who)
    for p in order:
        if player_key(p) > mine:
            return p.email
    return order[0].email  # wrap round: a new round begins


def maybe_switch_to_majority(step: Step) -> None:
    """204: unamended by the end of the second full round, it asks only a majority. A rule
    that SETs `majority_after_rounds` and prevails over 204 (211) decides instead, from the
    moment it is adopted (207), and the mail names it, not 204."""
    s = step.state
    if s.adoption is Adoption.MAJORITY:
        return
    seed = mechanics.owner(s, mechanics.Mechanic.MAJORITY)
    rule = mechanics.deciding_rule(s, mechanics.Mechanic.MAJORITY)
    if rule is None:  # 204 repealed, no rule says it: the adoption rule stays as it was
        return
    prevailing = seed is None or rule.identity != seed.identity
    if s.rule_204_amended and not prevailing:  # 204 amended in time: no switch
        return
    if s.rounds_completed < step.params()["majority_after_rounds"]:
        return
    entry = HistoryEntry(rule.number, "majority", step.now, note=f"round {s.rounds_completed}")
    step.state = replace(s, adoption=Adoption.MAJORITY).with_rule(
        replace(rule, history=(*rule.history, entry))
    )
    decided, over = mechanics.adoption_citations(step.state)
    step.notify(
        EVERYONE,
        notices.MajorityNow(
            rounds=step.state.rounds_completed,
            dissent=mechanics.runs(step.state, mechanics.Mechanic.DISSENT),
            decided=decided,
            over=over,
        ),
    )
    step.record(RuleChange(RuleChangeKind.MAJORITY, rule.identity, rule.number, rule.number))


def prompt_award(step: Step, reminder: bool = False) -> None:
    proposal = step.state.current
    p = step.params()
    payload = notices.AwardReminder if reminder else notices.AwardPrompt
    step.notify(
        step.to_king(),
        payload(
            player=step.name_of(step.state.turn_player),
            proposal=proposal.number if proposal else None,
            adopted=proposal.status is ProposalStatus.ADOPTED if proposal else False,
            low=p["award_min"],
            high=p["award_max"],
        ),
        thread=Thread.award(proposal.number if proposal else None),
    )


def award(step: Step, cmd: Award) -> outcomes.Accepted:
    p = step.params()
    if not p["award_min"] <= cmd.points <= p["award_max"]:
        raise Refusal(outcomes.AwardOutOfRange(low=p["award_min"], high=p["award_max"]))
    email = step.state.turn_player
    player = step.state.player(email) if email else None
    assert player is not None
    step.state = step.state.with_player(replace(player, score=player.score + cmd.points))
    current = step.state.current_proposal
    step.record(ScoreChange(player.name, player.email, cmd.points, ScoreCause.AWARD, current))
    words: dict[str, Value] = {"player": player.email, "amount": Fraction(cmd.points)}
    blocks.happen(step, "award.given", words)  # only the King's award fires it
    check_winner(step)
    if not step.state.over and not step.state.tie:
        end_turn(step, completed=True)
    return outcomes.AwardRecorded(points=cmd.points, player=player.name)


def check_winner(step: Step) -> None:
    """209: the first to reach the winning score wins; several at once, the King decides."""
    target = step.params()["winning_score"]
    crossing = [p for p in turn_order(step.state) if p.score >= target]
    if len(crossing) == 1:
        finish(step, crossing[0].email, "winning")
    elif len(crossing) > 1:
        emails = tuple(p.email for p in crossing)
        step.state = replace(step.state, tie=emails, reminder_at=None)
        step.notify(  # the table learns the game waits, and for whom (phase `tie`)
            EVERYONE,
            notices.Tie(
                players=[{"name": p.name, "score": p.score} for p in crossing],
                target=target,
                king=step.name_of(step.state.king),
            ),
        )
        prompt_tie(step)


def prompt_tie(step: Step) -> None:
    crossing = [p for p in turn_order(step.state) if p.email in step.state.tie]
    step.notify(
        step.to_king(),
        notices.TiePrompt(
            players=[{"name": p.name, "score": p.score} for p in crossing],
            target=step.params()["winning_score"],
        ),
        thread=Thread.tie(),
    )


def settle_tie(step: Step) -> None:
    """209 with 114 and 213: a tie loses who left or fell below the line; one left wins."""
    s = step.state
    if not s.tie or s.over:
        return
    target = step.params()["winning_score"]
    level = tuple(
        e for e in s.tie if (p := s.player(e)) is not None and p.active and p.score >= target
    )
    if level == s.tie:
        return
    step.state = replace(s, tie=level)
    if len(level) == 1:
        finish(step, level[0], "winning")
    elif not level:  # nobody is over the line any more: the turn goes on where it stood
        turn_player = s.player(s.turn_player or "")
        if s.phase is Phase.AWARD:  # the award was given: the turn is over
            end_turn(step, completed=True)
        elif turn_player is None or not turn_player.active:
            end_turn(step, completed=False)
        else:  # the vote was closed: the King's award is next
            step.state = replace(step.state, phase=Phase.AWARD, reminder_at=step.now + DAY)
            prompt_award(step)


def check_block_wins(step: Step) -> None:
    """Issue 26: after every event, a rule's `WIN who WHEN cond` that holds ends the game,
    the rule first in precedence deciding (211); the notice cites that rule."""
    s = step.state
    if s.mechanics is None or s.over or s.tie or not step.block_winners:
        return
    identity, email = step.block_winners[0]
    rule = s.rule_by_identity(identity)
    player = s.player(email)
    if rule is None or player is None:
        return
    step.state = replace(s, phase=Phase.OVER, winner=email, tie=(), reminder_at=None)
    cites = {**mechanics.citations(step.state), "block": mechanics.cite_rule(rule)}
    payload = notices.Winner(
        winner=player.name, score=player.score, rule="block", scores=view.scores_data(step.state)
    )
    step.effects.append(Notice(EVERYONE, payload, None, cites))


def finish(step: Step, winner: str | None, rule: str) -> None:
    step.state = replace(step.state, phase=Phase.OVER, winner=winner, tie=(), reminder_at=None)
    player = step.state.player(winner) if winner else None
    step.notify(
        EVERYONE,
        notices.Winner(
            winner=player.name if player else "",
            score=player.score if player else 0,
            rule=rule,
            scores=view.scores_data(step.state),
        ),
    )


def name_winner(step: Step, cmd: NameWinner) -> outcomes.Accepted:
    chosen = step.resolve(cmd.who)
    if chosen.email not in step.state.tie:
        raise Refusal(outcomes.NotInTie(who=chosen.name))
    finish(step, chosen.email, "winning")
    return outcomes.WinnerNamed(winner=chosen.name)
