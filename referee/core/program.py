"""A rule's mechanics block as the project's own tree of frozen values (issue 26; 101, 207, 211).

The notation's parser (`referee.notation`) reads a block into these values and nothing else;
the checker (`core.check`), the interpreter (`core.interpreter`) and the plain words
(`core.describe`) work on them. Numbers are exact fractions, so a block's arithmetic is the
same on every machine; every node keeps the line and column it was written at, for problems.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from fractions import Fraction


class HolderKind(enum.StrEnum):
    """Who holds a counter: each player, or the game once."""

    PLAYER = "player"
    GAME = "game"


class Period(enum.StrEnum):
    """A period of the game's clock (EVERY, LIMIT ... PER)."""

    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    TURN = "turn"


class Edge(enum.StrEnum):
    """Which end of a period an EVERY fires at."""

    START = "start"
    END = "end"


class ArgKind(enum.StrEnum):
    """The kind of an action's argument."""

    PLAYER = "player"
    NUMBER = "number"


class Mover(enum.StrEnum):
    """Who may send an action: any player, or the King."""

    PLAYER = "player"
    KING = "king"


# The events a handler may listen to (ON ...), besides `action.NAME`
EVENTS: tuple[str, ...] = (
    "proposal.made",
    "proposal.adopted",
    "proposal.rejected",
    "vote.cast",
    "turn.started",
    "turn.ended",
    "award.given",
    "player.joined",
    "player.left",
)
POINTS = "points"  # the game's score: a counter for each player that always exists (113)
GAME = "game"  # as a holder: the game's own pot of a counter


@dataclass(frozen=True)
class At:
    """Where a node was written in the block: line (1 = the block's first) and column."""

    line: int = 0
    column: int = 0


# --- expressions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    value: Fraction
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Name:
    """A built-in word (me, author, king, target ...), an argument, a loop or dice variable,
    or a `FOR game` counter."""

    name: str
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Attribute:
    """`holder.counter`: a player's value of a counter (`me.coins`)."""

    holder: str
    counter: str
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Unary:
    operator: str  # "-" | "not"
    operand: Expr
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Binary:
    operator: str  # + - * / = != < <= > >= and or
    left: Expr
    right: Expr
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Call:
    function: str  # floor | min | max | count
    args: tuple[Expr, ...]
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Ask:
    """`ASK king "question"`: a yes or no the King answers by reply."""

    who: str
    question: str
    at: At = field(default=At(), compare=False)


Expr = Number | Name | Attribute | Unary | Binary | Call | Ask

ARITHMETIC = ("+", "-", "*", "/")
COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
LOGIC = ("and", "or")
FUNCTIONS = ("floor", "min", "max", "count")


# --- effects ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Give:
    holder: str
    amount: Expr
    counter: str
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Take:
    holder: str
    amount: Expr
    counter: str
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Move:
    amount: Expr
    counter: str
    source: str
    target: str
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class SetValue:
    """`SET p.counter = expr`, or `SET counter = expr` for a `FOR game` counter (holder "")."""

    holder: str
    counter: str
    value: Expr
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Roll:
    """`ROLL r = 1..n`: a die drawn from the game's keyed hash (never the clock)."""

    name: str
    low: Expr
    high: Expr
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Announce:
    text: str
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Require:
    """`REQUIRE cond`: in an action, refuses the action (nothing applied) when false."""

    condition: Expr
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class If:
    condition: Expr
    then: tuple[Effect, ...]
    otherwise: tuple[Effect, ...] = ()
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class ForEach:
    """`FOR EACH player p: ...`: the active players, in the game's order."""

    name: str
    body: tuple[Effect, ...]
    at: At = field(default=At(), compare=False)


Effect = Give | Take | Move | SetValue | Roll | Announce | Require | If | ForEach


# --- declarations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Counter:
    """`COUNTER name FOR player|game START n MIN n MAX n DECIMALS d`. `holder` None: not said
    (a player counter, or only the decimals of `points`)."""

    name: str
    holder: HolderKind | None = None
    start: Fraction | None = None
    minimum: Fraction | None = None
    maximum: Fraction | None = None
    decimals: int | None = None
    at: At = field(default=At(), compare=False)

    @property
    def kind(self) -> HolderKind:
        return self.holder or HolderKind.PLAYER


@dataclass(frozen=True)
class Handler:
    """`ON event [IF cond]: effects`."""

    event: str
    condition: Expr | None
    body: tuple[Effect, ...]
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Every:
    """`EVERY period [START|END]: effects` (START when not said)."""

    period: Period
    edge: Edge
    body: tuple[Effect, ...]
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: ArgKind
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Limit:
    times: int
    per: Period


@dataclass(frozen=True)
class Acceptance:
    """`ACCEPTED BY arg WITHIN n DAYS`: the action is an offer the named player accepts."""

    by: str
    days: int


@dataclass(frozen=True)
class Action:
    """`ACTION name(args) BY player|king [LIMIT ...] [ACCEPTED BY ...]: body`."""

    name: str
    parameters: tuple[Parameter, ...]
    mover: Mover
    limit: Limit | None
    acceptance: Acceptance | None
    body: tuple[Effect, ...]
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Forbid:
    """`FORBID PROPOSE|VOTE|action WHEN cond`: `move` is "propose", "vote" or an action."""

    move: str
    condition: Expr
    at: At = field(default=At(), compare=False)


@dataclass(frozen=True)
class Win:
    """`WIN who WHEN cond`; `each` names the player variable of `FOR EACH player p: WIN p`."""

    who: Expr
    condition: Expr
    each: str = ""
    at: At = field(default=At(), compare=False)


Declaration = Counter | Handler | Every | Action | Forbid | Win


@dataclass(frozen=True)
class Program:
    """A rule's mechanics block: its declarations in the order written, and its source."""

    declarations: tuple[Declaration, ...]
    source: str = ""

    @property
    def counters(self) -> tuple[Counter, ...]:
        return tuple(d for d in self.declarations if isinstance(d, Counter))

    @property
    def handlers(self) -> tuple[Handler, ...]:
        return tuple(d for d in self.declarations if isinstance(d, Handler))

    @property
    def clocks(self) -> tuple[Every, ...]:
        return tuple(d for d in self.declarations if isinstance(d, Every))

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(d for d in self.declarations if isinstance(d, Action))

    @property
    def forbids(self) -> tuple[Forbid, ...]:
        return tuple(d for d in self.declarations if isinstance(d, Forbid))

    @property
    def wins(self) -> tuple[Win, ...]:
        return tuple(d for d in self.declarations if isinstance(d, Win))


class ProblemCode(enum.StrEnum):
    """Why a block is refused when proposed; each has words in both languages (describe)."""

    SYNTAX = "syntax"  # not the notation: `expected` says what would have been
    INDENT = "indent"  # an indented line that continues nothing, or a dedent to nowhere
    UNKNOWN_WORD = "unknown_word"  # a kind, period or event the notation does not know
    UNDECLARED = "undeclared"  # a counter nobody declares
    UNKNOWN_NAME = "unknown_name"  # a name with no meaning where it stands
    TYPES = "types"  # a number where a player is needed, or the other way round
    ME_OUTSIDE_ACTION = "me_outside_action"
    COMMAND_NAME = "command_name"  # an action named like a built-in command
    FORBID_VOTE = "forbid_vote"  # 106: every player's vote may not be taken away
    DUPLICATE = "duplicate"  # two counters or actions of one name
    KIND_CLASH = "kind_clash"  # a counter declared again with another holder kind
    ASK_PLACE = "ask_place"  # ASK is a condition of an IF, of the King


@dataclass(frozen=True)
class Problem:
    """Why a block is refused: where (line and column in the block), what, what was expected."""

    code: ProblemCode
    line: int
    column: int
    detail: str = ""  # the word at fault
    expected: tuple[str, ...] = ()  # for SYNTAX: the words that would have been read there
