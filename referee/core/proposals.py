"""Making, circulating, revising and extending proposals (103, 107, 109, 112, 202).

The turn player's proposal is numbered (109), circulated with what it changes (107), and
debated for at least the immutable week (112); the proposer may revise it during the debate and
the King may lengthen the debate.
"""

from __future__ import annotations

from datetime import timedelta
from fractions import Fraction

from referee.core import blocks, notices, outcomes, params, view
from referee.core.adoption import (
    check_outcome,
    check_sets,
    diff,
    old_text_of,
    target_amendment,
    target_rule,
)
from referee.core.events import (
    EVERYONE,
    Extend,
    Propose,
    Revise,
)
from referee.core.interpreter import Value
from referee.core.model import (
    Amendment,
    Phase,
    Proposal,
    ProposalKind,
    ProposalStatus,
    Rule,
    replace,
)
from referee.core.step import DAY, Refusal, Step
from referee.core.threads import Thread


def propose(step: Step, cmd: Propose) -> outcomes.Accepted:
    kind = cmd.kind
    sets = params.normalise_sets(cmd.sets)
    rule: Rule | None = None
    amendment: Amendment | None = None
    if kind is ProposalKind.ENACT and cmd.immutable:
        raise Refusal(outcomes.EnactImmutable())
    if kind in (ProposalKind.AMEND_AMENDMENT, ProposalKind.REPEAL_AMENDMENT):
        rule, amendment = target_amendment(step, cmd.amendment)
    elif kind is not ProposalKind.ENACT:
        target = cmd.ref or cmd.target
        rule = target_rule(step, target, need_mutable=kind is not ProposalKind.TRANSMUTE)
    text = cmd.text.strip()
    if kind.has_text and not text:
        raise Refusal(outcomes.EmptyText())
    if not kind.has_text:
        text = ""
    check_sets(step, kind, sets)
    old_text = old_text_of(kind, rule, amendment)
    p = step.params()
    number = step.state.next_proposal_number  # 109: only proper proposals take a number
    debate_ends = step.now + timedelta(days=params.debate_days(p))  # 112: at least a week
    proposal = Proposal(
        number=number,
        proposer=cmd.sender,
        kind=kind,
        created_at=step.now,
        debate_ends=debate_ends,
        vote_deadline=debate_ends + timedelta(days=p["voting_days"]),
        target=rule.identity if rule else None,
        target_number=rule.number if rule else None,
        amendment_seq=amendment.seq if amendment else None,
        text=text,
        old_text=old_text,
        sets=sets,
    )
    check_outcome(step, proposal)
    step.state = replace(
        step.state.with_proposal(proposal),
        next_proposal_number=number + 1,
        current_proposal=number,
        phase=Phase.DEBATE,
        reminder_at=proposal.vote_deadline - DAY,
    )
    blocks.keep_proposed(step, number, cmd.program if kind.has_text else None)
    words: dict[str, Value] = {"author": cmd.sender, "proposal": Fraction(number)}
    blocks.happen(step, "proposal.made", words)
    circulate(step, proposal)  # 107
    return outcomes.ProposalAccepted(number, proposal.debate_ends, proposal.vote_deadline)


def circulate(step: Step, proposal: Proposal, previous: str | None = None) -> None:
    """107: the proposal to everyone, with what it changes: against the text in force, or
    for a revision (112) against the proposal's previous text."""
    old_text = proposal.old_text if previous is None else previous
    new_text = proposal.text if proposal.kind.has_text else ""
    label = "in force" if previous is None else f"proposal {proposal.number} before"
    payload = notices.ProposalCirculated if previous is None else notices.ProposalRevised
    step.notify(
        EVERYONE,
        payload(
            proposal=view.proposal_data(step.state, proposal),
            diff=diff(proposal, old_text, label),
            old_text="" if proposal.kind is ProposalKind.TRANSMUTE else old_text,
            new_text=new_text,
            proposer=step.name_of(proposal.proposer),
        ),
        thread=Thread.proposal(proposal.number),
    )


def current_for(step: Step, number: int) -> Proposal:
    proposal = step.state.proposal(number)
    if proposal is None:
        raise Refusal(outcomes.UnknownProposal(number=number))
    if proposal.number != step.state.current_proposal or proposal.status not in (
        ProposalStatus.DEBATE,
        ProposalStatus.VOTING,
    ):
        raise Refusal(outcomes.VoteClosed(number=number, status=proposal.status.value))
    return proposal


def revise(step: Step, cmd: Revise) -> outcomes.Accepted:
    proposal = current_for(step, cmd.number)
    if not proposal.kind.has_text:
        raise Refusal(outcomes.NoTextToRevise(number=cmd.number))
    text = cmd.text.strip()
    if not text:
        raise Refusal(outcomes.EmptyText())
    sets = params.normalise_sets(cmd.sets)
    check_sets(step, proposal.kind, sets)
    voided = len(proposal.votes)
    revised = replace(proposal, text=text, sets=sets, votes=(), revisions=proposal.revisions + 1)
    check_outcome(step, revised)
    step.state = step.state.with_proposal(revised)
    blocks.keep_proposed(step, cmd.number, cmd.program)
    # 112: votes cast are void; the diff is against the text they voted on
    circulate(step, revised, previous=proposal.text)
    return outcomes.RevisionAccepted(number=cmd.number, voided=voided)


def extend(step: Step, cmd: Extend) -> outcomes.Accepted:
    proposal = current_for(step, cmd.number or step.state.current_proposal or 0)
    if not 1 <= cmd.days <= 365:
        raise Refusal(outcomes.BadDays(days=cmd.days))
    more = timedelta(days=cmd.days)
    longer = replace(
        proposal,
        debate_ends=proposal.debate_ends + more,
        vote_deadline=proposal.vote_deadline + more,
    )
    reminder = None if longer.reminded else longer.vote_deadline - DAY
    step.state = replace(step.state.with_proposal(longer), reminder_at=reminder)
    step.notify(
        EVERYONE,
        notices.DebateExtended(
            number=longer.number,
            days=cmd.days,
            debate_ends=longer.debate_ends,
            vote_deadline=longer.vote_deadline,
        ),
        thread=Thread.proposal(longer.number),
    )
    return outcomes.DebateExtended(longer.number, longer.debate_ends, longer.vote_deadline)
