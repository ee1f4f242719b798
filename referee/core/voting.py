"""Votes, the close of the vote, and the dissent bonus (203, 204, 206, 208, 110).

A later vote replaces an earlier one (208); the vote closes when the debate is over and everyone
has voted or the voting days have passed (203); unanimity, then majority (204), unanimity always
for an immutable rule's transmutation (110); dissenters of a change adopted without unanimity
gain the bonus (206).
"""

from __future__ import annotations

from fractions import Fraction

from referee.core import blocks, mechanics, notices, outcomes, view
from referee.core.adoption import adopt, recheck, rule_mutable
from referee.core.changes import (
    Changes,
    ScoreCause,
    ScoreChange,
    changes_data,
)
from referee.core.events import (
    EVERYONE,
    Vote,
)
from referee.core.interpreter import Value
from referee.core.model import (
    Adoption,
    Phase,
    ProposalKind,
    ProposalStatus,
    replace,
)
from referee.core.order import turn_order
from referee.core.proposals import current_for
from referee.core.step import DAY, Refusal, Step
from referee.core.threads import Thread
from referee.core.turns import check_winner, maybe_switch_to_majority, prompt_award


def vote(step: Step, cmd: Vote) -> outcomes.Accepted:
    proposal = current_for(step, cmd.number)
    if step.state.player(cmd.sender) not in step.state.voters_on(proposal):  # joined since
        raise Refusal(outcomes.NotAVoter(number=proposal.number))
    before = proposal.vote_of(cmd.sender)
    votes = (*tuple(v for v in proposal.votes if v[0] != cmd.sender), (cmd.sender, cmd.yes))
    step.state = step.state.with_proposal(replace(proposal, votes=votes))
    recorded = outcomes.VoteRecorded if before is None else outcomes.VoteReplaced
    words: dict[str, Value] = {
        "voter": cmd.sender,
        "vote": cmd.yes,
        "author": proposal.proposer,
        "proposal": Fraction(proposal.number),
    }
    blocks.happen(step, "vote.cast", words)
    if step.state.phase is Phase.VOTING and everyone_voted(step):
        close_vote(step)
    return recorded(number=cmd.number, yes=cmd.yes)


def everyone_voted(step: Step) -> bool:
    proposal = step.state.current
    if proposal is None:
        return False
    voted = {who for who, _ in proposal.votes}
    return all(p.email in voted for p in step.state.voters_on(proposal))


def close_vote(step: Step) -> None:
    """203: publish who voted how; 204/110: adopted or not; 206: dissenters' bonus."""
    proposal = step.state.current
    assert proposal is not None
    voters = step.state.voters_on(proposal)  # 203: who had joined when it was circulated
    ballots = {who: yes for who, yes in proposal.votes if step.state.player(who) in voters}
    yes = sum(1 for v in ballots.values() if v)
    unanimous = bool(voters) and yes == len(voters)
    majority = yes * 2 > len(voters)
    transmuting_immutable = proposal.kind is ProposalKind.TRANSMUTE and not rule_mutable(
        step, proposal.target
    )
    if transmuting_immutable or step.state.adoption is Adoption.UNANIMITY:
        passed, needed = unanimous, "unanimity"  # 110, 204
    else:
        passed, needed = majority, "majority"
    decided, over = mechanics.adoption_citations(step.state, transmuting_immutable)
    outcome = "passed" if passed else "failed"
    if passed:
        try:
            recheck(step, proposal)
        except Refusal as refusal:
            passed, outcome = False, refusal.reason.value
    status = ProposalStatus.ADOPTED if passed else ProposalStatus.REJECTED
    closed = replace(proposal, status=status, outcome=outcome)
    step.state = replace(step.state.with_proposal(closed), reminder_at=None)
    before, mark = step.changes, len(step.effects)
    if not passed:
        words: dict[str, Value] = {"author": closed.proposer, "proposal": Fraction(closed.number)}
        blocks.happen(step, "proposal.rejected", words)
    if passed:
        adopt(step, closed)
        maybe_switch_to_majority(step)  # 207: a rule that prevails over 204 acts at once
        # 206: only when a change could pass without unanimity, and while a rule grants it
        if not unanimous and mechanics.runs(step.state, mechanics.Mechanic.DISSENT):
            dissent_bonus(step, ballots, closed.number)
    made = Changes(
        step.changes.rules[len(before.rules) :], step.changes.scores[len(before.scores) :]
    )
    rows = [
        {
            "name": p.name,
            "email": p.email,
            "vote": "yes" if ballots.get(p.email) else "no" if p.email in ballots else "abstain",
        }
        for p in turn_order(step.state)
        if p.email in {v.email for v in voters}  # by address: the bonus has moved the scores
    ]
    step.notify(
        EVERYONE,
        notices.VoteResult(
            proposal=view.proposal_data(step.state, closed),
            adopted=passed,
            outcome=outcome,
            needed=needed,
            yes=yes,
            no=len(voters) - yes,
            ballots=rows,
            decided=decided,
            over=over,
            changes=changes_data(
                made, step.state.current_number
            ),  # the rule it changed and every score it moved
        ),
        thread=Thread.proposal(closed.number),
    )
    step.effects.insert(mark, step.effects.pop())  # the result before what adoption asks
    if passed:
        check_winner(step)
    if step.state.over or step.state.tie:
        return
    step.state = replace(step.state, phase=Phase.AWARD, reminder_at=step.now + DAY)
    prompt_award(step)


def dissent_bonus(step: Step, ballots: dict[str, bool], number: int) -> None:
    """206: who voted against a change adopted without unanimity gains the bonus."""
    bonus = step.params()["dissent_bonus"]
    for p in turn_order(step.state):
        if ballots.get(p.email) is False and bonus:
            step.state = step.state.with_player(replace(p, score=p.score + bonus))
            step.record(
                ScoreChange(p.name, p.email, bonus, ScoreCause.DISSENT_BONUS, proposal=number)
            )


def missing_voters(step: Step) -> list[str]:
    proposal = step.state.current
    if proposal is None:
        return []
    voted = {who for who, _ in proposal.votes}
    voters = step.state.voters_on(proposal)
    return [p.name for p in turn_order(step.state) if p.email not in voted and p in voters]
