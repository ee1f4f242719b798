"""Proposals checked and adopted: targets, limits, renumbering (103, 107-111, 115, 207, 210).

A proposal's target must exist, be in force, and be mutable unless transmuted (103). Its
adoption must leave at least one mutable rule (115), no more than the cap (210), and a debate
no shorter than the immutable minimum (111, 112); checked at submission and again at adoption.
Adopting takes full effect at once (207) and gives the rule the proposal's number (109).
"""

from __future__ import annotations

import difflib

from referee.core import blocks, changes, labels, mechanics, notices, numerals, outcomes, params
from referee.core.changes import (
    RuleChange,
    RuleChangeKind,
)
from referee.core.model import (
    Amendment,
    GameState,
    HistoryEntry,
    ParameterQuestion,
    Proposal,
    ProposalKind,
    Rule,
    replace,
)
from referee.core.step import AMENDING_KINDS, Refusal, Step
from referee.core.threads import Thread


def diff(proposal: Proposal, old_text: str, label: str) -> str:
    """107: what the proposal changes, as a unified diff of the text."""
    if proposal.kind is ProposalKind.TRANSMUTE:
        return ""
    new = proposal.text if proposal.kind.has_text else ""
    lines = difflib.unified_diff(
        old_text.splitlines(),
        new.splitlines(),
        fromfile=label,
        tofile=f"proposal {proposal.number}",
        lineterm="",
    )
    return "\n".join(lines)


def old_text_of(kind: ProposalKind, rule: Rule | None, amendment: Amendment | None) -> str:
    if rule is None:
        return ""
    if kind in (ProposalKind.AMEND_AMENDMENT, ProposalKind.REPEAL_AMENDMENT) and amendment:
        return amendment.text
    if kind is ProposalKind.ENACT_AMENDMENT:
        return ""
    if kind is ProposalKind.REPEAL:
        return rule.full_text
    return rule.text


PAST = {
    ProposalKind.ENACT: "enacted",
    ProposalKind.REPEAL: "repealed",
    ProposalKind.AMEND: "amended",
    ProposalKind.TRANSMUTE: "transmuted",
    ProposalKind.ENACT_AMENDMENT: "amendment-enacted",
    ProposalKind.AMEND_AMENDMENT: "amendment-amended",
    ProposalKind.REPEAL_AMENDMENT: "amendment-repealed",
}


def find_rule(step: Step, ref: str | int | None) -> Rule:
    """The rule a player named by number, label or path (109); refused if none or several."""
    found = labels.resolve(step.state.rules, ref)
    if found.ambiguous and ref is not None:
        named = tuple(
            {"number": r.number, "label": r.label, "path": r.path} for r in found.candidates
        )
        raise Refusal(outcomes.AmbiguousRule(rule=ref, rules=named))
    if found.rule is None:
        raise Refusal(outcomes.UnknownRule(rule=ref))
    return found.rule


def target_rule(step: Step, number: str | int | None, need_mutable: bool) -> Rule:
    rule = find_rule(step, number)
    if not rule.in_force:
        raise Refusal(outcomes.RuleRepealed(rule=number))
    if need_mutable and not rule.mutable:  # 103: immutable rules cannot be changed so
        raise Refusal(outcomes.RuleImmutable(rule=rule.number))
    return rule


def target_amendment(step: Step, ref: str | None) -> tuple[Rule, Amendment]:
    number, _, seq = (ref or "").partition(".")
    rule_number, seq_number = numerals.number(number), numerals.number(seq)
    if rule_number is None or seq_number is None:
        raise Refusal(outcomes.UnknownAmendment(amendment=(ref or "")[:40]))
    rule = target_rule(step, rule_number, need_mutable=True)
    found = rule.amendment(seq_number)
    if found is None:
        raise Refusal(outcomes.UnknownAmendment(amendment=ref or ""))
    return rule, found


def check_outcome(step: Step, proposal: Proposal) -> None:
    """115 (at least one mutable rule) and 210 (at most N), on submission and adoption: adopt
    the proposal on a scratch copy, and check the rules it leaves, with the cap the rules in
    force after the change set (111, 211) and the counts after it."""
    scratch = Step(step.state, step.now)
    adopt(scratch, proposal)
    check_state_limits(step, scratch.state)


def check_state_limits(step: Step, state: GameState) -> None:
    values = params.effective(state)
    count = state.mutable_count
    cap = values["max_mutable_rules"]
    if count > cap and mechanics.runs(state, mechanics.Mechanic.CAP):  # no cap once 210 is gone
        raise Refusal(outcomes.TooManyMutable(cap=cap, count=count))
    if count < 1:
        raise Refusal(outcomes.NoMutableLeft())
    if values["debate_days"] < values["debate_days_min"]:  # 111, 112: the minimum holds
        raise Refusal(
            outcomes.BadParameter(
                name="debate_days",
                value=str(values["debate_days"]),
                allowed=f">= {values['debate_days_min']} (112)",
                least_days=values["debate_days_min"],
            )
        )


def check_sets(step: Step, kind: ProposalKind, sets: tuple[tuple[str, str], ...]) -> None:
    if not sets:
        return
    if kind in (ProposalKind.REPEAL, ProposalKind.REPEAL_AMENDMENT):
        raise Refusal(outcomes.ParameterNotAllowed(kind=kind.value))
    problem = params.check_sets(sets, step.params())
    if problem is not None:
        if problem.unknown:
            raise Refusal(
                outcomes.UnknownParameter(
                    name=problem.name, value=problem.value, allowed=problem.detail
                )
            )
        raise Refusal(
            outcomes.BadParameter(
                name=problem.name,
                value=problem.value,
                allowed=problem.detail,
                least_days=problem.least_days,
            )
        )


def adopt(step: Step, proposal: Proposal) -> None:
    """207: takes full effect now; 109: the rule takes the proposal's number."""
    n, kind = proposal.number, proposal.kind
    old = step.state.rule_by_identity(proposal.target or 0)
    # 109: a repeal leaves the rule's number as it was; every other change renumbers it
    number = old.number if old is not None and kind is ProposalKind.REPEAL else n
    entry = HistoryEntry(number, PAST[kind], step.now, proposal=n)
    if kind is ProposalKind.ENACT:
        rule = Rule(
            identity=n,
            number=n,
            mutable=True,
            text=proposal.text,  # 107: a proposal gives no title; the rule's number heads it
            parameters=proposal.sets,
            history=(entry,),
        )
        step.state = step.state.with_rule(rule)
        step.record(
            RuleChange(
                RuleChangeKind(kind.value),
                n,
                None,
                n,
                proposal=n,
                parameters=changes.parameter_changes((), proposal.sets),
            )
        )
        blocks.adopted(step, proposal, n)
        return
    assert old is not None
    history = (*old.history, entry)
    seq = proposal.amendment_seq
    if kind is ProposalKind.REPEAL:
        new = replace(old, in_force=False, history=history)
    elif kind is ProposalKind.AMEND:
        new = replace(old, number=n, text=proposal.text, history=history)
    elif kind is ProposalKind.TRANSMUTE:
        new = replace(old, number=n, mutable=not old.mutable, history=history)
    elif kind is ProposalKind.ENACT_AMENDMENT:
        added = Amendment(old.next_amendment_seq, proposal.text)
        history = (*old.history, replace(entry, note=f"{n}.{added.seq}"))
        new = replace(
            old,
            number=n,
            amendments=(*old.amendments, added),
            next_amendment_seq=old.next_amendment_seq + 1,
            history=history,
        )
    elif kind is ProposalKind.AMEND_AMENDMENT:
        amendments = tuple(
            replace(a, text=proposal.text) if a.seq == seq else a for a in old.amendments
        )
        history = (*old.history, replace(entry, note=f"{n}.{seq}"))
        new = replace(old, number=n, amendments=amendments, history=history)
    else:  # REPEAL_AMENDMENT
        amendments = tuple(a for a in old.amendments if a.seq != seq)
        history = (*old.history, replace(entry, note=f"{old.number}.{seq}"))
        new = replace(old, number=n, amendments=amendments, history=history)
    new = replace(new, parameters=params.merge(new.parameters, proposal.sets))
    step.state = step.state.with_rule(new)
    step.record(
        RuleChange(
            RuleChangeKind(kind.value),
            old.identity,
            old.number,
            new.number,
            proposal=n,
            parameters=changes.parameter_changes(old.parameters, new.parameters),
            label=labels.display(old, step.state.rules),
        )
    )
    if kind in AMENDING_KINDS:
        if mechanics.carries(step.state, mechanics.Mechanic.MAJORITY, old):
            step.state = replace(step.state, rule_204_amended=True)
        ask_about_parameters(step, new, proposal)
    blocks.adopted(step, proposal, old.identity)


def ask_about_parameters(step: Step, rule: Rule, proposal: Proposal) -> None:
    """An amendment that says nothing of a parameter its rule carries: the King confirms."""
    said = {name for name, _ in proposal.sets}
    silent = tuple(
        name for name, _ in rule.parameters if name not in said and name != params.PRECEDENCE
    )
    if not silent:
        return
    question = ParameterQuestion(rule.identity, proposal.number, silent)
    step.state = replace(
        step.state, parameter_questions=(*step.state.parameter_questions, question)
    )
    prompt_parameters(step, question)


def prompt_parameters(step: Step, question: ParameterQuestion, previous: str = "") -> None:
    """Ask the King in office about a waiting parameter question; `previous` names the King
    it was put to, when it passes to a new one with the crown (214)."""
    rule = step.state.rule_by_identity(question.rule)
    proposal = step.state.proposal(question.proposal)
    if rule is None or proposal is None:
        return
    step.notify(
        step.to_king(),
        notices.ParameterPrompt(
            rule=rule.number,
            rule_was=proposal.target_number,  # the number it had when proposed (109)
            proposal=proposal.number,
            parameters=[{"name": n, "value": rule.parameter(n)} for n in question.names],
            previous=previous,
        ),
        thread=Thread.parameters(rule.identity, proposal.number),
    )


def recheck(step: Step, proposal: Proposal) -> None:
    """The limits again at adoption: the rules may have changed since submission."""
    rule = step.state.rule_by_identity(proposal.target) if proposal.target else None
    if proposal.kind is not ProposalKind.ENACT:
        if rule is None or not rule.in_force:
            raise Refusal(outcomes.RuleRepealed(rule=proposal.target_number))
        if proposal.kind is not ProposalKind.TRANSMUTE and not rule.mutable:
            raise Refusal(outcomes.RuleImmutable(rule=rule.number))
        if proposal.kind.on_amendment and rule.amendment(proposal.amendment_seq or 0) is None:
            raise Refusal(outcomes.UnknownAmendment(amendment=""))
    check_outcome(step, proposal)


def rule_mutable(step: Step, identity: int | None) -> bool:
    rule = step.state.rule_by_identity(identity) if identity is not None else None
    return rule.mutable if rule is not None else True
