"""The rules engine: `decide(state, event, now) -> Decision(state, effects)`, rules 101-215.

Pure: no clock, no I/O. Time enters as the `now` of each event; deadlines are fired by Tick
events that the caller sends at `next_deadline(state)`. A refused command is an Outcome with a
reason code, never an exception.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from referee.core import changes, labels, params, procedure, view
from referee.core.changes import (
    Changes,
    RuleChange,
    RuleChangeKind,
    ScoreCause,
    ScoreChange,
    changes_data,
)
from referee.core.events import (
    EVERYONE,
    Accuse,
    Agree,
    Award,
    Command,
    Confirm,
    Crown,
    Done,
    Effect,
    Event,
    Extend,
    GiveRuling,
    NameChampion,
    NameWinner,
    Notice,
    NoticeKind,
    OpenAppeal,
    Outcome,
    Propose,
    Query,
    QueryKind,
    Quit,
    Reason,
    Revise,
    SetParameter,
    Tick,
    Vote,
)
from referee.core.model import (
    Adoption,
    Amendment,
    Appeal,
    AppealKind,
    AppealStatus,
    GameState,
    HistoryEntry,
    ParameterQuestion,
    Phase,
    Player,
    Proposal,
    ProposalKind,
    ProposalStatus,
    Rule,
    Verdict,
)
from referee.core.numbering import first_proposal_number
from referee.core.order import collation_key, player_key, turn_order
from referee.core.threads import Thread

DAY = timedelta(days=1)
RULE_ADOPTION = 204  # identity of the rule that turns unanimity into majority
AMENDING_KINDS = (
    ProposalKind.AMEND,
    ProposalKind.ENACT_AMENDMENT,
    ProposalKind.AMEND_AMENDMENT,
    ProposalKind.REPEAL_AMENDMENT,
)


@dataclass(frozen=True)
class Decision:
    state: GameState
    effects: tuple[Effect, ...]


class Refusal(Exception):
    """Internal: unwinds a handler that refuses; turned into an Outcome before returning."""

    def __init__(self, reason: Reason, **data: Any) -> None:
        super().__init__(reason.value)
        self.reason = reason
        self.data = data


# --- helpers usable from outside --------------------------------------------------------------


def next_deadline(state: GameState) -> datetime | None:
    """When the next Tick is due, or None when nothing waits on the clock."""
    if state.over:
        return None
    times: list[datetime] = []
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


def crown_due(state: GameState) -> datetime:
    """213, 214: when the crown passes on if the deposed King has not chosen a successor."""
    assert state.deposed_at is not None
    return state.deposed_at + timedelta(days=params.effective(state)["crown_days"])


def find_player(state: GameState, who: str) -> Player | None:
    """A player by email, full name, surname or first name (case and accents ignored)."""
    wanted = who.strip().strip("<>").casefold()
    for p in state.players:
        if p.email == wanted:
            return p
    key = collation_key(who)
    if not key:
        return None
    for attr in ("name", "surname"):
        matches = [p for p in state.players if collation_key(getattr(p, attr)) == key]
        if len(matches) == 1:
            return matches[0]
    firsts = [p for p in state.players if collation_key(p.name.split()[0]) == key]
    return firsts[0] if len(firsts) == 1 else None


def start_game(state: GameState, now: datetime) -> Decision:
    """The opening: the ruleset to every player and the first turn (101, 105, 201, 205)."""
    first = first_proposal_number(state.rules, state.next_proposal_number)  # 109: no collision
    step = _Step(replace(state, next_proposal_number=first), now)
    step.notify(NoticeKind.GAME_STARTED, EVERYONE, **view.ruleset_data(step.state))
    order = turn_order(step.state)
    if order:
        step.start_turn(order[0].email)
    return Decision(replace(step.state, events=step.state.events + 1), tuple(step.effects))


def decide(state: GameState, event: Event, now: datetime) -> Decision:
    """Apply one event at time `now`; return the new state and what must be said to whom."""
    step = _Step(state, now)
    if isinstance(event, Tick):
        step.tick()
    else:
        step.command(event)
    step.publish_changes()
    return Decision(replace(step.state, events=step.state.events + 1), tuple(step.effects))


# --- the step: one event's worth of changes ---------------------------------------------------


class _Step:
    def __init__(self, state: GameState, now: datetime) -> None:
        self.state = state
        self.now = now
        self.effects: list[Effect] = []
        self.changes = Changes()

    # ----- plumbing ---------------------------------------------------------------------------

    def notify(
        self, kind: NoticeKind, to: tuple[str, ...], thread: Thread | None = None, **data: Any
    ) -> None:
        if to:
            self.effects.append(Notice(kind, to, data, thread))

    def to_king(self) -> tuple[str, ...]:
        return (self.state.king,) if self.state.king else ()

    def params(self) -> dict[str, int]:
        return params.effective(self.state)

    def record(self, change: RuleChange | ScoreChange) -> None:
        """205: a change to the rules or the scores, for the step's one ruleset mail."""
        self.changes = self.changes.plus(change)

    def publish_changes(self) -> None:
        """205: one ruleset-and-scores mail per step, opening with what changed."""
        if self.changes:
            self.notify(
                NoticeKind.RULESET,
                EVERYONE,
                changes=changes_data(self.changes),
                **view.ruleset_data(self.state),
            )
            self.changes = Changes()

    def command(self, cmd: Command) -> None:
        handler = _HANDLERS[type(cmd)]
        before = self.state
        try:
            self.gate(cmd)
            done, data = handler(self, cmd)
        except Refusal as refusal:  # a refused command changes nothing and says only why
            self.state = before
            self.effects = [Outcome(False, refusal.reason.value, refusal.data)]
            self.changes = Changes()
            return
        self.effects.insert(0, Outcome(True, done.value, data))

    def gate(self, cmd: Command) -> None:
        """The one legality check, from the table in `procedure` (every rule of who and when)."""
        refused = procedure.bar(self.state, cmd)
        if refused is not None:
            raise Refusal(refused.reason, **refused.data)

    def name_of(self, email: str | None) -> str:
        if email is None:
            return ""
        p = self.state.player(email)
        return p.name if p else email

    def resolve(self, who: str) -> Player:
        p = find_player(self.state, who)
        if p is None or not p.active:
            raise Refusal(Reason.UNKNOWN_PLAYER, who=who)
        return p

    # ----- turns (201, 202, 212) ----------------------------------------------------------------

    def start_turn(self, email: str) -> None:
        self.state = replace(
            self.state,
            phase=Phase.PROPOSE,
            turn_player=email,
            turn_started_at=self.now,
            current_proposal=None,
            reminder_at=self.now + DAY,
        )
        self.notify(
            NoticeKind.TURN_STARTED,
            EVERYONE,
            player=self.name_of(email),
            email=email,
            round=self.state.rounds_completed + 1,
        )

    def end_turn(self, completed: bool) -> None:
        """The turn is over: count the round (201, 204), then the next turn unless held (212)."""
        s = self.state
        current = s.turn_player
        taken = s.turns_taken
        if completed and current is not None and current not in taken:
            taken = (*taken, current)
        self.state = replace(s, turns_taken=taken, reminder_at=None)
        active = {p.email for p in self.state.active_players}
        if active and active <= set(taken):
            self.state = replace(
                self.state, turns_taken=(), rounds_completed=self.state.rounds_completed + 1
            )
            self.maybe_switch_to_majority()
        self.next_turn_or_hold()

    def next_turn_or_hold(self) -> None:
        if self.state.over:
            return
        if self.state.open_appeals:  # 212: the next turn waits for a settlement
            self.state = replace(self.state, phase=Phase.APPEAL, reminder_at=None)
            return
        upcoming = self.player_after(self.state.turn_player)
        if upcoming is None:
            self.state = replace(self.state, phase=Phase.OVER, reminder_at=None)
            return
        self.start_turn(upcoming)

    def player_after(self, email: str | None) -> str | None:
        order = turn_order(self.state)
        if not order:
            return None
        if email is None:
            return order[0].email
        who = self.state.player(email)
        if who is None:
            return order[0].email
        mine = player_key(who)
        for p in order:
            if player_key(p) > mine:
                return p.email
        return order[0].email  # wrap round: a new round begins

    def maybe_switch_to_majority(self) -> None:
        """204: unamended by the end of the second full round, it asks only a majority."""
        s = self.state
        if s.adoption is Adoption.MAJORITY or s.rule_204_amended:
            return
        rule = s.rule_by_identity(RULE_ADOPTION)
        if rule is None or not rule.in_force:
            return
        if s.rounds_completed < self.params()["majority_after_rounds"]:
            return
        entry = HistoryEntry(rule.number, "majority", self.now, note="204")
        self.state = replace(s, adoption=Adoption.MAJORITY).with_rule(
            replace(rule, history=(*rule.history, entry))
        )
        self.notify(
            NoticeKind.MAJORITY_NOW,
            EVERYONE,
            rule=rule.number,
            rounds=self.state.rounds_completed,
        )
        self.record(RuleChange(RuleChangeKind.MAJORITY, rule.identity, rule.number, rule.number))

    # ----- proposals (103, 107, 109, 110, 112, 115, 210) ----------------------------------------

    def find_rule(self, ref: str | int | None) -> Rule:
        """The rule a player named by number, label or path (109); refused if none or several."""
        found = labels.resolve(self.state.rules, ref)
        if found.ambiguous:
            named = [
                {"number": r.number, "label": r.label, "path": r.path} for r in found.candidates
            ]
            raise Refusal(Reason.AMBIGUOUS_RULE, rule=ref, rules=named)
        if found.rule is None:
            raise Refusal(Reason.UNKNOWN_RULE, rule=ref)
        return found.rule

    def target_rule(self, number: str | int | None, need_mutable: bool) -> Rule:
        rule = self.find_rule(number)
        if not rule.in_force:
            raise Refusal(Reason.RULE_REPEALED, rule=number)
        if need_mutable and not rule.mutable:  # 103: immutable rules cannot be changed so
            raise Refusal(Reason.RULE_IMMUTABLE, rule=rule.number)
        return rule

    def target_amendment(self, ref: str | None) -> tuple[Rule, Amendment]:
        number, _, seq = (ref or "").partition(".")
        if not number.isdigit() or not seq.isdigit():
            raise Refusal(Reason.UNKNOWN_AMENDMENT, amendment=ref or "")
        rule = self.target_rule(int(number), need_mutable=True)
        found = rule.amendment(int(seq))
        if found is None:
            raise Refusal(Reason.UNKNOWN_AMENDMENT, amendment=ref or "")
        return rule, found

    def check_limits(self, kind: ProposalKind, rule: Rule | None) -> None:
        """210 (at most N mutable rules) and 115 (at least one), on submission and adoption."""
        cap = self.params()["max_mutable_rules"]
        count = self.state.mutable_count
        adds = kind is ProposalKind.ENACT or (
            kind is ProposalKind.TRANSMUTE and rule is not None and not rule.mutable
        )
        removes = (
            rule is not None
            and rule.mutable
            and kind
            in (
                ProposalKind.REPEAL,
                ProposalKind.TRANSMUTE,
            )
        )
        if adds and count + 1 > cap:
            raise Refusal(Reason.TOO_MANY_MUTABLE, cap=cap, count=count)
        if removes and count - 1 < 1:
            raise Refusal(Reason.NO_MUTABLE_LEFT)

    def check_outcome(self, proposal: Proposal) -> None:
        """Adopt the proposal on a scratch copy: the rules it leaves must still obey 115 and
        210, with the cap the changed rules themselves set (111, 211)."""
        scratch = _Step(self.state, self.now)
        scratch.adopt(proposal)
        self.check_state_limits(scratch.state)

    def check_state_limits(self, state: GameState) -> None:
        values = params.effective(state)
        count = state.mutable_count
        cap = values["max_mutable_rules"]
        if count > cap:
            raise Refusal(Reason.TOO_MANY_MUTABLE, cap=cap, count=count)
        if count < 1:
            raise Refusal(Reason.NO_MUTABLE_LEFT)
        if values["debate_days"] < values["debate_days_min"]:  # 111, 112: the minimum holds
            raise Refusal(
                Reason.BAD_PARAMETER,
                name="debate_days",
                value=str(values["debate_days"]),
                allowed=f">= {values['debate_days_min']} (112)",
            )

    def check_sets(self, kind: ProposalKind, sets: tuple[tuple[str, str], ...]) -> None:
        if not sets:
            return
        if kind in (ProposalKind.REPEAL, ProposalKind.REPEAL_AMENDMENT):
            raise Refusal(Reason.PARAMETER_NOT_ALLOWED, kind=kind.value)
        problem = params.check_sets(sets, self.params())
        if problem is not None:
            reason = Reason.UNKNOWN_PARAMETER if problem.unknown else Reason.BAD_PARAMETER
            raise Refusal(reason, name=problem.name, value=problem.value, allowed=problem.detail)

    def propose(self, cmd: Propose) -> tuple[Done, dict[str, Any]]:
        kind = cmd.kind
        sets = params.normalise_sets(cmd.sets)
        rule: Rule | None = None
        amendment: Amendment | None = None
        if kind is ProposalKind.ENACT and cmd.immutable:
            raise Refusal(Reason.ENACT_IMMUTABLE)
        if kind in (ProposalKind.AMEND_AMENDMENT, ProposalKind.REPEAL_AMENDMENT):
            rule, amendment = self.target_amendment(cmd.amendment)
        elif kind is not ProposalKind.ENACT:
            target = cmd.ref or cmd.target
            rule = self.target_rule(target, need_mutable=kind is not ProposalKind.TRANSMUTE)
        text = cmd.text.strip()
        if kind.has_text and not text:
            raise Refusal(Reason.EMPTY_TEXT)
        if not kind.has_text:
            text = ""
        self.check_limits(kind, rule)
        self.check_sets(kind, sets)
        old_text = _old_text(kind, rule, amendment)
        p = self.params()
        number = self.state.next_proposal_number  # 109: only proper proposals take a number
        debate_ends = self.now + timedelta(days=params.debate_days(p))  # 112: at least a week
        proposal = Proposal(
            number=number,
            proposer=cmd.sender,
            kind=kind,
            created_at=self.now,
            debate_ends=debate_ends,
            vote_deadline=debate_ends + timedelta(days=p["voting_days"]),
            target=rule.identity if rule else None,
            target_number=rule.number if rule else None,
            amendment_seq=amendment.seq if amendment else None,
            text=text,
            old_text=old_text,
            sets=sets,
        )
        self.check_outcome(proposal)
        self.state = replace(
            self.state.with_proposal(proposal),
            next_proposal_number=number + 1,
            current_proposal=number,
            phase=Phase.DEBATE,
            reminder_at=proposal.vote_deadline - DAY,
        )
        self.circulate(NoticeKind.PROPOSAL_CIRCULATED, proposal)  # 107
        return Done.PROPOSAL_ACCEPTED, {"number": number, **self.deadlines(proposal)}

    def deadlines(self, proposal: Proposal) -> dict[str, Any]:
        return {"debate_ends": proposal.debate_ends, "vote_deadline": proposal.vote_deadline}

    def circulate(self, kind: NoticeKind, proposal: Proposal, previous: str | None = None) -> None:
        """107: the proposal to everyone, with what it changes: against the text in force, or
        for a revision (112) against the proposal's previous text."""
        old_text = proposal.old_text if previous is None else previous
        new_text = proposal.text if proposal.kind.has_text else ""
        label = "in force" if previous is None else f"proposal {proposal.number} before"
        self.notify(
            kind,
            EVERYONE,
            thread=Thread.proposal(proposal.number),
            proposal=view.proposal_data(self.state, proposal),
            diff=_diff(proposal, old_text, label),
            old_text="" if proposal.kind is ProposalKind.TRANSMUTE else old_text,
            new_text=new_text,
            proposer=self.name_of(proposal.proposer),
        )

    def current_for(self, number: int) -> Proposal:
        proposal = self.state.proposal(number)
        if proposal is None:
            raise Refusal(Reason.UNKNOWN_PROPOSAL, number=number)
        if proposal.number != self.state.current_proposal or proposal.status not in (
            ProposalStatus.DEBATE,
            ProposalStatus.VOTING,
        ):
            raise Refusal(Reason.VOTE_CLOSED, number=number, status=proposal.status.value)
        return proposal

    def revise(self, cmd: Revise) -> tuple[Done, dict[str, Any]]:
        proposal = self.current_for(cmd.number)
        if not proposal.kind.has_text:
            raise Refusal(Reason.NO_TEXT_TO_REVISE, number=cmd.number)
        text = cmd.text.strip()
        if not text:
            raise Refusal(Reason.EMPTY_TEXT)
        sets = params.normalise_sets(cmd.sets)
        self.check_sets(proposal.kind, sets)
        voided = len(proposal.votes)
        revised = replace(
            proposal, text=text, sets=sets, votes=(), revisions=proposal.revisions + 1
        )
        self.check_outcome(revised)
        self.state = self.state.with_proposal(revised)
        # 112: votes cast are void; the diff is against the text they voted on
        self.circulate(NoticeKind.PROPOSAL_REVISED, revised, previous=proposal.text)
        return Done.REVISION_ACCEPTED, {"number": cmd.number, "voided": voided}

    def extend(self, cmd: Extend) -> tuple[Done, dict[str, Any]]:
        proposal = self.current_for(cmd.number or self.state.current_proposal or 0)
        if not 1 <= cmd.days <= 365:
            raise Refusal(Reason.BAD_DAYS, days=cmd.days)
        more = timedelta(days=cmd.days)
        longer = replace(
            proposal,
            debate_ends=proposal.debate_ends + more,
            vote_deadline=proposal.vote_deadline + more,
        )
        reminder = None if longer.reminded else longer.vote_deadline - DAY
        self.state = replace(self.state.with_proposal(longer), reminder_at=reminder)
        self.notify(
            NoticeKind.DEBATE_EXTENDED,
            EVERYONE,
            thread=Thread.proposal(longer.number),
            number=longer.number,
            days=cmd.days,
            **self.deadlines(longer),
        )
        return Done.DEBATE_EXTENDED, {"number": longer.number, **self.deadlines(longer)}

    # ----- votes (203, 204, 206, 208) -----------------------------------------------------------

    def vote(self, cmd: Vote) -> tuple[Done, dict[str, Any]]:
        proposal = self.current_for(cmd.number)
        before = proposal.vote_of(cmd.sender)
        votes = (*tuple(v for v in proposal.votes if v[0] != cmd.sender), (cmd.sender, cmd.yes))
        self.state = self.state.with_proposal(replace(proposal, votes=votes))
        code = Done.VOTE_RECORDED if before is None else Done.VOTE_REPLACED
        data = {"number": cmd.number, "yes": cmd.yes}
        if self.state.phase is Phase.VOTING and self.everyone_voted():
            self.close_vote()
        return code, data

    def everyone_voted(self) -> bool:
        proposal = self.state.current
        if proposal is None:
            return False
        voted = {who for who, _ in proposal.votes}
        return all(p.email in voted for p in self.state.active_players)

    def close_vote(self) -> None:
        """203: publish who voted how; 204/110: adopted or not; 206: dissenters' bonus."""
        proposal = self.state.current
        assert proposal is not None
        voters = self.state.active_players
        ballots = {who: yes for who, yes in proposal.votes if self.state.player(who) in voters}
        yes = sum(1 for v in ballots.values() if v)
        unanimous = bool(voters) and yes == len(voters)
        majority = yes * 2 > len(voters)
        transmuting_immutable = proposal.kind is ProposalKind.TRANSMUTE and not self.rule_mutable(
            proposal.target
        )
        if transmuting_immutable or self.state.adoption is Adoption.UNANIMITY:
            passed, needed = unanimous, "unanimity"  # 110, 204
        else:
            passed, needed = majority, "majority"
        outcome = "passed" if passed else "failed"
        if passed:
            try:
                self.recheck(proposal)
            except Refusal as refusal:
                passed, outcome = False, refusal.reason.value
        status = ProposalStatus.ADOPTED if passed else ProposalStatus.REJECTED
        closed = replace(proposal, status=status, outcome=outcome)
        self.state = replace(self.state.with_proposal(closed), reminder_at=None)
        before, mark = self.changes, len(self.effects)
        if passed:
            self.adopt(closed)
            if not unanimous:  # 206: only when a change could pass without unanimity
                self.dissent_bonus(ballots, closed.number)
        made = Changes(
            self.changes.rules[len(before.rules) :], self.changes.scores[len(before.scores) :]
        )
        rows = [
            {
                "name": p.name,
                "email": p.email,
                "vote": "yes"
                if ballots.get(p.email)
                else "no"
                if p.email in ballots
                else "abstain",
            }
            for p in turn_order(self.state)
        ]
        self.notify(
            NoticeKind.VOTE_RESULT,
            EVERYONE,
            thread=Thread.proposal(closed.number),
            proposal=view.proposal_data(self.state, closed),
            adopted=passed,
            outcome=outcome,
            needed=needed,
            yes=yes,
            no=len(voters) - yes,
            ballots=rows,
            changes=changes_data(made),  # the rule it changed and every score it moved
        )
        self.effects.insert(mark, self.effects.pop())  # the result before what adoption asks
        if passed:
            self.check_winner()
        if self.state.over or self.state.tie:
            return
        self.state = replace(self.state, phase=Phase.AWARD, reminder_at=self.now + DAY)
        self.prompt_award()

    def rule_mutable(self, identity: int | None) -> bool:
        rule = self.state.rule_by_identity(identity) if identity is not None else None
        return rule.mutable if rule is not None else True

    def recheck(self, proposal: Proposal) -> None:
        """The limits again at adoption: the rules may have changed since submission."""
        rule = self.state.rule_by_identity(proposal.target) if proposal.target else None
        if proposal.kind is not ProposalKind.ENACT:
            if rule is None or not rule.in_force:
                raise Refusal(Reason.RULE_REPEALED, rule=proposal.target_number)
            if proposal.kind is not ProposalKind.TRANSMUTE and not rule.mutable:
                raise Refusal(Reason.RULE_IMMUTABLE, rule=rule.number)
            if proposal.kind.on_amendment and rule.amendment(proposal.amendment_seq or 0) is None:
                raise Refusal(Reason.UNKNOWN_AMENDMENT, amendment="")
        self.check_limits(proposal.kind, rule)
        self.check_outcome(proposal)

    def dissent_bonus(self, ballots: dict[str, bool], number: int) -> None:
        """206: who voted against a change adopted without unanimity gains the bonus."""
        bonus = self.params()["dissent_bonus"]
        for p in turn_order(self.state):
            if ballots.get(p.email) is False and bonus:
                self.state = self.state.with_player(replace(p, score=p.score + bonus))
                self.record(
                    ScoreChange(p.name, p.email, bonus, ScoreCause.DISSENT_BONUS, proposal=number)
                )

    def adopt(self, proposal: Proposal) -> None:
        """207: takes full effect now; 109: the rule takes the proposal's number."""
        n, kind = proposal.number, proposal.kind
        old = self.state.rule_by_identity(proposal.target or 0)
        # 109: a repeal leaves the rule's number as it was; every other change renumbers it
        number = old.number if old is not None and kind is ProposalKind.REPEAL else n
        entry = HistoryEntry(number, _PAST[kind], self.now, proposal=n)
        if kind is ProposalKind.ENACT:
            title = proposal.text.splitlines()[0][:80] if proposal.text else ""
            rule = Rule(
                identity=n,
                number=n,
                mutable=True,
                text=proposal.text,
                title=title,
                parameters=proposal.sets,
                history=(entry,),
            )
            self.state = self.state.with_rule(rule)
            self.record(
                RuleChange(
                    RuleChangeKind(kind.value),
                    n,
                    None,
                    n,
                    proposal=n,
                    parameters=changes.parameter_changes((), proposal.sets),
                )
            )
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
        self.state = self.state.with_rule(new)
        self.record(
            RuleChange(
                RuleChangeKind(kind.value),
                old.identity,
                old.number,
                new.number,
                proposal=n,
                parameters=changes.parameter_changes(old.parameters, new.parameters),
                label=labels.display(old, self.state.rules),
            )
        )
        if kind in AMENDING_KINDS:
            if old.identity == RULE_ADOPTION:
                self.state = replace(self.state, rule_204_amended=True)
            self.ask_about_parameters(new, proposal)

    def ask_about_parameters(self, rule: Rule, proposal: Proposal) -> None:
        """An amendment that says nothing of a parameter its rule carries: the King confirms."""
        said = {name for name, _ in proposal.sets}
        silent = tuple(
            name for name, _ in rule.parameters if name not in said and name != params.PRECEDENCE
        )
        if not silent:
            return
        question = ParameterQuestion(rule.identity, proposal.number, silent)
        self.state = replace(
            self.state, parameter_questions=(*self.state.parameter_questions, question)
        )
        self.notify(
            NoticeKind.PARAMETER_PROMPT,
            self.to_king(),
            thread=Thread.parameters(rule.identity, proposal.number),
            rule=rule.number,
            rule_was=proposal.target_number,  # the number it had when proposed (109)
            proposal=proposal.number,
            parameters=[{"name": n, "value": rule.parameter(n)} for n in silent],
        )

    # ----- award and winning (202, 209) ---------------------------------------------------------

    def prompt_award(self, reminder: bool = False) -> None:
        proposal = self.state.current
        p = self.params()
        self.notify(
            NoticeKind.AWARD_REMINDER if reminder else NoticeKind.AWARD_PROMPT,
            self.to_king(),
            thread=Thread.award(proposal.number if proposal else None),
            player=self.name_of(self.state.turn_player),
            proposal=proposal.number if proposal else None,
            adopted=proposal.status is ProposalStatus.ADOPTED if proposal else False,
            low=p["award_min"],
            high=p["award_max"],
        )

    def award(self, cmd: Award) -> tuple[Done, dict[str, Any]]:
        p = self.params()
        if not p["award_min"] <= cmd.points <= p["award_max"]:
            raise Refusal(Reason.AWARD_OUT_OF_RANGE, low=p["award_min"], high=p["award_max"])
        email = self.state.turn_player
        player = self.state.player(email) if email else None
        assert player is not None
        self.state = self.state.with_player(replace(player, score=player.score + cmd.points))
        current = self.state.current_proposal
        self.record(ScoreChange(player.name, player.email, cmd.points, ScoreCause.AWARD, current))
        self.check_winner()
        if not self.state.over and not self.state.tie:
            self.end_turn(completed=True)
        return Done.AWARD_RECORDED, {"points": cmd.points, "player": player.name}

    def check_winner(self) -> None:
        """209: the first to reach the winning score wins; several at once, the King decides."""
        target = self.params()["winning_score"]
        crossing = [p for p in turn_order(self.state) if p.score >= target]
        if len(crossing) == 1:
            self.finish(crossing[0].email, "209")
        elif len(crossing) > 1:
            emails = tuple(p.email for p in crossing)
            self.state = replace(self.state, tie=emails, reminder_at=None)
            self.prompt_tie()

    def prompt_tie(self) -> None:
        crossing = [p for p in turn_order(self.state) if p.email in self.state.tie]
        self.notify(
            NoticeKind.TIE_PROMPT,
            self.to_king(),
            thread=Thread.tie(),
            players=[{"name": p.name, "score": p.score} for p in crossing],
            target=self.params()["winning_score"],
        )

    def settle_tie(self) -> None:
        """209 with 114 and 213: a tie loses who left or fell below the line; one left wins."""
        s = self.state
        if not s.tie or s.over:
            return
        target = self.params()["winning_score"]
        level = tuple(
            e for e in s.tie if (p := s.player(e)) is not None and p.active and p.score >= target
        )
        if level == s.tie:
            return
        self.state = replace(s, tie=level)
        if len(level) == 1:
            self.finish(level[0], "209")
        elif not level:  # nobody is over the line any more: the turn goes on where it stood
            turn_player = s.player(s.turn_player or "")
            if s.phase is Phase.AWARD:  # the award was given: the turn is over
                self.end_turn(completed=True)
            elif turn_player is None or not turn_player.active:
                self.end_turn(completed=False)
            else:  # the vote was closed: the King's award is next
                self.state = replace(self.state, phase=Phase.AWARD, reminder_at=self.now + DAY)
                self.prompt_award()

    def finish(self, winner: str | None, rule: str) -> None:
        self.state = replace(self.state, phase=Phase.OVER, winner=winner, tie=(), reminder_at=None)
        player = self.state.player(winner) if winner else None
        self.notify(
            NoticeKind.WINNER,
            EVERYONE,
            winner=player.name if player else "",
            score=player.score if player else 0,
            rule=rule,
            scores=view.scores_data(self.state),
        )

    def name_winner(self, cmd: NameWinner) -> tuple[Done, dict[str, Any]]:
        chosen = self.resolve(cmd.who)
        if chosen.email not in self.state.tie:
            raise Refusal(Reason.NOT_IN_TIE, who=chosen.name)
        self.finish(chosen.email, "209")
        return Done.WINNER_NAMED, {"winner": chosen.name}

    # ----- parameters the King settles ----------------------------------------------------------

    def confirm(self, cmd: Confirm) -> tuple[Done, dict[str, Any]]:
        rule = labels.resolve(self.state.rules, cmd.ref or cmd.rule).rule
        questions = [q for q in self.state.parameter_questions if rule and q.rule == rule.identity]
        if rule is None or not questions:
            raise Refusal(Reason.NO_PARAMETER_QUESTION, rule=cmd.ref or cmd.rule)
        self.state = replace(
            self.state,
            parameter_questions=tuple(
                q for q in self.state.parameter_questions if q.rule != rule.identity
            ),
        )
        kept = [{"name": n, "value": rule.parameter(n)} for q in questions for n in q.names]
        return Done.PARAMETERS_CONFIRMED, {"rule": rule.number, "parameters": kept}

    def set_parameter(self, cmd: SetParameter) -> tuple[Done, dict[str, Any]]:
        name = cmd.name.strip().lower()
        asked = [q for q in self.state.parameter_questions if name in q.names]
        if not asked:
            raise Refusal(Reason.NO_PARAMETER_QUESTION, name=name)
        question = asked[0]
        self.check_sets(ProposalKind.AMEND, ((name, cmd.value.strip()),))
        rule = self.state.rule_by_identity(question.rule)
        assert rule is not None
        entry = HistoryEntry(rule.number, "parameter", self.now, note=f"{name} = {cmd.value}")
        changed = replace(
            rule,
            parameters=params.merge(rule.parameters, ((name, cmd.value.strip()),)),
            history=(*rule.history, entry),
        )
        self.check_state_limits(self.state.with_rule(changed))
        rest = tuple(n for n in question.names if n != name)
        questions = tuple(
            (replace(q, names=rest) if q is question else q) for q in self.state.parameter_questions
        )
        self.state = replace(
            self.state.with_rule(changed),
            parameter_questions=tuple(q for q in questions if q.names),
        )
        self.record(
            RuleChange(
                RuleChangeKind.PARAMETER,
                rule.identity,
                rule.number,
                rule.number,
                proposal=question.proposal,
                parameters=changes.parameter_changes(rule.parameters, changed.parameters),
            )
        )
        return Done.PARAMETER_SET, {"rule": rule.number, "name": name, "value": cmd.value.strip()}

    # ----- appeals and accusations (212, 213, 214, 215) -----------------------------------------

    def open_appeal(self, cmd: OpenAppeal) -> tuple[Done, dict[str, Any]]:
        question = cmd.question.strip()
        if not question:
            raise Refusal(Reason.EMPTY_TEXT)
        appeal = self.file_appeal(AppealKind.APPEAL, cmd.sender, question)
        judge = self.state.judge_of(appeal)
        return Done.APPEAL_OPENED, {"id": appeal.id, "judge": self.name_of(judge)}

    def accuse(self, cmd: Accuse) -> tuple[Done, dict[str, Any]]:
        king = self.state.king
        evidence = cmd.evidence.strip()
        if not evidence:
            raise Refusal(Reason.EMPTY_TEXT)
        appeal = self.file_appeal(AppealKind.ACCUSATION, cmd.sender, evidence, accused=king)
        return Done.ACCUSATION_OPENED, {"id": appeal.id}

    def file_appeal(
        self,
        kind: AppealKind,
        appellant: str,
        question: str,
        accused: str | None = None,
    ) -> Appeal:
        """Number it (A1, A2, ...), tell everyone, and ask the King for a Champion if needed."""
        appeal = Appeal(
            id=f"A{len(self.state.appeals) + 1}",
            kind=kind,
            appellant=appellant,
            question=question,
            opened_at=self.now,
            accused=accused,
        )
        self.state = self.state.with_appeal(appeal)
        self.notify(
            NoticeKind.APPEAL_OPENED,
            EVERYONE,
            thread=Thread.appeal(appeal.id),
            appeal=view.appeal_data(self.state, appeal),
        )
        if self.state.judge_of(appeal) is None:
            self.prompt_champion(appeal)
        return appeal

    def prompt_champion(self, appeal: Appeal) -> None:
        self.notify(
            NoticeKind.CHAMPION_PROMPT,
            self.to_king(),
            thread=Thread.appeal(appeal.id),
            appeal=view.appeal_data(self.state, appeal),
        )

    def open_appeal_for(self, appeal_id: str) -> Appeal:
        appeal = self.state.appeal(appeal_id)
        if appeal is None:
            raise Refusal(Reason.UNKNOWN_APPEAL, id=appeal_id.upper())
        if appeal.status is not AppealStatus.OPEN:
            raise Refusal(Reason.APPEAL_SETTLED, id=appeal.id)
        return appeal

    def name_champion(self, cmd: NameChampion) -> tuple[Done, dict[str, Any]]:
        appeal = self.open_appeal_for(cmd.appeal)
        judge = self.state.judge_of(appeal)
        if judge is not None:
            raise Refusal(Reason.JUDGE_ALREADY_NAMED, id=appeal.id, judge=self.name_of(judge))
        champion = self.resolve(cmd.who)
        if champion.email == self.state.king:  # 212: the King cannot judge his own appeal
            raise Refusal(Reason.KING_CANNOT_JUDGE, id=appeal.id)
        named = replace(appeal, champion=champion.email)
        self.state = self.state.with_appeal(named)
        self.notify(
            NoticeKind.CHAMPION_NAMED,
            EVERYONE,
            thread=Thread.appeal(appeal.id),
            appeal=view.appeal_data(self.state, named),
        )
        return Done.CHAMPION_NAMED, {"id": appeal.id, "champion": champion.name}

    def give_ruling(self, cmd: GiveRuling) -> tuple[Done, dict[str, Any]]:
        appeal = self.open_appeal_for(cmd.appeal)
        text = cmd.text.strip()
        if not text:
            raise Refusal(Reason.EMPTY_TEXT)
        verdict = Verdict(cmd.verdict) if cmd.verdict else None
        if appeal.kind is AppealKind.ACCUSATION and verdict is None:
            raise Refusal(Reason.VERDICT_NEEDED, id=appeal.id)
        impossible = self.resolve(cmd.impossible).email if cmd.impossible else None
        ruled = replace(
            appeal,
            ruling=text,
            verdict=verdict,
            impossible=impossible,
            rulings=appeal.rulings + 1,
            agree=(),
            disagree=(),
        )
        self.state = self.state.with_appeal(ruled)
        self.notify(
            NoticeKind.RULING_PUBLISHED,
            EVERYONE,
            thread=Thread.appeal(appeal.id),
            appeal=view.appeal_data(self.state, ruled),
        )
        return Done.RULING_PUBLISHED, {"id": appeal.id}

    def agree(self, cmd: Agree) -> tuple[Done, dict[str, Any]]:
        appeal = self.open_appeal_for(cmd.appeal)
        if appeal.ruling is None:
            raise Refusal(Reason.NO_RULING_YET, id=appeal.id)
        agree = tuple(a for a in appeal.agree if a != cmd.sender)
        disagree = tuple(a for a in appeal.disagree if a != cmd.sender)
        if cmd.agree:
            agree = (*agree, cmd.sender)
        else:
            disagree = (*disagree, cmd.sender)
        self.state = self.state.with_appeal(replace(appeal, agree=agree, disagree=disagree))
        self.weigh(appeal.id)
        return Done.AGREEMENT_RECORDED, {"id": appeal.id, "agree": cmd.agree}

    def weigh(self, appeal_id: str) -> None:
        """212: settled once a majority of players approves the latest ruling."""
        appeal = self.state.appeal(appeal_id)
        if appeal is None or appeal.status is not AppealStatus.OPEN or appeal.ruling is None:
            return
        active = {p.email for p in self.state.active_players}
        agree = len(active & set(appeal.agree))
        disagree = len(active & set(appeal.disagree))
        if agree * 2 > len(active):
            settled = replace(appeal, status=AppealStatus.SETTLED)
            self.state = self.state.with_appeal(settled)
            self.notify(
                NoticeKind.APPEAL_SETTLED,
                EVERYONE,
                thread=Thread.appeal(appeal.id),
                appeal=view.appeal_data(self.state, settled),
            )
            self.carry_out(settled)
        elif disagree * 2 > len(active) and disagree == len(appeal.disagree):
            self.notify(
                NoticeKind.RULING_FAILED,
                EVERYONE,
                thread=Thread.appeal(appeal.id),
                appeal=view.appeal_data(self.state, appeal),
            )

    def carry_out(self, appeal: Appeal) -> None:
        if appeal.impossible is not None:  # 215: the first player unable to complete a turn wins
            self.finish(appeal.impossible, "215")
            return
        if appeal.kind is AppealKind.ACCUSATION and appeal.verdict is Verdict.UPHELD:
            self.depose(appeal)
        if self.state.phase is Phase.APPEAL and not self.state.open_appeals:
            self.next_turn_or_hold()

    def depose(self, appeal: Appeal) -> None:
        """213: the King becomes a subject, loses points, and chooses the new King."""
        old = self.state.player(appeal.accused or "")
        if old is None or self.state.king != old.email:
            return
        penalty = self.params()["deposition_penalty"]
        self.state = replace(
            self.state.with_player(replace(old, score=old.score - penalty)),
            king=None,
            deposed=old.email,
        )
        self.notify(
            NoticeKind.KING_DEPOSED,
            EVERYONE,
            thread=Thread.appeal(appeal.id),
            king=old.name,
            penalty=penalty,
            appeal=appeal.id,
        )
        self.record(ScoreChange(old.name, old.email, -penalty, ScoreCause.DEPOSITION))
        if old.active:
            self.state = replace(self.state, deposed_at=self.now, crown_reminder_at=self.now + DAY)
            self.notify(
                NoticeKind.CROWN_PROMPT,
                (old.email,),
                thread=Thread.appeal(appeal.id),
                reminder=False,
                due=crown_due(self.state),
            )
        else:
            self.crown_successor_of(old.email)
        self.settle_tie()

    def crown(self, cmd: Crown) -> tuple[Done, dict[str, Any]]:
        chosen = self.resolve(cmd.who)
        if chosen.email == cmd.sender:
            raise Refusal(Reason.CANNOT_CROWN_SELF)
        self.make_king(chosen.email, "213")
        return Done.CROWNED, {"king": chosen.name}

    def make_king(self, email: str, rule: str) -> None:
        """214: one King at a time; the old King, if any, is a subject from now."""
        self.state = replace(
            self.state, king=email, deposed=None, deposed_at=None, crown_reminder_at=None
        )
        self.notify(NoticeKind.KING_CROWNED, EVERYONE, king=self.name_of(email), rule=rule)
        for appeal in self.state.open_appeals:  # 212: the new King judges, or names a Champion
            if self.state.judge_of(appeal) is None:
                self.prompt_champion(appeal)
        if self.state.tie:  # 209: the new King decides between the players level
            self.prompt_tie()
        elif self.state.phase is Phase.AWARD:
            self.prompt_award()

    def crown_successor_of(self, email: str, rule: str = "114") -> None:
        """The next player in turn order after `email` is King (see docs/interpretation.md)."""
        successor = self.player_after(email)
        if successor is not None and successor != email:
            self.make_king(successor, rule)
        else:
            self.state = replace(
                self.state, king=None, deposed=None, deposed_at=None, crown_reminder_at=None
            )

    # ----- leaving the game (114) ---------------------------------------------------------------

    def quit(self, cmd: Quit) -> tuple[Done, dict[str, Any]]:
        me = self.state.player(cmd.sender)
        assert me is not None
        was_turn = self.state.turn_player == cmd.sender
        self.state = self.state.with_player(replace(me, active=False))
        withdrawn = None
        proposal = self.state.current
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
            self.state = self.state.with_proposal(
                replace(proposal, status=ProposalStatus.REJECTED, outcome="withdrawn")
            )
        self.notify(NoticeKind.PLAYER_QUIT, EVERYONE, player=me.name, withdrawn=withdrawn)
        if not self.state.active_players:
            self.finish(None, "114")
            return Done.QUIT_RECORDED, {}
        if self.state.king == cmd.sender or self.state.deposed == cmd.sender:
            self.crown_successor_of(cmd.sender)
        for appeal in self.state.open_appeals:
            if appeal.champion == cmd.sender:  # 212: the King names another Champion
                appeal = replace(appeal, champion=None)
                self.state = self.state.with_appeal(appeal)
                if self.state.judge_of(appeal) is None:
                    self.prompt_champion(appeal)
            self.weigh(appeal.id)
        self.settle_tie()
        if self.state.over or self.state.tie:
            return Done.QUIT_RECORDED, {}
        if (
            was_turn
            and self.state.turn_player == cmd.sender
            and self.state.phase is not Phase.APPEAL
        ):
            self.end_turn(completed=False)
        elif self.state.phase is Phase.VOTING and self.everyone_voted():
            self.close_vote()
        return Done.QUIT_RECORDED, {}

    # ----- queries ------------------------------------------------------------------------------

    def query(self, cmd: Query) -> tuple[Done, dict[str, Any]]:
        s = self.state
        if cmd.what is QueryKind.STATUS:
            return Done.STATUS, view.status_data(s)
        if cmd.what is QueryKind.RULES:
            return Done.RULES, view.ruleset_data(s)
        if cmd.what is QueryKind.SCORES:
            return Done.SCORES, {"scores": view.scores_data(s)}
        if cmd.what is QueryKind.HELP:
            return Done.HELP, {}
        rule = self.find_rule(cmd.ref or cmd.number)
        asked = cmd.number if not cmd.ref else rule.number  # a label names the rule as it is
        data = {"asked": asked, "rule": view.rule_data(rule, s.rules)}
        return (Done.RULE if cmd.what is QueryKind.RULE else Done.HISTORY), data

    # ----- the clock ----------------------------------------------------------------------------

    def tick(self) -> None:
        self.crown_deadline()
        s = self.state
        if s.over or s.tie:
            return
        proposal = s.current
        if s.phase is Phase.DEBATE and proposal is not None and self.now >= proposal.debate_ends:
            voting = replace(proposal, status=ProposalStatus.VOTING)
            self.state = replace(s.with_proposal(voting), phase=Phase.VOTING)
            if self.everyone_voted():  # no "vote now" when the vote closes at once
                self.close_vote()
            else:
                self.notify(
                    NoticeKind.DEBATE_ENDED,
                    EVERYONE,
                    thread=Thread.proposal(proposal.number),
                    number=proposal.number,
                    vote_deadline=proposal.vote_deadline,
                    missing=self.missing_voters(),
                )
        elif (
            s.phase is Phase.VOTING and proposal is not None and self.now >= proposal.vote_deadline
        ):
            self.close_vote()
        self.remind()

    def crown_deadline(self) -> None:
        """213: remind the deposed King daily; when `crown_days` pass, the crown passes on."""
        s = self.state
        if s.over or s.deposed is None or s.deposed_at is None or s.crown_reminder_at is None:
            return
        due = crown_due(s)
        if self.now >= due:
            self.crown_successor_of(s.deposed, rule="213")
            return
        if self.now < s.crown_reminder_at:
            return
        following = s.crown_reminder_at
        while following <= self.now:
            following += DAY
        self.state = replace(s, crown_reminder_at=following)
        accusations = [a for a in s.appeals if a.accused == s.deposed]
        self.notify(
            NoticeKind.CROWN_PROMPT,
            (s.deposed,),
            thread=Thread.appeal(accusations[-1].id) if accusations else None,
            reminder=True,
            due=due,
        )

    def missing_voters(self) -> list[str]:
        proposal = self.state.current
        voted = {who for who, _ in proposal.votes} if proposal else set()
        return [p.name for p in turn_order(self.state) if p.email not in voted]

    def remind(self) -> None:
        s = self.state
        if s.reminder_at is None or self.now < s.reminder_at or s.over:
            return
        following = s.reminder_at
        while following <= self.now:
            following += DAY
        if s.phase is Phase.PROPOSE and s.turn_player:
            self.state = replace(s, reminder_at=following)
            self.notify(
                NoticeKind.TURN_REMINDER,
                (s.turn_player,),
                player=self.name_of(s.turn_player),
                since=s.turn_started_at,
            )
        elif s.phase is Phase.AWARD:
            self.state = replace(s, reminder_at=following)
            self.prompt_award(reminder=True)
        elif s.phase in (Phase.DEBATE, Phase.VOTING) and s.current is not None:
            proposal = replace(s.current, reminded=True)
            self.state = replace(s.with_proposal(proposal), reminder_at=None)
            missing = self.missing_voters()
            if missing:
                self.notify(
                    NoticeKind.VOTE_REMINDER,
                    EVERYONE,
                    thread=Thread.proposal(proposal.number),
                    number=proposal.number,
                    vote_deadline=proposal.vote_deadline,
                    missing=missing,
                )
        else:
            self.state = replace(s, reminder_at=None)


_PAST = {
    ProposalKind.ENACT: "enacted",
    ProposalKind.REPEAL: "repealed",
    ProposalKind.AMEND: "amended",
    ProposalKind.TRANSMUTE: "transmuted",
    ProposalKind.ENACT_AMENDMENT: "amendment-enacted",
    ProposalKind.AMEND_AMENDMENT: "amendment-amended",
    ProposalKind.REPEAL_AMENDMENT: "amendment-repealed",
}


def _old_text(kind: ProposalKind, rule: Rule | None, amendment: Amendment | None) -> str:
    if rule is None:
        return ""
    if kind in (ProposalKind.AMEND_AMENDMENT, ProposalKind.REPEAL_AMENDMENT) and amendment:
        return amendment.text
    if kind is ProposalKind.ENACT_AMENDMENT:
        return ""
    if kind is ProposalKind.REPEAL:
        return rule.full_text
    return rule.text


def _diff(proposal: Proposal, old_text: str, label: str) -> str:
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


Handler = Callable[[_Step, Any], tuple[Done, dict[str, Any]]]
_HANDLERS: dict[type, Handler] = {
    Propose: _Step.propose,
    Revise: _Step.revise,
    Vote: _Step.vote,
    OpenAppeal: _Step.open_appeal,
    NameChampion: _Step.name_champion,
    GiveRuling: _Step.give_ruling,
    Agree: _Step.agree,
    Accuse: _Step.accuse,
    Crown: _Step.crown,
    Award: _Step.award,
    Extend: _Step.extend,
    Quit: _Step.quit,
    Confirm: _Step.confirm,
    SetParameter: _Step.set_parameter,
    NameWinner: _Step.name_winner,
    Query: _Step.query,
}
