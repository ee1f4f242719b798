"""What goes into the rules engine (events) and what comes out (effects), rules 103-215.

An event is a player's command or a clock tick. An effect is an outcome for the command's
sender (accepted, or refused with a reason code) or a notice to some players. A player's
illegal move is an outcome with a reason, never an exception.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.core.model import ProposalKind
from referee.core.threads import Thread


class QueryKind(enum.StrEnum):
    STATUS = "status"
    RULES = "rules"
    RULE = "rule"
    HISTORY = "history"
    SCORES = "scores"
    HELP = "help"


# --- events ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Propose:
    """PROPOSE ...: the turn's rule change (103, 109, 201, 202)."""

    sender: str
    kind: ProposalKind
    target: int | None = None
    amendment: str | None = None  # "N.K" for the amendment kinds
    text: str = ""
    sets: tuple[tuple[str, str], ...] = ()
    immutable: bool = False  # PROPOSE ENACT IMMUTABLE: refused (103)
    ref: str = ""  # the rule as the player named it when not by number ("§ 2.2", "II/III")


@dataclass(frozen=True)
class Revise:
    """REVISE N: the proposer's final form during the debate (112)."""

    sender: str
    number: int
    text: str
    sets: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Vote:
    """VOTE N YES/NO (203, 208)."""

    sender: str
    number: int
    yes: bool


@dataclass(frozen=True)
class OpenAppeal:
    """APPEAL: a question for the King (212)."""

    sender: str
    question: str


@dataclass(frozen=True)
class NameChampion:
    """CHAMPION A who: the King names who judges in his place (212, 213)."""

    sender: str
    appeal: str
    who: str


@dataclass(frozen=True)
class GiveRuling:
    """RULING A: a proposed settlement (212); UPHELD/DISMISSED (213); IMPOSSIBLE who (215)."""

    sender: str
    appeal: str
    text: str
    verdict: str | None = None  # "upheld" | "dismissed"
    impossible: str | None = None  # name or email of the first player unable to complete a turn


@dataclass(frozen=True)
class Agree:
    """AGREE A / DISAGREE A (212)."""

    sender: str
    appeal: str
    agree: bool


@dataclass(frozen=True)
class Accuse:
    """ACCUSE: a subject's accusation that the King falsified a result (213)."""

    sender: str
    evidence: str


@dataclass(frozen=True)
class Crown:
    """CROWN who: the deposed King chooses his successor (213, 214)."""

    sender: str
    who: str


@dataclass(frozen=True)
class Award:
    """AWARD P: the King's points that end the turn (202 (4))."""

    sender: str
    points: int


@dataclass(frozen=True)
class Extend:
    """EXTEND N DAYS: the King lengthens the debate (112)."""

    sender: str
    number: int
    days: int


@dataclass(frozen=True)
class Quit:
    """QUIT: a player leaves the game (114)."""

    sender: str


@dataclass(frozen=True)
class Confirm:
    """CONFIRM N: the King keeps the parameters of rule N as they were (parameter prompt)."""

    sender: str
    rule: int
    ref: str = ""  # the rule as the King named it when not by number ("§ 5.4")


@dataclass(frozen=True)
class SetParameter:
    """SET name = value outside a proposal: the King settles a parameter the prompt asked about."""

    sender: str
    name: str
    value: str


@dataclass(frozen=True)
class NameWinner:
    """WINNER who: the King decides between players who crossed the line together (209)."""

    sender: str
    who: str


@dataclass(frozen=True)
class Query:
    """STATUS, RULES, RULE N, HISTORY N, SCORES, HELP: read-only."""

    sender: str
    what: QueryKind
    number: int | None = None
    ref: str = ""  # the rule as the player named it when not by number ("§ 2.2", "II/III")


@dataclass(frozen=True)
class Tick:
    """The clock: fire whatever deadline is due (112, 203, reminders)."""


Command = (
    Propose
    | Revise
    | Vote
    | OpenAppeal
    | NameChampion
    | GiveRuling
    | Agree
    | Accuse
    | Crown
    | Award
    | Extend
    | Quit
    | Confirm
    | SetParameter
    | NameWinner
    | Query
)
Event = Command | Tick

EVENT_TYPES: tuple[type, ...] = (
    Propose,
    Revise,
    Vote,
    OpenAppeal,
    NameChampion,
    GiveRuling,
    Agree,
    Accuse,
    Crown,
    Award,
    Extend,
    Quit,
    Confirm,
    SetParameter,
    NameWinner,
    Query,
    Tick,
)


# --- effects ---------------------------------------------------------------------------------


class Done(enum.StrEnum):
    """Codes of accepted commands; each has a template in every language."""

    PROPOSAL_ACCEPTED = "proposal_accepted"
    REVISION_ACCEPTED = "revision_accepted"
    VOTE_RECORDED = "vote_recorded"
    VOTE_REPLACED = "vote_replaced"
    APPEAL_OPENED = "appeal_opened"
    ACCUSATION_OPENED = "accusation_opened"
    CHAMPION_NAMED = "champion_named"
    RULING_PUBLISHED = "ruling_published"
    AGREEMENT_RECORDED = "agreement_recorded"
    CROWNED = "crowned"
    AWARD_RECORDED = "award_recorded"
    DEBATE_EXTENDED = "debate_extended"
    QUIT_RECORDED = "quit_recorded"
    PARAMETERS_CONFIRMED = "parameters_confirmed"
    PARAMETER_SET = "parameter_set"
    WINNER_NAMED = "winner_named"
    STATUS = "status"
    RULES = "rules"
    RULE = "rule"
    HISTORY = "history"
    SCORES = "scores"
    HELP = "help"


class Reason(enum.StrEnum):
    """Why a command was refused; each has a template in every language."""

    GAME_OVER = "game_over"
    NOT_ACTIVE = "not_active"
    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    APPEAL_PENDING = "appeal_pending"
    NOT_KING = "not_king"
    NOT_JUDGE = "not_judge"
    NOT_PROPOSER = "not_proposer"
    UNKNOWN_RULE = "unknown_rule"
    AMBIGUOUS_RULE = "ambiguous_rule"  # a label several rules share
    RULE_REPEALED = "rule_repealed"
    RULE_IMMUTABLE = "rule_immutable"
    ENACT_IMMUTABLE = "enact_immutable"
    UNKNOWN_AMENDMENT = "unknown_amendment"
    EMPTY_TEXT = "empty_text"
    TOO_MANY_MUTABLE = "too_many_mutable"
    NO_MUTABLE_LEFT = "no_mutable_left"
    UNKNOWN_PROPOSAL = "unknown_proposal"
    VOTE_CLOSED = "vote_closed"
    DEBATE_OVER = "debate_over"
    NO_TEXT_TO_REVISE = "no_text_to_revise"
    UNKNOWN_PARAMETER = "unknown_parameter"
    BAD_PARAMETER = "bad_parameter"
    PARAMETER_NOT_ALLOWED = "parameter_not_allowed"
    NO_PARAMETER_QUESTION = "no_parameter_question"
    AWARD_OUT_OF_RANGE = "award_out_of_range"
    BAD_DAYS = "bad_days"
    UNKNOWN_PLAYER = "unknown_player"
    UNKNOWN_APPEAL = "unknown_appeal"
    APPEAL_SETTLED = "appeal_settled"
    NO_RULING_YET = "no_ruling_yet"
    KING_CANNOT_JUDGE = "king_cannot_judge"
    JUDGE_ALREADY_NAMED = "judge_already_named"
    KING_CANNOT_ACCUSE = "king_cannot_accuse"
    NO_KING = "no_king"
    NOT_DEPOSED = "not_deposed"
    CANNOT_CROWN_SELF = "cannot_crown_self"
    VERDICT_NEEDED = "verdict_needed"
    NO_TIE = "no_tie"
    NOT_IN_TIE = "not_in_tie"
    SYNTAX = "syntax"
    NO_COMMAND = "no_command"
    NOT_AUTHENTICATED = "not_authenticated"
    TOO_LARGE = "too_large"
    # Refusals of the mail layer (referee/mail, issue 7): what the player wrote, and limits.
    NO_SINGLE_SENDER = "no_single_sender"
    DUPLICATE_HEADER = "duplicate_header"
    TOO_LONG = "too_long"
    TOO_MANY_COMMANDS = "too_many_commands"
    TOO_MANY_APPEALS = "too_many_appeals"
    TOO_MANY_MAILS = "too_many_mails"
    DAILY_LIMIT = "daily_limit"
    QUOTED_NOTICE = "quoted_notice"


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
    AWARD_PROMPT = "award_prompt"  # 202 (4)
    AWARD_REMINDER = "award_reminder"
    MAJORITY_NOW = "majority_now"  # 204
    APPEAL_OPENED = "appeal_opened"  # 212
    CHAMPION_PROMPT = "champion_prompt"  # 212, 213
    CHAMPION_NAMED = "champion_named"
    RULING_PUBLISHED = "ruling_published"
    RULING_FAILED = "ruling_failed"
    APPEAL_SETTLED = "appeal_settled"
    KING_DEPOSED = "king_deposed"  # 213
    CROWN_PROMPT = "crown_prompt"  # 213
    KING_CROWNED = "king_crowned"  # 214
    PLAYER_QUIT = "player_quit"  # 114
    PARAMETER_PROMPT = "parameter_prompt"
    TIE_PROMPT = "tie_prompt"  # 209
    WINNER = "winner"  # 209, 215


EVERYONE: tuple[str, ...] = ("*",)  # a notice for every active player


@dataclass(frozen=True)
class Outcome:
    """The result of one command, for the sender's combined reply."""

    ok: bool
    code: str  # a Done or a Reason value
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Notice:
    """A mail to some players (or EVERYONE); `thread` ties it to a proposal or appeal."""

    kind: NoticeKind
    to: tuple[str, ...]
    data: Mapping[str, Any] = field(default_factory=dict)
    thread: Thread | None = None


Effect = Outcome | Notice
