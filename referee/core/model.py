"""The game's state as frozen values: players, rules, proposals, appeals, turn (rules 101-215).

Everything here is immutable and holds only stdlib types, so a state can be compared,
serialised and replayed. The procedure that changes it lives in `referee.core.engine`.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from referee.core.interpreter import Mechanics

_T = TypeVar("_T")


def field_names(kind: type) -> tuple[str, ...]:
    """A dataclass's field names in order, as `dataclasses.fields` gives them, found once per
    class: a payload gives its fields to the templates on every mail."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


if TYPE_CHECKING:  # the type checker holds every call to `dataclasses.replace`'s rules
    from dataclasses import replace as replace
else:

    def replace(obj: _T, /, **changes: Any) -> _T:
        """`dataclasses.replace` for the frozen values of the engine, a several times faster
        copy: the fields are the instance's own, so a class with no `__post_init__`, no
        field left out of `__init__` and no `__slots__` is copied field by field, the changed
        ones replaced, exactly what its `__init__` would have stored. Any other class, or a
        name that is not a field, goes to `dataclasses.replace` itself."""
        kind = type(obj)
        names = _COPIED.get(kind)
        if names is None:
            names = _COPIED[kind] = _copied_fields(kind)
        if not names or not names.issuperset(changes):
            return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
        made = object.__new__(kind)
        kept = made.__dict__
        kept.update(obj.__dict__)
        kept.update(changes)
        return made

    _COPIED: dict[type, frozenset[str]] = {}

    def _copied_fields(kind: type) -> frozenset[str]:
        """The fields `replace` may copy, or none when `__init__` must run."""
        if not dataclasses.is_dataclass(kind) or hasattr(kind, "__post_init__"):
            return frozenset()
        if any("__slots__" in vars(base) for base in kind.__mro__):
            return frozenset()
        fields = dataclasses.fields(kind)
        if any(not f.init for f in fields):
            return frozenset()
        return frozenset(f.name for f in fields)


class Phase(enum.StrEnum):
    """The part of the turn the game is in (rule 202), plus the holds of 212 and the end."""

    PROPOSE = "propose"  # 202 (1)
    DEBATE = "debate"  # 202 (2), 112
    VOTING = "voting"  # 202 (3), 203
    AWARD = "award"  # 202 (4)
    APPEAL = "appeal"  # 212: the next turn waits for a settlement
    OVER = "over"  # 209, 215


class Adoption(enum.StrEnum):
    """How many votes a rule change needs (rule 204)."""

    UNANIMITY = "unanimity"
    MAJORITY = "majority"


class ProposalKind(enum.StrEnum):
    """The seven kinds of rule change (rule 103)."""

    ENACT = "enact"
    REPEAL = "repeal"
    AMEND = "amend"
    TRANSMUTE = "transmute"
    ENACT_AMENDMENT = "enact-amendment"
    AMEND_AMENDMENT = "amend-amendment"
    REPEAL_AMENDMENT = "repeal-amendment"

    @property
    def has_text(self) -> bool:
        return self not in (
            ProposalKind.REPEAL,
            ProposalKind.TRANSMUTE,
            ProposalKind.REPEAL_AMENDMENT,
        )

    @property
    def on_amendment(self) -> bool:
        return self in (ProposalKind.AMEND_AMENDMENT, ProposalKind.REPEAL_AMENDMENT)


class ProposalStatus(enum.StrEnum):
    DEBATE = "debate"
    VOTING = "voting"
    ADOPTED = "adopted"
    REJECTED = "rejected"


class AppealKind(enum.StrEnum):
    APPEAL = "appeal"  # 212
    ACCUSATION = "accusation"  # 213


class AppealStatus(enum.StrEnum):
    OPEN = "open"  # waiting for a judge or a ruling, or for the players' agreement
    SETTLED = "settled"  # a majority agreed with the latest ruling (212)


class Verdict(enum.StrEnum):
    """How a ruling on an accusation ends (213)."""

    UPHELD = "upheld"
    DISMISSED = "dismissed"


WHEN_SET = "omit"  # the metadata key of a field the codec writes only when it is set


def when_set(default: Any) -> Any:
    """A field added after games were recorded: the record holds it only when it is not
    `default`, so older records and their states' digests stay as they were (`codec`)."""
    return field(default=default, metadata={WHEN_SET: True})


@dataclass(frozen=True)
class Player:
    name: str
    email: str
    surname: str
    score: int = 0
    active: bool = True
    first_round: int = 0  # 201: a newcomer takes turns from the round after joining
    first_proposal: int = 0  # 203: a newcomer votes on proposals circulated after joining


class RequestStatus(enum.StrEnum):
    PENDING = "pending"  # waiting for the King's yes or no
    ADMITTED = "admitted"
    REFUSED = "refused"


@dataclass(frozen=True)
class JoinRequest:
    """A stranger's confirmed request to join, numbered 1, 2, ...; the King answers it."""

    number: int
    email: str
    name: str
    asked_at: datetime
    status: RequestStatus = RequestStatus.PENDING
    # the active players it looks like (Unicode's confusables, `mail.lookalike`): the King's
    # bare yes does not admit it, a written ADMIT N YES does
    lookalikes: tuple[str, ...] = when_set(())


@dataclass(frozen=True)
class Amendment:
    """An amendment of a rule (103 (2)); shown as `<rule number>.<seq>`."""

    seq: int
    text: str


@dataclass(frozen=True)
class HistoryEntry:
    """One change in a rule's life, tied to the number the rule took then (109)."""

    number: int
    event: str
    at: datetime
    proposal: int | None = None
    note: str = ""


@dataclass(frozen=True)
class Rule:
    """A rule, followed by its identity (its first number) through every renumbering (109)."""

    identity: int
    number: int
    mutable: bool
    text: str
    title: str = ""
    amendments: tuple[Amendment, ...] = ()
    next_amendment_seq: int = 1
    parameters: tuple[tuple[str, str], ...] = ()
    history: tuple[HistoryEntry, ...] = ()
    in_force: bool = True
    label: str = ""  # the label a document gave it ("§ 2.2", "IV"), kept for display and commands
    path: str = ""  # where the document had it ("II/III"): its headings' labels, then its own
    position: int = 0  # its place in that document (1, 2 …): the order it is read in; 0: none

    def parameter(self, name: str) -> str | None:
        for key, value in self.parameters:
            if key == name:
                return value
        return None

    def amendment(self, seq: int) -> Amendment | None:
        for item in self.amendments:
            if item.seq == seq:
                return item
        return None

    def amendment_id(self, seq: int) -> str:
        return f"{self.number}.{seq}"

    @property
    def numbers(self) -> tuple[int, ...]:
        """Every number this rule has had, oldest first."""
        seen: list[int] = []
        for entry in self.history:
            if entry.number not in seen:
                seen.append(entry.number)
        if self.number not in seen:
            seen.append(self.number)
        return tuple(seen)

    @property
    def full_text(self) -> str:
        parts = [self.text]
        parts.extend(f"[{self.amendment_id(a.seq)}] {a.text}" for a in self.amendments)
        return "\n\n".join(parts)


@dataclass(frozen=True)
class Proposal:
    """A proposed rule change, numbered from 301 (109)."""

    number: int
    proposer: str
    kind: ProposalKind
    created_at: datetime
    debate_ends: datetime
    vote_deadline: datetime
    target: int | None = None  # identity of the rule it changes
    target_number: int | None = None  # the number the target had when proposed
    amendment_seq: int | None = None
    text: str = ""
    old_text: str = ""
    sets: tuple[tuple[str, str], ...] = ()
    status: ProposalStatus = ProposalStatus.DEBATE
    votes: tuple[tuple[str, bool], ...] = ()  # email -> yes; a later vote replaces (203)
    revisions: int = 0
    reminded: bool = False
    outcome: str = ""  # why it closed as it did

    def vote_of(self, email: str) -> bool | None:
        for who, yes in self.votes:
            if who == email:
                return yes
        return None

    @property
    def yes(self) -> int:
        return sum(1 for _, yes in self.votes if yes)

    @property
    def no(self) -> int:
        return sum(1 for _, yes in self.votes if not yes)


@dataclass(frozen=True)
class Decided:
    """The referee's decision an appeal written in reply to its answer is about (212, 108).

    The facts the mail layer kept of the answered mail: its sender, subject and delivery time,
    the line, the outcome's code and whether it was accepted, and the command read from the
    line (as event data in JSON; "" when no command was read).
    """

    sender: str
    at: datetime  # when the mail was delivered: the time the referee applied it at
    line: str
    code: str
    ok: bool
    command: str = ""
    subject: str = ""


@dataclass(frozen=True)
class Appeal:
    """An appeal to the King (212) or an accusation of the King (213), numbered A1, A2, ..."""

    id: str
    kind: AppealKind
    appellant: str
    question: str
    opened_at: datetime
    champion: str | None = None  # named by the King when he may not judge it himself (212)
    ruling: str | None = None
    verdict: Verdict | None = None
    impossible: str | None = None  # 215: the player named unable to complete a turn
    rulings: int = 0
    agree: tuple[str, ...] = ()
    disagree: tuple[str, ...] = ()
    status: AppealStatus = AppealStatus.OPEN
    accused: str | None = None
    about: Decided | None = None  # the referee's decision it is about (an APPEAL by reply)
    draft: Verdict | None = None  # the referee's draft: UPHELD corrects it, DISMISSED keeps it
    applied: str = ""  # once settled: how the correction was carried out (see `rulings`)
    asked_at: datetime | None = None  # when it was sent, if it waited for the daily limit

    @property
    def parties(self) -> tuple[str, ...]:
        """Who appealed, who is accused (213), and whose mail the decision appealed was about:
        212, no one judges himself."""
        about = self.about.sender if self.about is not None else None
        return tuple(p for p in (self.appellant, self.accused, about) if p)


@dataclass(frozen=True)
class WaitingAppeal:
    """An appeal or accusation sent beyond its appellant's daily limit (212): taken, not yet
    opened. It opens at `opens_at` (a midnight UTC), in the order it arrived, if the rules
    still allow it then, counting against that day's `per_day` (the limit it was sent under);
    `accused` is the King an accusation names (213)."""

    kind: AppealKind
    appellant: str
    question: str
    asked_at: datetime
    opens_at: datetime
    per_day: int
    about: Decided | None = None
    accused: str | None = None


@dataclass(frozen=True)
class ParameterQuestion:
    """An adopted change touched a rule carrying parameters it did not mention (King decides)."""

    rule: int  # identity
    proposal: int
    names: tuple[str, ...]


class DebateDelivery(enum.StrEnum):
    """How a player takes the table's debate (112): every message, a daily digest, or none."""

    ALL = "all"
    DIGEST = "digest"
    NONE = "none"


@dataclass(frozen=True)
class Post:
    """One message of debate relayed to the table (112); its text is in the event log."""

    author: str  # email
    at: datetime
    proposal: int | None  # None: said to the table outside any proposal (SAY)
    digest: str  # of the text as compared: the same words are never relayed twice


@dataclass(frozen=True)
class DigestItem:
    """A message of debate waiting for the daily digest of the players in `to`."""

    author: str  # the author's name as shown
    at: datetime
    proposal: int | None
    text: str
    to: tuple[str, ...]


OMIT = {WHEN_SET: True}  # a field left out of the state's data and digest at its default


# The last `GameState.rules_in_force`: (the tuple of rules, those in force by number)
_IN_FORCE: list[tuple[tuple[Rule, ...], tuple[Rule, ...]]] = []


@dataclass(frozen=True)
class GameState:
    """Everything the referee knows about one game."""

    name: str
    language: str
    started_at: datetime
    players: tuple[Player, ...]
    king: str | None
    rules: tuple[Rule, ...]
    house_parameters: tuple[tuple[str, str], ...] = ()
    # Which rules carry which mechanic (`referee.core.mechanics`), as an imported ruleset
    # declares them; empty for the seed, whose rules carry their own by identity.
    carriers: tuple[tuple[str, int], ...] = ()
    house_mechanics: tuple[str, ...] = ()  # mechanics that run though no rule carries them
    proposals: tuple[Proposal, ...] = ()
    appeals: tuple[Appeal, ...] = ()
    # 212: appeals and accusations beyond their appellant's daily limit, in the order they came
    waiting_appeals: tuple[WaitingAppeal, ...] = ()
    next_proposal_number: int = 301  # 109
    adoption: Adoption = Adoption.UNANIMITY
    phase: Phase = Phase.PROPOSE
    turn_player: str | None = None
    turn_started_at: datetime | None = None
    current_proposal: int | None = None
    turns_taken: tuple[str, ...] = ()  # players who completed a turn in this round (201)
    rounds_completed: int = 0
    reminder_at: datetime | None = None
    winner: str | None = None
    tie: tuple[str, ...] = ()  # 209: several crossed together; the King names the winner
    deposed: str | None = None  # 213: the deposed King who must crown a successor
    deposed_at: datetime | None = None  # when he was deposed: the crown passes on if he waits
    crown_reminder_at: datetime | None = None  # the next daily reminder to crown a successor
    parameter_questions: tuple[ParameterQuestion, ...] = ()
    rule_204_amended: bool = False
    requests: tuple[JoinRequest, ...] = ()  # requests to join, answered or not
    events: int = 0  # how many events have been applied (a sequence for stable ids)
    posts: tuple[Post, ...] = ()  # 112: every message of debate relayed, oldest first
    debate_delivery: tuple[tuple[str, DebateDelivery], ...] = ()  # email -> choice; default ALL
    digest: tuple[DigestItem, ...] = ()  # debate waiting for the next daily digest
    digest_at: datetime | None = None  # when the daily digest goes out
    # commands a player's plain words seemed to mean, waiting for a bare yes: email -> lines
    suggestions: tuple[tuple[str, str], ...] = ()
    # ARCHIVE (213): each player's latest request, email -> when; one a day (UTC)
    archives: tuple[tuple[str, datetime], ...] = ()
    extra: tuple[tuple[str, str], ...] = field(default=())
    # The players' mechanics (issue 26): the rules' blocks, the counters, the open questions
    # and offers. Left out of the data and the digest while None, so a game without any
    # block decides and encodes exactly as before the notation existed.
    mechanics: Mechanics | None = field(default=None, repr=False, metadata=OMIT)

    # --- lookups -------------------------------------------------------------------------

    def player(self, email: str) -> Player | None:
        for p in self.players:
            if p.email == email:
                return p
        return None

    def suggestion_of(self, email: str) -> str:
        for who, lines in self.suggestions:
            if who == email:
                return lines
        return ""

    def archived_at(self, email: str) -> datetime | None:
        """When this player last asked for the game's record (ARCHIVE), if ever."""
        for who, at in self.archives:
            if who == email:
                return at
        return None

    def delivery_of(self, email: str) -> DebateDelivery:
        for who, choice in self.debate_delivery:
            if who == email:
                return choice
        return DebateDelivery.ALL

    @property
    def active_players(self) -> tuple[Player, ...]:
        return tuple(p for p in self.players if p.active)

    def request(self, number: int) -> JoinRequest | None:
        for r in self.requests:
            if r.number == number:
                return r
        return None

    def voters_on(self, proposal: Proposal) -> tuple[Player, ...]:
        """Who votes on a proposal: active players who had joined when it was circulated."""
        return tuple(p for p in self.active_players if p.first_proposal <= proposal.number)

    def proposal(self, number: int) -> Proposal | None:
        proposals = self.proposals
        if proposals:  # numbered in order from the first (109): looked at where it must be
            guess = number - proposals[0].number
            if 0 <= guess < len(proposals) and proposals[guess].number == number:
                return proposals[guess]
        for p in proposals:
            if p.number == number:
                return p
        return None

    def appeal(self, appeal_id: str) -> Appeal | None:
        wanted = appeal_id.upper()
        for a in self.appeals:
            if a.id == wanted:
                return a
        return None

    def rule_by_identity(self, identity: int) -> Rule | None:
        return _by_identity(self.rules).get(identity)

    def current_number(self, identity: int) -> int:
        """The number the rule first numbered `identity` has now (109), for citing it in mail."""
        rule = self.rule_by_identity(identity)
        return rule.number if rule is not None else identity

    def rule_by_number(self, number: int) -> Rule | None:
        """The rule that has or once had this number (109: numbers are never reused)."""
        for r in self.rules:
            if r.number == number:
                return r
        for r in self.rules:
            if number in r.numbers:
                return r
        return None

    @property
    def rules_in_force(self) -> tuple[Rule, ...]:
        """The rules in force by number; the last answer is kept with the very tuple of rules
        it was read from, and given again while the state holds the same one."""
        rules = self.rules
        last = _IN_FORCE[0] if _IN_FORCE else None
        if last is not None and last[0] is rules:
            return last[1]
        found = tuple(sorted((r for r in rules if r.in_force), key=lambda r: r.number))
        _IN_FORCE[:] = [(rules, found)]
        return found

    @property
    def mutable_count(self) -> int:
        return sum(1 for r in self.rules if r.in_force and r.mutable)

    @property
    def over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def current(self) -> Proposal | None:
        if self.current_proposal is None:
            return None
        return self.proposal(self.current_proposal)

    @property
    def open_appeals(self) -> tuple[Appeal, ...]:
        return tuple(a for a in self.appeals if a.status is AppealStatus.OPEN)

    def waiting_of(self, email: str) -> tuple[WaitingAppeal, ...]:
        """This player's appeals waiting for a day of his limit (212), first to open first."""
        return tuple(w for w in self.waiting_appeals if w.appellant == email)

    def judge_of(self, appeal: Appeal) -> str | None:
        """Who may rule on the appeal now (212, 213, 214).

        An appeal is to the King, whoever is King when he rules. When the King is a party (he
        appealed), or the appeal is an accusation (213), the judge is the Champion the King
        names; until one is named there is no judge.
        """
        if appeal.champion is not None:
            return appeal.champion
        if appeal.kind is AppealKind.ACCUSATION or self.king is None:
            return None
        return None if self.king in appeal.parties else self.king

    # --- functional updates --------------------------------------------------------------

    def with_player(self, player: Player) -> GameState:
        return replace(
            self,
            players=tuple(player if p.email == player.email else p for p in self.players),
        )

    def with_rule(self, rule: Rule) -> GameState:
        if self.rule_by_identity(rule.identity) is None:
            return replace(self, rules=(*self.rules, rule))
        return replace(
            self, rules=tuple(rule if r.identity == rule.identity else r for r in self.rules)
        )

    def with_proposal(self, proposal: Proposal) -> GameState:
        proposals = self.proposals
        if proposals:  # where its number puts it (109: numbers are never reused, so only there)
            place = proposal.number - proposals[0].number
            if 0 <= place < len(proposals) and proposals[place].number == proposal.number:
                changed = (*proposals[:place], proposal, *proposals[place + 1 :])
                return replace(self, proposals=changed)
        if self.proposal(proposal.number) is None:
            return replace(self, proposals=(*proposals, proposal))
        return replace(
            self,
            proposals=tuple(proposal if p.number == proposal.number else p for p in self.proposals),
        )

    def with_appeal(self, appeal: Appeal) -> GameState:
        if self.appeal(appeal.id) is None:
            return replace(self, appeals=(*self.appeals, appeal))
        return replace(
            self, appeals=tuple(appeal if a.id == appeal.id else a for a in self.appeals)
        )


# The last rules looked up by identity and their index (the first rule of each identity): the
# rules are the same tuple from one adoption to the next, while they are looked up many times
_IDENTITIES: list[tuple[tuple[Rule, ...], dict[int, Rule]]] = []


def _by_identity(rules: tuple[Rule, ...]) -> dict[int, Rule]:
    last = _IDENTITIES[0] if _IDENTITIES else None
    if last is not None and last[0] is rules:
        return last[1]
    index: dict[int, Rule] = {}
    for rule in rules:
        index.setdefault(rule.identity, rule)
    _IDENTITIES[:] = [(rules, index)]
    return index


_GENERATED_REPR = GameState.__repr__


def _state_repr(self: GameState) -> str:
    """The dataclass's repr, then the fields left out at their default when they are not
    (what the chain's state digest hashes, field by field, in this order)."""
    text = _GENERATED_REPR(self)
    if self.mechanics is None:
        return text
    return f"{text[:-1]}, mechanics={self.mechanics!r})"


GameState.__repr__ = _state_repr  # type: ignore[method-assign, assignment]
