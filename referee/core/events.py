"""What goes into the rules engine (events) and what comes out (effects), rules 103-215.

An event is a player's command or a clock tick. An effect is an outcome for the command's
sender (accepted, or refused with a reason code) or a notice to some players. A player's
illegal move is an outcome with a reason, never an exception.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from referee.core.model import OMIT, DebateDelivery, Decided, ProposalKind, when_set
from referee.core.notices import Notice as Notice  # re-exported: effects live here
from referee.core.notices import NoticeKind as NoticeKind
from referee.core.outcomes import Done as Done
from referee.core.outcomes import Outcome as Outcome
from referee.core.outcomes import Reason as Reason
from referee.core.program import Program


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
    # the text's mechanics block, read and checked by the mail side (issue 26); left out of
    # the event's data while None, so the events of games without blocks are as they were
    program: Program | None = field(default=None, metadata=OMIT)


@dataclass(frozen=True)
class Revise:
    """REVISE N: the proposer's final form during the debate (112)."""

    sender: str
    number: int
    text: str
    sets: tuple[tuple[str, str], ...] = ()
    program: Program | None = field(default=None, metadata=OMIT)  # as in Propose


@dataclass(frozen=True)
class Act:
    """NAME args: an action a rule in force declares (issue 26); the arguments as the mail
    read them (a player's name or address, a number's text)."""

    sender: str
    action: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class AcceptOffer:
    """ACCEPT N: the player an action was offered to accepts it (issue 26)."""

    sender: str
    number: int


@dataclass(frozen=True)
class AnswerQuestion:
    """ANSWER N YES|NO: the King's answer to a rule's ASK (issue 26)."""

    sender: str
    number: int
    yes: bool


@dataclass(frozen=True)
class Vote:
    """VOTE N YES/NO (203, 208)."""

    sender: str
    number: int
    yes: bool


@dataclass(frozen=True)
class OpenAppeal:
    """APPEAL: a question for the King (212); `about`: the decision of the referee's answer
    the APPEAL was written in reply to (the mail layer's facts of it).

    `per_day` and `may_wait` are the operator's limits it was sent under (`[limits]
    appeals_per_day`, `appeals_waiting`), written into the log with it: beyond `per_day` in a
    UTC day, it waits for the next day, if fewer than `may_wait` of the sender's wait already.
    `per_day` 0: no daily limit."""

    sender: str
    question: str
    about: Decided | None = None
    per_day: int = 0
    may_wait: int = 0


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
    """ACCUSE: a subject's accusation that the King falsified a result (213); it counts
    against the same daily limits as APPEAL (`OpenAppeal`)."""

    sender: str
    evidence: str
    per_day: int = 0
    may_wait: int = 0


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
class Debate:
    """Words for the table (112): a reply in a proposal's thread that is not a command, or SAY."""

    sender: str
    text: str
    proposal: int | None = None  # the proposal debated; None: the table at large


@dataclass(frozen=True)
class ChooseDelivery:
    """DEBATE ALL|DIGEST|NONE: how the table's debate reaches this player (112)."""

    sender: str
    delivery: DebateDelivery


@dataclass(frozen=True)
class Suggest:
    """The commands a player's plain words seemed to mean, kept until a bare yes ("" clears)."""

    sender: str
    lines: str


@dataclass(frozen=True)
class Query:
    """STATUS, RULES, RULE N, HISTORY N, SCORES, HELP: read-only."""

    sender: str
    what: QueryKind
    number: int | None = None
    ref: str = ""  # the rule as the player named it when not by number ("§ 2.2", "II/III")


@dataclass(frozen=True)
class Archive:
    """ARCHIVE: a player asks for the game's record, the players' mail and the config (213)."""

    sender: str


@dataclass(frozen=True)
class AskToJoin:
    """JOIN Full Name, confirmed from the address: a stranger asks the King to play (201).
    `lookalikes`: the active players whose name or address it looks like, found with the
    confusables data the record names in `confusables` (`mail.lookalike.asking`)."""

    sender: str
    name: str
    lookalikes: tuple[str, ...] = when_set(())
    confusables: str = when_set("")


@dataclass(frozen=True)
class Admit:
    """The King's yes or no to request N to join (ADMIT N YES|NO, or a bare reply: `bare`)."""

    sender: str
    request: int
    yes: bool
    bare: bool = when_set(False)


@dataclass(frozen=True)
class MoveAddress:
    """ADDRESS new@..., confirmed from the new address: a player moves (the player stays)."""

    sender: str
    new: str


@dataclass(frozen=True)
class Enrol:
    """The operator adds a player (`nomic-referee players CONFIG add`), as if admitted."""

    email: str
    name: str
    surname: str = ""


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
    | Debate
    | ChooseDelivery
    | Suggest
    | Query
    | Archive
    | AskToJoin
    | Admit
    | MoveAddress
    | Act
    | AcceptOffer
    | AnswerQuestion
)
Event = Command | Enrol | Tick

EVENT_TYPES: tuple[type, ...] = (
    Act,
    AcceptOffer,
    AnswerQuestion,
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
    Debate,
    ChooseDelivery,
    Suggest,
    Query,
    Archive,
    AskToJoin,
    Admit,
    MoveAddress,
    Enrol,
    Tick,
)


# --- effects ---------------------------------------------------------------------------------


EVERYONE: tuple[str, ...] = ("*",)  # a notice for every active player


@dataclass(frozen=True)
class ArchiveRequest:
    """An effect of ARCHIVE: send `sender` the players' mail and the game's config with the
    reply. The engine has no store: the service reads the record and attaches it (213)."""

    sender: str


Effect = Outcome | Notice | ArchiveRequest
