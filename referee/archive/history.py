"""The game's public record, derived from the event log alone (rules 103, 109, 203, 205-213).

`HistoryBuilder` replays the logged events through the engine and compares each state with the
one before, so the record needs nothing the core does not already keep: every version of every
rule with the proposal, author, tally and deciding mail behind it; every proposal, failed ones
too, with every vote; appeals and accusations with their rulings and the rules those cite; and
every score change with its cause. Each event that changes the record's public face (a rule, a
proposal's submission or result, an appeal, a score) is a numbered `Change`: the archive makes
one git commit per change, and every piece of the record carries the number of the first
change that shows it ("stamp"), so the archive can be rendered as it stood after any change.
The builder is incremental: `feed` takes the events logged since the last call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from referee.core import codec, engine, labels
from referee.core.events import (
    Agree,
    Award,
    Debate,
    Event,
    GiveRuling,
    Notice,
    NoticeKind,
    Outcome,
    Propose,
    Revise,
    Vote,
)
from referee.core.model import Appeal, GameState, Proposal, ProposalStatus, Rule

# The kinds of change a rule's history records, with Agora's names (Rulekeepor's vocabulary).
RULE_CHANGE_KINDS = (
    "enacted",
    "amended",
    "renumbered",
    "transmuted",
    "amendment-enacted",
    "amendment-amended",
    "amendment-repealed",
    "repealed",
    "re-enacted",
    "parameter-changed",
    "majority",
)
_KIND_OF_ENTRY = {"initial": "enacted", "parameter": "parameter-changed"}
KIND_WORDS = {
    "en": {
        "enacted": "Enacted",
        "amended": "Amended",
        "renumbered": "Renumbered",
        "transmuted": "Transmuted",
        "amendment-enacted": "Amendment enacted",
        "amendment-amended": "Amendment amended",
        "amendment-repealed": "Amendment repealed",
        "repealed": "Repealed",
        "re-enacted": "Re-enacted",
        "parameter-changed": "Parameter changed",
        "majority": "Majority from now on",
    },
    "it": {
        "enacted": "Promulgata",
        "amended": "Emendata",
        "renumbered": "Rinumerata",
        "transmuted": "Trasmutata",
        "amendment-enacted": "Emendamento promulgato",
        "amendment-amended": "Emendamento modificato",
        "amendment-repealed": "Emendamento abrogato",
        "repealed": "Abrogata",
        "re-enacted": "Ripromulgata",
        "parameter-changed": "Parametro cambiato",
        "majority": "Da ora basta la maggioranza",
    },
}

# What a change is called, in the game's language: commit messages, the feed, the site.
PHRASES = {
    "en": {
        "started": "{game}: the initial ruleset",
        "submitted": "Proposal {n} '{title}' submitted",
        "adopted": "Proposal {n} '{title}' adopted",
        "rejected": "Proposal {n} '{title}' failed",
        "appeal": "Appeal {id} opened",
        "accusation": "Accusation {id} opened",
        "ruling": "Ruling on {id}",
        "settled": "{id} settled",
        "award": "Points for {who}",
        "scores": "Scores changed",
        "rule": "Rule {n}: {what}",
        "initial": "initial ruleset",
        "debate": "Debate on proposal {n}: {who}",
        "table": "At the table: {who}",
    },
    "it": {
        "started": "{game}: il regolamento iniziale",
        "submitted": "Proposta {n} '{title}' presentata",
        "adopted": "Proposta {n} '{title}' approvata",
        "rejected": "Proposta {n} '{title}' respinta",
        "appeal": "Appello {id} aperto",
        "accusation": "Accusa {id} aperta",
        "ruling": "Sentenza su {id}",
        "settled": "{id} risolto",
        "award": "Punti a {who}",
        "scores": "Punteggi cambiati",
        "rule": "Regola {n}: {what}",
        "initial": "regolamento iniziale",
        "debate": "Dibattito sulla proposta {n}: {who}",
        "table": "Al tavolo: {who}",
    },
}

# "rule 203", "regola 203", "rules 203", "r. 203", or a bare "(108)" as rulings cite rules.
CITE = re.compile(r"\b(?:rules?|regol[ae]|r\.)\s*(\d{1,5})\b|\((\d{3,5})\)", re.I)


@dataclass(frozen=True)
class LoggedEvent:
    """One row of the event log: its sequence, time, the mail it came in, and the event."""

    seq: int
    at: datetime
    message_id: str | None
    payload: Mapping[str, Any]


@dataclass
class RuleVersion:
    """One change in a rule's life, with the text as it stood after it (109)."""

    stamp: int
    kind: str
    ordinal: int  # the n-th change of this kind to this rule: "Amended(2)"
    number: int
    at: datetime
    text: str
    mutable: bool
    in_force: bool
    parameters: tuple[tuple[str, str], ...]
    title: str
    proposal: int | None = None
    proposal_title: str = ""
    author: str = ""
    author_email: str = ""
    yes: int | None = None
    no: int | None = None
    message_id: str = ""
    note: str = ""


@dataclass
class Annotation:
    """A ruling that cites this rule (212, 213), like Agora's CFJ annotations."""

    stamp: int
    appeal: str
    at: datetime
    judge: str
    excerpt: str


@dataclass
class RuleRecord:
    identity: int
    versions: list[RuleVersion] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)
    label: str = ""  # the label a rule document gave it ("§ 2.2"), if any
    path: str = ""  # its path in that document (the headings above it, then its label)
    position: int = 0  # its place in that document (1, 2 …); 0: none

    @property
    def reading_key(self) -> tuple[int, int, int]:
        """Its place when the rules are read: the document's order, new rules after (labels)."""
        return labels.reading_key(self.path, self.position, self.current.number, self.identity)

    def as_of(self, stamp: int | None) -> RuleRecord | None:
        """The record as it stood after change `stamp` (None: now); None if not yet enacted."""
        if stamp is None:
            return self
        versions = [v for v in self.versions if v.stamp <= stamp]
        if not versions:
            return None
        notes = [a for a in self.annotations if a.stamp <= stamp]
        return RuleRecord(self.identity, versions, notes, self.label, self.path, self.position)

    @property
    def current(self) -> RuleVersion:
        return self.versions[-1]

    @property
    def numbers(self) -> list[int]:
        seen: list[int] = []
        for v in self.versions:
            if v.number not in seen:
                seen.append(v.number)
        return seen

    def at_time(self, when: datetime) -> RuleVersion | None:
        found = None
        for v in self.versions:
            if v.at <= when:
                found = v
        return found


@dataclass
class Ballot:
    stamp: int
    voter: str
    email: str
    yes: bool
    at: datetime
    message_id: str


@dataclass
class DebateEntry:
    """One message of the table's debate (112), as it was relayed."""

    stamp: int
    author: str
    author_email: str
    at: datetime
    message_id: str
    text: str


@dataclass
class ProposalRecord:
    """A proposal from submission to result, adopted or not (103, 109, 112, 203)."""

    stamp: int
    number: int
    title: str
    kind: str
    proposer: str
    proposer_email: str
    created_at: datetime
    message_id: str
    target: int | None  # the rule's number when proposed
    target_identity: int | None
    amendment: str | None
    old_text: str
    texts: list[tuple[int, str]]  # (stamp, text): the proposal and each revision (112)
    sets: tuple[tuple[str, str], ...]
    ballots: list[Ballot] = field(default_factory=list)
    status: str = "debate"
    decided_stamp: int | None = None
    decided_at: datetime | None = None
    decided_message_id: str = ""
    outcome: str = ""
    awarded: list[tuple[int, str, int]] = field(default_factory=list)  # (stamp, player, points)
    bonuses: list[tuple[int, str, int]] = field(default_factory=list)
    debate: list[DebateEntry] = field(default_factory=list)  # 112: oldest first

    def as_of(self, stamp: int | None) -> ProposalRecord | None:
        if stamp is None:
            return self
        if self.stamp > stamp:
            return None
        decided = self.decided_stamp is not None and self.decided_stamp <= stamp
        return ProposalRecord(
            stamp=self.stamp,
            number=self.number,
            title=self.title,
            kind=self.kind,
            proposer=self.proposer,
            proposer_email=self.proposer_email,
            created_at=self.created_at,
            message_id=self.message_id,
            target=self.target,
            target_identity=self.target_identity,
            amendment=self.amendment,
            old_text=self.old_text,
            texts=[t for t in self.texts if t[0] <= stamp],
            sets=self.sets,
            ballots=[b for b in self.ballots if b.stamp <= stamp],
            status=self.status if decided else "debate",
            decided_stamp=self.decided_stamp if decided else None,
            decided_at=self.decided_at if decided else None,
            decided_message_id=self.decided_message_id if decided else "",
            outcome=self.outcome if decided else "",
            awarded=[a for a in self.awarded if a[0] <= stamp],
            bonuses=[b for b in self.bonuses if b[0] <= stamp],
            debate=[d for d in self.debate if d.stamp <= stamp],
        )

    @property
    def text(self) -> str:
        return self.texts[-1][1] if self.texts else ""

    @property
    def votes(self) -> list[Ballot]:
        """The vote that counts for each voter: a later vote replaces an earlier one (203)."""
        last: dict[str, Ballot] = {}
        for b in self.ballots:
            last[b.email] = b
        return sorted(last.values(), key=lambda b: b.voter)

    @property
    def yes(self) -> int:
        return sum(1 for b in self.votes if b.yes)

    @property
    def no(self) -> int:
        return sum(1 for b in self.votes if not b.yes)


@dataclass
class Ruling:
    stamp: int
    judge: str
    text: str
    at: datetime
    message_id: str
    verdict: str | None = None


@dataclass
class AppealRecord:
    """An appeal to the King (212) or an accusation of the King (213)."""

    stamp: int
    id: str
    kind: str
    appellant: str
    question: str
    opened_at: datetime
    message_id: str
    judge: str = ""
    rulings: list[Ruling] = field(default_factory=list)
    agreements: list[tuple[int, str, bool]] = field(default_factory=list)  # stamp, who, agree
    status: str = "open"
    settled_stamp: int | None = None
    cites: list[int] = field(default_factory=list)

    def as_of(self, stamp: int | None) -> AppealRecord | None:
        if stamp is None:
            return self
        if self.stamp > stamp:
            return None
        settled = self.settled_stamp is not None and self.settled_stamp <= stamp
        return AppealRecord(
            stamp=self.stamp,
            id=self.id,
            kind=self.kind,
            appellant=self.appellant,
            question=self.question,
            opened_at=self.opened_at,
            message_id=self.message_id,
            judge=self.judge,
            rulings=[r for r in self.rulings if r.stamp <= stamp],
            agreements=[a for a in self.agreements if a[0] <= stamp],
            status=self.status if settled else "open",
            settled_stamp=self.settled_stamp if settled else None,
            cites=self.cites,
        )

    @property
    def agree(self) -> int:
        return _count_latest(self.agreements, True)

    @property
    def disagree(self) -> int:
        return _count_latest(self.agreements, False)


def _count_latest(agreements: list[tuple[int, str, bool]], wanted: bool) -> int:
    latest: dict[str, bool] = {}
    for _, who, agree in agreements:
        latest[who] = agree
    return sum(1 for v in latest.values() if v is wanted)


@dataclass
class ScoreChange:
    """A player's score moved: by how much, to what, and why (202, 206, 213)."""

    stamp: int
    at: datetime
    player: str
    delta: int
    score: int
    cause: str  # award | dissent-bonus | ruling | other
    proposal: int | None = None
    appeal: str | None = None


@dataclass
class Change:
    """One commit's worth: everything one event changed in the public record."""

    ordinal: int
    at: datetime
    kind: str  # proposal-submitted | proposal-adopted | proposal-rejected | appeal | award | ...
    summary: str
    author: str
    author_email: str
    message_id: str
    proposal: int | None = None
    appeal: str | None = None
    rules: tuple[int, ...] = ()  # identities changed
    proposals: tuple[int, ...] = ()  # proposals whose file changed since the last change
    appeals: tuple[str, ...] = ()
    scores: bool = False
    annotated: tuple[int, ...] = ()  # rules a ruling in this change cites


@dataclass
class RulesetMail:
    """A mail with the whole ruleset (205): the opening mail or a ruleset-and-scores mail."""

    stamp: int
    at: datetime
    data: Mapping[str, Any]
    kind: str = "ruleset"  # its template: notices/ruleset or notices/game_started


@dataclass
class History:
    """The whole public record of one game."""

    name: str
    language: str
    started_at: datetime
    rules: dict[int, RuleRecord] = field(default_factory=dict)
    proposals: dict[int, ProposalRecord] = field(default_factory=dict)
    appeals: dict[str, AppealRecord] = field(default_factory=dict)
    scores: list[ScoreChange] = field(default_factory=list)
    players: dict[str, str] = field(default_factory=dict)  # email -> name
    changes: list[Change] = field(default_factory=list)
    ruleset_mails: list[RulesetMail] = field(default_factory=list)
    table: list[DebateEntry] = field(default_factory=list)  # 112: said outside any proposal
    state: GameState | None = None  # the game as it stands after the last event fed
    chain: tuple[int, str] | None = None  # 213: the hash chain's last link and head, when known

    def status_now(self, number: int) -> str:
        """A proposal's status as it stands now (debate, voting, adopted, rejected, withdrawn):
        the record keeps the result; the game's state knows that a debate is over (112)."""
        record = self.proposals[number]
        if record.status == "rejected" and record.outcome == "withdrawn":
            return "withdrawn"
        if record.status != "debate" or self.state is None:
            return record.status
        live = self.state.proposal(number)
        return live.status.value if live is not None else record.status

    @property
    def next_stamp(self) -> int:
        return len(self.changes) + 1

    def last_ruleset(self, stamp: int | None = None) -> RulesetMail | None:
        found = None
        for mail in self.ruleset_mails:
            if stamp is None or mail.stamp <= stamp:
                found = mail
        return found

    def standings(self, stamp: int | None = None) -> dict[str, int]:
        """Every player's score after change `stamp` (None: now), players in join order."""
        table = dict.fromkeys(self.players.values(), 0)
        for s in self.scores:
            if stamp is None or s.stamp <= stamp:
                table[s.player] = s.score
        return table

    def rules_in_force(self, stamp: int | None = None) -> list[RuleRecord]:
        out = []
        for record in self.rules.values():
            seen = record.as_of(stamp)
            if seen is not None and seen.current.in_force:
                out.append(seen)
        return sorted(out, key=lambda r: r.reading_key)  # the document's order, then new rules


def shorten(text: str, width: int) -> str:
    """`text` on one line, at most `width` characters, cut between words (never inside one)
    and marked with an ellipsis only when something was left out."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: width + 1].rsplit(" ", 1)[0] if " " in flat[: width + 1] else flat[:width]
    return cut.rstrip(" .,;:!?-–—") + "…"


def proposal_title(text: str, kind: str, target: int | None, language: str) -> str:
    """A proposal's title: its first line, or for a change without text what it does."""
    for line in text.splitlines():
        line = line.strip().strip("#").strip()
        if line:
            return shorten(line, 80)
    words = _UNTITLED["it" if language == "it" else "en"]
    return f"{words.get(kind, kind)} {target}" if target is not None else words.get(kind, kind)


_UNTITLED = {
    "en": {
        "repeal": "Repeal rule",
        "transmute": "Transmute rule",
        "repeal-amendment": "Repeal an amendment of rule",
        "enact": "New rule",
    },
    "it": {
        "repeal": "Abrogare la regola",
        "transmute": "Trasmutare la regola",
        "repeal-amendment": "Abrogare un emendamento della regola",
        "enact": "Nuova regola",
    },
}


@dataclass
class _Step:
    """What one event changed, gathered piece by piece: the change it makes (its kind,
    summary and subject) is named by the first piece that finds one."""

    logged: LoggedEvent
    event: Event
    before: GameState
    after: GameState
    stamp: int
    mid: str
    kind: str = ""
    summary: str = ""
    subject_proposal: int | None = None
    subject_appeal: str | None = None
    author_email: str = ""
    changed_rules: list[int] = field(default_factory=list)
    scored: bool = False

    def __post_init__(self) -> None:
        self.author_email = self.sender

    @property
    def sender(self) -> str:
        return str(getattr(self.event, "sender", ""))

    def name_change(self, kind: str, summary: str) -> None:
        """An appeal's change, unless an earlier piece named the change already."""
        self.kind = self.kind or kind
        self.summary = self.summary or summary


class HistoryBuilder:
    """Feeds logged events through the engine and records what each one changed."""

    def __init__(self, initial: GameState) -> None:
        self.state = engine.start_game(initial, initial.started_at).state
        self.history = History(initial.name, initial.language, initial.started_at)
        self.history.state = self.state
        self.words = PHRASES["it" if initial.language == "it" else "en"]
        self.kinds = KIND_WORDS["it" if initial.language == "it" else "en"]
        self.seq = 0
        self._touched_proposals: set[int] = set()
        self._touched_appeals: set[str] = set()
        self._annotated: set[int] = set()
        for p in initial.players:
            self.history.players[p.email] = p.name
        for rule in self.state.rules:
            self._rule_versions(None, rule, None, None, initial.started_at)
        opening = engine.start_game(initial, initial.started_at)
        self._ruleset_mails(opening.effects, initial.started_at, 1)
        self.history.changes.append(
            Change(
                ordinal=1,
                at=initial.started_at,
                kind="game-started",
                summary=self.words["started"].format(game=initial.name),
                author="",
                author_email="",
                message_id="",
                rules=tuple(r.identity for r in self.state.rules),
                scores=True,
            )
        )
        for p in self.state.players:
            self.history.scores.append(
                ScoreChange(1, initial.started_at, p.name, p.score, p.score, "start")
            )

    def feed(self, events: Iterable[LoggedEvent]) -> None:
        for logged in events:
            self._one(logged)
            self.seq = logged.seq

    # ----- one event ---------------------------------------------------------------------

    def _one(self, logged: LoggedEvent) -> None:
        event = codec.event_from_data(dict(logged.payload))
        before = self.state
        decision = engine.decide(before, event, logged.at)
        after = decision.state
        self.state = after
        self.history.state = after
        outcome = next((e for e in decision.effects if isinstance(e, Outcome)), None)
        if outcome is not None and not outcome.ok:
            return  # a refused command changes nothing (the player was told why)
        step = _Step(logged, event, before, after, self.history.next_stamp, logged.message_id or "")
        for member in after.players:
            self.history.players.setdefault(member.email, member.name)
        self._proposals(step)
        self._rules(step)
        self._appeals(step)
        self._scores(step)
        if isinstance(event, Debate):
            self._debate(step, event)
        if isinstance(event, Propose | Revise | Vote | Award) and not step.kind:
            return  # recorded; it shows in the next change's files
        self._ruleset_mails(decision.effects, logged.at, step.stamp)
        if step.kind:
            self._change(step)

    # ----- what one event changed, piece by piece ------------------------------------------

    def _proposals(self, step: _Step) -> None:
        """Proposals submitted, revised, voted on and decided (103, 112, 203, 208)."""
        before, after = step.before, step.after
        if before.proposals is after.proposals:
            return
        old = {p.number: p for p in before.proposals}
        for p in after.proposals:
            prior = old.get(p.number)
            if prior is p:
                continue
            record = self.history.proposals.get(p.number)
            if record is None:
                record = self._new_proposal(step, p)
                step.kind, step.subject_proposal = "proposal-submitted", p.number
                step.summary = self.words["submitted"].format(n=p.number, title=record.title)
                continue
            self._touched_proposals.add(p.number)
            self._proposal_moved(step, record, prior, p)

    def _new_proposal(self, step: _Step, p: Proposal) -> ProposalRecord:
        """The record of a proposal just submitted, in the history from this change on."""
        target_rule = step.after.rule_by_identity(p.target) if p.target else None
        amendment = None
        if p.amendment_seq is not None and p.target_number is not None:
            amendment = f"{p.target_number}.{p.amendment_seq}"
        language = self.history.language
        record = ProposalRecord(
            stamp=step.stamp,
            number=p.number,
            title=proposal_title(p.text, p.kind.value, p.target_number, language),
            kind=p.kind.value,
            proposer=self._name(p.proposer),
            proposer_email=p.proposer,
            created_at=p.created_at,
            message_id=step.mid,
            target=p.target_number,
            target_identity=target_rule.identity if target_rule else p.target,
            amendment=amendment,
            old_text=p.old_text,
            texts=[(step.stamp, p.text)],
            sets=p.sets,
        )
        self.history.proposals[p.number] = record
        return record

    def _proposal_moved(
        self, step: _Step, record: ProposalRecord, prior: Proposal | None, p: Proposal
    ) -> None:
        """A known proposal revised (112), voted on (203) or decided (208)."""
        event, stamp, at = step.event, step.stamp, step.logged.at
        if isinstance(event, Revise) and prior is not None and prior.text != p.text:
            record.texts.append((stamp, p.text))
            record.sets = p.sets
            record.title = proposal_title(
                p.text, p.kind.value, p.target_number, self.history.language
            )
        if isinstance(event, Vote) and event.number == p.number:
            sender = step.sender
            record.ballots.append(
                Ballot(stamp, self._name(sender), sender, event.yes, at, step.mid)
            )
        if p.status in (ProposalStatus.ADOPTED, ProposalStatus.REJECTED) and (
            prior is None or prior.status != p.status
        ):
            record.status = p.status.value
            record.decided_stamp = stamp
            record.decided_at = at
            record.outcome = p.outcome
            record.decided_message_id = step.mid or (
                record.ballots[-1].message_id if record.ballots else ""
            )
            step.kind = f"proposal-{p.status.value}"
            step.subject_proposal = p.number
            step.author_email = record.proposer_email
            step.summary = self.words[p.status.value].format(n=p.number, title=record.title)

    def _rules(self, step: _Step) -> None:
        """Each rule that gained a version: enacted, amended, repealed ... (103, 109)."""
        before, after, h = step.before, step.after, self.history
        if before.rules is after.rules:
            return
        old_rules = {r.identity: r for r in before.rules}
        for rule in after.rules:
            prior_rule = old_rules.get(rule.identity)
            if prior_rule is rule:
                continue
            number = step.subject_proposal
            decided = h.proposals.get(number) if number else None
            if self._rule_versions(prior_rule, rule, decided, step.mid, step.logged.at, step.stamp):
                step.changed_rules.append(rule.identity)
        if step.changed_rules and not step.kind:
            step.kind = "rule-changed"
            latest = [h.rules[i].current for i in step.changed_rules]
            step.summary = "; ".join(
                self.words["rule"].format(n=v.number, what=self.kinds.get(v.kind, v.kind))
                for v in latest
            )

    def _appeals(self, step: _Step) -> None:
        """Appeals and accusations opened, judged, ruled on, agreed and settled (212, 213)."""
        before, after = step.before, step.after
        if before.appeals is after.appeals:
            return
        old_appeals = {a.id: a for a in before.appeals}
        for a in after.appeals:
            prior_appeal = old_appeals.get(a.id)
            if prior_appeal is a:
                continue
            record = self.history.appeals.get(a.id)
            if record is None:
                record = AppealRecord(
                    stamp=step.stamp,
                    id=a.id,
                    kind=a.kind.value,
                    appellant=self._name(a.appellant),
                    question=a.question,
                    opened_at=a.opened_at,
                    message_id=step.mid,
                )
                self.history.appeals[a.id] = record
                step.name_change("appeal-opened", self.words[a.kind.value].format(id=a.id))
                step.subject_appeal = a.id
            self._touched_appeals.add(a.id)
            self._appeal_moved(step, record, a)

    def _appeal_moved(self, step: _Step, record: AppealRecord, a: Appeal) -> None:
        """An appeal's judge named, its ruling given, agreed to, or settled (212)."""
        event, sender, stamp = step.event, step.sender, step.stamp
        judge = step.after.judge_of(a)
        if judge:
            record.judge = self._name(judge)
        if isinstance(event, GiveRuling) and event.appeal.upper() == a.id:
            record.judge = self._name(sender)
            ruling = a.ruling or event.text
            verdict = a.verdict.value if a.verdict else None
            at = step.logged.at
            record.rulings.append(Ruling(stamp, self._name(sender), ruling, at, step.mid, verdict))
            self._annotate(record, ruling, step.before, stamp, at)
            step.name_change("ruling", self.words["ruling"].format(id=a.id))
            step.subject_appeal = a.id
        if isinstance(event, Agree) and event.appeal.upper() == a.id:
            record.agreements.append((stamp, sender, event.agree))
        if a.status.value == "settled" and record.settled_stamp is None:
            record.status = "settled"
            record.settled_stamp = stamp
            step.name_change("appeal-settled", self.words["settled"].format(id=a.id))
            step.subject_appeal = a.id

    def _scores(self, step: _Step) -> None:
        """Every score that moved, and why: an award, a dissent bonus, a ruling (202, 206)."""
        before, after, event, h = step.before, step.after, step.event, self.history
        if before.players is after.players:
            return
        old_players = {p.email: p for p in before.players}
        closing = step.subject_proposal if step.kind.startswith("proposal-a") else None
        for member in after.players:
            prior_player = old_players.get(member.email)
            was = prior_player.score if prior_player else 0
            if member.score == was:
                continue
            delta = member.score - was
            if isinstance(event, Award):
                cause, number = "award", before.current_proposal
                if number is not None and number in h.proposals:
                    h.proposals[number].awarded.append((step.stamp, member.name, delta))
                    self._touched_proposals.add(number)
            elif closing is not None:
                cause, number = "dissent-bonus", closing
                h.proposals[closing].bonuses.append((step.stamp, member.name, delta))
            elif isinstance(event, GiveRuling):
                cause, number = "ruling", None
            else:
                cause, number = type(event).__name__.lower(), None
            h.scores.append(
                ScoreChange(
                    step.stamp, step.logged.at, member.name, delta, member.score, cause, number
                )
            )
            step.scored = True
        if step.scored and not step.kind:
            awarded = isinstance(event, Award)
            step.kind = "award" if awarded else "scores"
            who = self._name(before.turn_player)
            step.summary = self.words["award"].format(who=who) if awarded else self.words["scores"]
            step.subject_proposal = before.current_proposal

    def _debate(self, step: _Step, event: Debate) -> None:
        """112: each message of debate is a change of its own, on its proposal or the table."""
        sender = step.sender
        entry = DebateEntry(
            step.stamp, self._name(sender), sender, step.logged.at, step.mid, event.text
        )
        number = event.proposal
        if number is not None and number in self.history.proposals:
            self.history.proposals[number].debate.append(entry)
            self._touched_proposals.add(number)
            step.kind, step.subject_proposal = "debate", number
            step.summary = self.words["debate"].format(n=number, who=entry.author)
        else:
            self.history.table.append(entry)
            step.kind, step.summary = "debate", self.words["table"].format(who=entry.author)

    def _change(self, step: _Step) -> None:
        """The numbered change (one commit of the archive) that this event makes."""
        h, subject = self.history, step.subject_proposal
        decided = h.proposals.get(subject) if subject is not None else None
        if not step.kind.startswith("proposal-") or step.kind == "proposal-submitted":
            decided = None  # the mail that made the change, not the one that decided it
        touched = self._touched_proposals | ({subject} if subject is not None else set())
        h.changes.append(
            Change(
                ordinal=step.stamp,
                at=step.logged.at,
                kind=step.kind,
                summary=step.summary,
                author=self._name(step.author_email),
                author_email=step.author_email,
                message_id=decided.decided_message_id if decided is not None else step.mid,
                proposal=subject,
                appeal=step.subject_appeal,
                rules=tuple(step.changed_rules),
                proposals=tuple(sorted(touched)),
                appeals=tuple(sorted(self._touched_appeals)),
                scores=step.scored,
                annotated=tuple(sorted(self._annotated)),
            )
        )
        self._touched_proposals = set()
        self._touched_appeals = set()
        self._annotated = set()

    # ----- helpers -----------------------------------------------------------------------

    def _name(self, email: str | None) -> str:
        if not email:
            return ""
        return self.history.players.get(email, email)

    def _ruleset_mails(self, effects: Iterable[object], at: datetime, stamp: int) -> None:
        for effect in effects:
            if isinstance(effect, Notice) and effect.kind in (
                NoticeKind.RULESET,
                NoticeKind.GAME_STARTED,
            ):
                mail = RulesetMail(stamp, at, effect.data, effect.kind.value)
                self.history.ruleset_mails.append(mail)

    def _rule_versions(
        self,
        prior: Rule | None,
        rule: Rule,
        proposal: ProposalRecord | None,
        message_id: str | None,
        at: datetime,
        stamp: int = 1,
    ) -> bool:
        """Record the history entries `rule` gained since `prior`; True if it gained any."""
        record = self.history.rules.setdefault(rule.identity, RuleRecord(rule.identity))
        record.label, record.path, record.position = rule.label, rule.path, rule.position
        start = len(prior.history) if prior is not None else 0
        fresh = rule.history[start:]
        if not fresh and prior is not None and prior.full_text != rule.full_text:
            fresh = (rule.history[-1],) if rule.history else ()
        for entry in fresh:
            kind = _KIND_OF_ENTRY.get(entry.event, entry.event)
            ordinal = 1 + sum(1 for v in record.versions if v.kind == kind)
            number = entry.proposal if entry.proposal is not None else None
            linked = proposal if proposal is not None and proposal.number == number else None
            record.versions.append(
                RuleVersion(
                    stamp=stamp,
                    kind=kind,
                    ordinal=ordinal,
                    number=entry.number,
                    at=entry.at,
                    text=rule.full_text,
                    mutable=rule.mutable,
                    in_force=rule.in_force,
                    parameters=rule.parameters,
                    title=rule.title,
                    proposal=number,
                    proposal_title=linked.title if linked else "",
                    author=linked.proposer if linked else "",
                    author_email=linked.proposer_email if linked else "",
                    yes=linked.yes if linked else None,
                    no=linked.no if linked else None,
                    message_id=(linked.decided_message_id if linked else (message_id or "")),
                    note=entry.note or (self.words["initial"] if entry.event == "initial" else ""),
                )
            )
        return bool(fresh)

    def _annotate(
        self, appeal: AppealRecord, text: str, state: GameState, stamp: int, at: datetime
    ) -> None:
        """Every rule the ruling cites by number gets an annotation (like Agora's CFJs)."""
        for match in CITE.finditer(text):
            rule = state.rule_by_number(int(match.group(1) or match.group(2)))
            if rule is None:
                continue
            if rule.number not in appeal.cites:
                appeal.cites.append(rule.number)
            record = self.history.rules.get(rule.identity)
            if record is None or any(
                a.appeal == appeal.id and a.stamp == stamp for a in record.annotations
            ):
                continue
            self._annotated.add(rule.identity)
            start = max(0, match.start() - 120)
            excerpt = " ".join(text[start : match.end() + 160].split())
            record.annotations.append(Annotation(stamp, appeal.id, at, appeal.judge, excerpt))


def build_history(initial: GameState, events: Iterable[LoggedEvent]) -> History:
    builder = HistoryBuilder(initial)
    builder.feed(events)
    return builder.history


__all__ = [
    "RULE_CHANGE_KINDS",
    "Change",
    "History",
    "HistoryBuilder",
    "LoggedEvent",
    "ProposalRecord",
    "Rule",
    "build_history",
]
