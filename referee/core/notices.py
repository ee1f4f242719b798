"""One typed payload per kind of mail the referee sends of its own accord (107, 202-215).

Each notice kind (`NoticeKind`) has exactly one frozen dataclass here, whose fields are what its
template may print; mypy checks every place the engine builds one, and a test checks that every
template asks for nothing else. Nested views of proposals, appeals, rules and scores are the
plain data of `view` (dicts and lists a template reads as they are).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from referee.core.model import field_names
from referee.core.threads import Thread


class NoticeKind(enum.StrEnum):
    """Mail the referee sends of its own accord; each has a template in every language."""

    GAME_STARTED = "game_started"
    TURN_STARTED = "turn_started"
    TURN_REMINDER = "turn_reminder"
    PROPOSAL_CIRCULATED = "proposal_circulated"  # 107
    PROPOSAL_REVISED = "proposal_revised"  # 112
    DEBATE_EXTENDED = "debate_extended"  # 112
    DEBATE_ENDED = "debate_ended"  # 202 (3)
    VOTE_REMINDER = "vote_reminder"  # 203
    VOTE_RESULT = "vote_result"  # 203
    RULESET = "ruleset"  # 205
    SCORES = "scores"  # 205: a change of scores alone
    AWARD_PROMPT = "award_prompt"  # 202 (4)
    AWARD_REMINDER = "award_reminder"
    MAJORITY_NOW = "majority_now"  # 204
    APPEAL_OPENED = "appeal_opened"  # 212
    APPEAL_DROPPED = "appeal_dropped"  # 212: a waiting appeal the rules no longer allow
    CHAMPION_PROMPT = "champion_prompt"  # 212, 213
    CHAMPION_NAMED = "champion_named"
    RULING_PUBLISHED = "ruling_published"
    RULING_FAILED = "ruling_failed"
    APPEAL_SETTLED = "appeal_settled"
    RULING_PROMPT = "ruling_prompt"  # 212: the facts of a decision and the referee's draft
    RULING_APPLIED = "ruling_applied"  # 212, 108: a settled correction, carried out or not
    KING_DEPOSED = "king_deposed"  # 213
    CROWN_PROMPT = "crown_prompt"  # 213
    KING_CROWNED = "king_crowned"  # 214
    PLAYER_QUIT = "player_quit"  # 114
    PARAMETER_PROMPT = "parameter_prompt"
    TIE_PROMPT = "tie_prompt"  # 209
    TIE = "tie"  # 209: to the table, the tie and who decides it
    WINNER = "winner"  # 209, 215
    JOIN_PROMPT = "join_prompt"  # the King answers a request to join
    JOIN_REFUSED = "join_refused"  # to the applicant
    PLAYER_JOINED = "player_joined"  # 201: to the table
    WELCOME = "welcome"  # 101, 205: to the newcomer, with the ruleset
    ADDRESS_MOVED = "address_moved"  # to the table
    DEBATE = "debate"  # 112: a player's words relayed to the table
    DEBATE_DIGEST = "debate_digest"  # 112: a day's debate in one mail


View = dict[str, Any]  # a plain-data view of a proposal or an appeal (referee.core.view)


@dataclass(frozen=True)
class NoticePayload:
    """The base: a payload knows its kind and gives its fields to the template."""

    kind: ClassVar[NoticeKind]

    def fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(type(self))}


@dataclass(frozen=True)
class GameStarted(NoticePayload):
    """101, 205: the opening: how to play, then the ruleset and the players."""

    kind: ClassVar[NoticeKind] = NoticeKind.GAME_STARTED
    rules: list[View]
    scores: list[View]
    adoption: str
    parameters: dict[str, int]
    king: str
    house_values: list[View]  # parameters no rule carries, with their house value
    example: str  # a mutable rule in force to name in examples (`mechanics.example_rule`)
    first: str  # the player whose turn comes first
    proposal: int  # the number the first proposal will take (109)


@dataclass(frozen=True)
class Ruleset(NoticePayload):
    """205: the ruleset and scores after a change, opening with what changed."""

    kind: ClassVar[NoticeKind] = NoticeKind.RULESET
    changes: View
    rules: list[View]
    scores: list[View]
    adoption: str
    parameters: dict[str, int]
    king: str
    house_values: list[View]  # parameters no rule carries, with their house value


@dataclass(frozen=True)
class Scores(NoticePayload):
    """205: the scores after a change of scores alone, opening with what changed; the rules
    did not change, so the ruleset is not sent again."""

    kind: ClassVar[NoticeKind] = NoticeKind.SCORES
    changes: View
    scores: list[View]
    king: str
    winning_score: int


@dataclass(frozen=True)
class TurnStarted(NoticePayload):
    """201: whose turn it is; when the step also changed the scores (the King's award ended
    the last turn), the mail carries them and what changed (205) instead of a mail of its own."""

    kind: ClassVar[NoticeKind] = NoticeKind.TURN_STARTED
    player: str
    email: str
    round: int
    example: str  # a mutable rule in force to name in the example proposal, or ""
    changes: View | None = None
    scores: list[View] | None = None


@dataclass(frozen=True)
class TurnReminder(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.TURN_REMINDER
    player: str
    since: datetime | None


@dataclass(frozen=True)
class ProposalCirculated(NoticePayload):
    """107: the proposal, what it changes (old and new text), and who proposed it."""

    kind: ClassVar[NoticeKind] = NoticeKind.PROPOSAL_CIRCULATED
    proposal: View
    diff: str
    old_text: str
    new_text: str
    proposer: str


@dataclass(frozen=True)
class ProposalRevised(NoticePayload):
    """112: the revised proposal; `old_text` is its previous text."""

    kind: ClassVar[NoticeKind] = NoticeKind.PROPOSAL_REVISED
    proposal: View
    diff: str
    old_text: str
    new_text: str
    proposer: str


@dataclass(frozen=True)
class DebateExtended(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.DEBATE_EXTENDED
    number: int
    days: int
    debate_ends: datetime
    vote_deadline: datetime


@dataclass(frozen=True)
class DebateEnded(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.DEBATE_ENDED
    number: int
    vote_deadline: datetime
    missing: list[str]


@dataclass(frozen=True)
class VoteReminder(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.VOTE_REMINDER
    number: int
    vote_deadline: datetime
    missing: list[str]


@dataclass(frozen=True)
class VoteResult(NoticePayload):
    """203: who voted how, adopted or not, and every rule and score it changed (206)."""

    kind: ClassVar[NoticeKind] = NoticeKind.VOTE_RESULT
    proposal: View
    adopted: bool
    outcome: str
    needed: str
    yes: int
    no: int
    ballots: list[View]
    changes: View
    # the rule that decided how many votes it needed, as the rules stood at the close, and the
    # rule on adoption (204) it prevailed over when that was another rule (110, 204, 211)
    decided: Mapping[str, str] = field(default_factory=dict)
    over: Mapping[str, str] | None = None


@dataclass(frozen=True)
class AwardPrompt(NoticePayload):
    """202 (4): the King's points for the turn player."""

    kind: ClassVar[NoticeKind] = NoticeKind.AWARD_PROMPT
    player: str
    proposal: int | None
    adopted: bool
    low: int
    high: int


@dataclass(frozen=True)
class AwardReminder(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.AWARD_REMINDER
    player: str
    proposal: int | None
    adopted: bool
    low: int
    high: int


@dataclass(frozen=True)
class MajorityNow(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.MAJORITY_NOW
    rounds: int
    dissent: bool  # whether a rule in force grants the dissent bonus (206)
    decided: Mapping[str, str]  # the citation of the rule that made the switch
    over: Mapping[str, str] | None = None  # the rule on adoption (204) it prevails over (211)


@dataclass(frozen=True)
class AppealOpened(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.APPEAL_OPENED
    appeal: View


@dataclass(frozen=True)
class AppealDropped(NoticePayload):
    """212: to the appellant, an appeal (or accusation) that waited for a day of his limit
    and is not opened on that day, because the rules no longer allow it (`reason`: the
    refusal's code and data, as a reply's line has them)."""

    kind: ClassVar[NoticeKind] = NoticeKind.APPEAL_DROPPED
    accusation: bool
    question: str
    asked: datetime
    reason: View


@dataclass(frozen=True)
class ChampionPrompt(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.CHAMPION_PROMPT
    appeal: View


@dataclass(frozen=True)
class ChampionNamed(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.CHAMPION_NAMED
    appeal: View


@dataclass(frozen=True)
class RulingPublished(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.RULING_PUBLISHED
    appeal: View


@dataclass(frozen=True)
class RulingFailed(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.RULING_FAILED
    appeal: View


@dataclass(frozen=True)
class RulingPrompt(NoticePayload):
    """212: to the judge of an appeal about a decision of the referee's: the facts, the draft."""

    kind: ClassVar[NoticeKind] = NoticeKind.RULING_PROMPT
    appeal: View
    decision: View


@dataclass(frozen=True)
class RulingApplied(NoticePayload):
    """212, 108: a settled ruling corrected a refusal: carried out now, or too late for it."""

    kind: ClassVar[NoticeKind] = NoticeKind.RULING_APPLIED
    appeal: View
    decision: View
    applied: bool
    code: str  # the outcome of deciding the command again now
    data: View


@dataclass(frozen=True)
class AppealSettled(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.APPEAL_SETTLED
    appeal: View


@dataclass(frozen=True)
class KingDeposed(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.KING_DEPOSED
    king: str
    penalty: int
    appeal: str


@dataclass(frozen=True)
class CrownPrompt(NoticePayload):
    """213: the deposed King chooses a successor by `due`, or the crown passes on."""

    kind: ClassVar[NoticeKind] = NoticeKind.CROWN_PROMPT
    reminder: bool
    due: datetime


@dataclass(frozen=True)
class KingCrowned(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.KING_CROWNED
    king: str
    rule: str  # the mechanic the crown passes under: "deposition" (213) or "custom" (212)
    previous: str = ""  # the King before, whose waiting questions pass to the new one
    judges: list[str] = field(default_factory=list)  # open appeals he judges now


@dataclass(frozen=True)
class PlayerQuit(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.PLAYER_QUIT
    player: str
    withdrawn: int | None


@dataclass(frozen=True)
class ParameterPrompt(NoticePayload):
    """111, 211: an amendment silent on a parameter its rule carries; `rule_was` is the
    number the rule had when proposed, `rule` the one it has now (109)."""

    kind: ClassVar[NoticeKind] = NoticeKind.PARAMETER_PROMPT
    rule: int
    rule_was: int | None
    proposal: int
    parameters: list[View]
    previous: str = ""  # the King it was first put to, when the crown has passed since (214)


@dataclass(frozen=True)
class TiePrompt(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.TIE_PROMPT
    players: list[View]
    target: int


@dataclass(frozen=True)
class Tie(NoticePayload):
    """209: players level at the winning score; the King in office names the winner."""

    kind: ClassVar[NoticeKind] = NoticeKind.TIE
    players: list[View]
    target: int
    king: str  # empty while there is no King (213): the decision waits for the next


@dataclass(frozen=True)
class Winner(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.WINNER
    winner: str
    score: int
    # the mechanic: "winning" (209, 113: the score), "impossible" (215), or "block": a rule's
    # WIN (issue 26), cited under that key
    rule: str
    scores: list[View]
    changes: View | None = None  # the score changes of the step that ended the game (205)


@dataclass(frozen=True)
class JoinPrompt(NoticePayload):
    """The King's yes or no to a confirmed request to join; `round` is the newcomer's first."""

    kind: ClassVar[NoticeKind] = NoticeKind.JOIN_PROMPT
    number: int
    name: str
    email: str
    round: int
    reminder: bool = False
    close: list[str] = field(default_factory=list)  # players whose names are close to it
    # players whose name or address it looks like (Unicode's confusables): a written yes only
    lookalike: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class JoinRefused(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.JOIN_REFUSED
    name: str
    king: str


@dataclass(frozen=True)
class PlayerJoined(NoticePayload):
    """201: who joined, from which round they take turns, from which proposal they vote."""

    kind: ClassVar[NoticeKind] = NoticeKind.PLAYER_JOINED
    player: str
    round: int
    first_proposal: int
    order: list[str]  # the turn order from that round
    by: str  # "king" | "operator"


@dataclass(frozen=True)
class Welcome(NoticePayload):
    """To a newcomer: how to play, then the ruleset and the scores (101, 205)."""

    kind: ClassVar[NoticeKind] = NoticeKind.WELCOME
    player: str
    round: int
    first_proposal: int
    rules: list[View]
    scores: list[View]
    adoption: str
    parameters: dict[str, int]
    king: str
    house_values: list[View]


@dataclass(frozen=True)
class AddressMoved(NoticePayload):
    kind: ClassVar[NoticeKind] = NoticeKind.ADDRESS_MOVED
    player: str
    old: str
    new: str


@dataclass(frozen=True)
class DebatePost(NoticePayload):
    """112: a player's words on a proposal (or to the table), relayed to the others."""

    kind: ClassVar[NoticeKind] = NoticeKind.DEBATE
    author: str  # the author's name
    author_email: str
    proposal: int | None  # None: said to the table outside any proposal
    text: str


@dataclass(frozen=True)
class DebateDigest(NoticePayload):
    """112: the day's debate for a player who asked for a digest, oldest first."""

    kind: ClassVar[NoticeKind] = NoticeKind.DEBATE_DIGEST
    posts: list[View]  # author, at, proposal, text


PAYLOADS: tuple[type[NoticePayload], ...] = (
    GameStarted,
    Ruleset,
    Scores,
    TurnStarted,
    TurnReminder,
    ProposalCirculated,
    ProposalRevised,
    DebateExtended,
    DebateEnded,
    VoteReminder,
    VoteResult,
    AwardPrompt,
    AwardReminder,
    MajorityNow,
    AppealOpened,
    AppealDropped,
    ChampionPrompt,
    ChampionNamed,
    RulingPublished,
    RulingFailed,
    AppealSettled,
    RulingPrompt,
    RulingApplied,
    KingDeposed,
    CrownPrompt,
    KingCrowned,
    PlayerQuit,
    ParameterPrompt,
    TiePrompt,
    Tie,
    Winner,
    JoinPrompt,
    JoinRefused,
    PlayerJoined,
    Welcome,
    AddressMoved,
    DebatePost,
    DebateDigest,
)
PAYLOAD_OF: dict[NoticeKind, type[NoticePayload]] = {p.kind: p for p in PAYLOADS}


@dataclass(frozen=True)
class Notice:
    """A mail to some players (or EVERYONE); `thread` ties it to a proposal, appeal or prompt."""

    to: tuple[str, ...]
    payload: NoticePayload
    thread: Thread | None = None
    # The rule each mechanic is cited by, as the rules stood when the notice was written
    # (`referee.core.mechanics.citations`); the templates' `cite(...)` reads it.
    cites: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False)

    @property
    def kind(self) -> NoticeKind:
        return self.payload.kind

    @property
    def data(self) -> dict[str, Any]:
        """What the template reads: the payload's fields, and the citations."""
        return {**self.payload.fields(), "cites": self.cites}
