"""Check a mechanics block when it is proposed (issue 26; rules 101, 104, 106, 111, 207).

A block is refused, with the line, the column and what is wrong, when it names a counter
nobody declares, mixes a number with a player, uses `me` outside an ACTION, names an action
like a built-in command (in either language), takes away every player's vote (`FORBID VOTE`,
106), or asks the King anywhere but in the condition of an IF. What the other rules in force
declare is the block's `Scope`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from referee.core import program as p


class Type(enum.StrEnum):
    """The type of a value in a block."""

    NUMBER = "number"
    PLAYER = "player"
    BOOL = "condition"
    GAME = "game"  # the game as a holder (its pot of a counter)


@dataclass(frozen=True)
class CounterInfo:
    kind: p.HolderKind
    decimals: int = 0


POINTS_INFO = CounterInfo(p.HolderKind.PLAYER, 0)


@dataclass(frozen=True)
class Scope:
    """What a block sees beside itself: the counters and actions other rules in force declare
    (points always), and the built-in mail commands' words of both languages."""

    counters: Mapping[str, CounterInfo] = field(default_factory=dict)
    actions: frozenset[str] = frozenset()
    commands: frozenset[str] = frozenset()


# The words each event gives its handlers (issue 26: "The words mean")
EVENT_WORDS: Mapping[str, Mapping[str, Type]] = {
    "proposal.made": {"author": Type.PLAYER, "proposal": Type.NUMBER},
    "proposal.adopted": {"author": Type.PLAYER, "proposal": Type.NUMBER},
    "proposal.rejected": {"author": Type.PLAYER, "proposal": Type.NUMBER},
    "vote.cast": {
        "voter": Type.PLAYER,
        "vote": Type.BOOL,
        "author": Type.PLAYER,
        "proposal": Type.NUMBER,
    },
    "turn.started": {"player": Type.PLAYER},
    "turn.ended": {"player": Type.PLAYER},
    "award.given": {"player": Type.PLAYER, "amount": Type.NUMBER},
    "player.joined": {"player": Type.PLAYER},
    "player.left": {"player": Type.PLAYER},
}
ACTION_EVENT_WORDS: Mapping[str, Type] = {"player": Type.PLAYER}
EVERYWHERE: Mapping[str, Type] = {"king": Type.PLAYER, "game": Type.GAME}
# The words no argument, loop or dice variable may take: they mean something already
RESERVED = frozenset(
    {"me", "king", "game", "author", "voter", "vote", "player", "players", "amount", "proposal"}
)


class _Refused(Exception):
    def __init__(self, problem: p.Problem) -> None:
        super().__init__(problem.code.value)
        self.problem = problem


def _refuse(at: p.At, code: p.ProblemCode, detail: str = "", expected: str = "") -> _Refused:
    return _Refused(p.Problem(code, at.line, at.column, detail, (expected,) if expected else ()))


def counters_of(program: p.Program, scope: Scope) -> dict[str, CounterInfo]:
    """Every counter a block can name: points, the scope's, and its own."""
    known = {p.POINTS: POINTS_INFO, **scope.counters}
    for counter in program.counters:
        if counter.name == p.POINTS:
            known[p.POINTS] = CounterInfo(p.HolderKind.PLAYER, counter.decimals or 0)
        else:
            known[counter.name] = CounterInfo(counter.kind, counter.decimals or 0)
    return known


def check(program: p.Program, scope: Scope) -> list[p.Problem]:
    """The problems of a block, in the order written (the first is what a refusal shows)."""
    try:
        _Checker(program, scope).run()
    except _Refused as refused:
        return [refused.problem]
    return []


class _Checker:
    def __init__(self, program: p.Program, scope: Scope) -> None:
        self.program = program
        self.scope = scope
        self.counters = counters_of(program, scope)
        self.actions = {a.name for a in program.actions} | set(scope.actions)

    def run(self) -> None:
        self.declarations()
        for declaration in self.program.declarations:
            self.declaration(declaration)

    def declarations(self) -> None:
        seen: set[str] = set()
        for counter in self.program.counters:
            if counter.name in seen:
                raise _refuse(counter.at, p.ProblemCode.DUPLICATE, counter.name)
            seen.add(counter.name)
            if counter.name == p.POINTS:
                if counter.holder is p.HolderKind.GAME:
                    raise _refuse(counter.at, p.ProblemCode.KIND_CLASH, counter.name, "player")
                continue
            other = self.scope.counters.get(counter.name)
            if other is not None and other.kind is not counter.kind:
                raise _refuse(counter.at, p.ProblemCode.KIND_CLASH, counter.name, other.kind)
            low, high = counter.minimum, counter.maximum
            if low is not None and high is not None and low > high:
                raise _refuse(counter.at, p.ProblemCode.TYPES, counter.name)
        names: set[str] = set()
        for action in self.program.actions:
            folded = action.name.casefold()
            if folded in self.scope.commands or action.name.upper() in self.scope.commands:
                raise _refuse(action.at, p.ProblemCode.COMMAND_NAME, action.name)
            if action.name in names or action.name in self.scope.actions:
                raise _refuse(action.at, p.ProblemCode.DUPLICATE, action.name)
            names.add(action.name)

    def declaration(self, declaration: p.Declaration) -> None:
        if isinstance(declaration, p.Handler):
            words = self.event_words(declaration)
            if declaration.condition is not None:
                self.want(declaration.condition, words, Type.BOOL)
            self.body(declaration.body, words, in_loop=False)
        elif isinstance(declaration, p.Every):
            self.body(declaration.body, dict(EVERYWHERE), in_loop=False)
        elif isinstance(declaration, p.Action):
            self.action(declaration)
        elif isinstance(declaration, p.Forbid):
            self.forbid(declaration)
        elif isinstance(declaration, p.Win):
            words = dict(EVERYWHERE)
            if declaration.each:
                self.bind(words, declaration.each, Type.PLAYER, declaration.at)
            self.want(declaration.who, words, Type.PLAYER)
            self.want(declaration.condition, words, Type.BOOL)

    def event_words(self, handler: p.Handler) -> dict[str, Type]:
        words = dict(EVERYWHERE)
        if handler.event.startswith("action."):
            if handler.event.split(".", 1)[1] not in self.actions:
                raise _refuse(handler.at, p.ProblemCode.UNKNOWN_NAME, handler.event)
            words.update(ACTION_EVENT_WORDS)
        else:
            words.update(EVENT_WORDS[handler.event])
        return words

    def action(self, action: p.Action) -> None:
        words = dict(EVERYWHERE)
        words["me"] = Type.PLAYER
        for parameter in action.parameters:
            kind = Type.PLAYER if parameter.kind is p.ArgKind.PLAYER else Type.NUMBER
            self.bind(words, parameter.name, kind, parameter.at)
        if action.acceptance is not None and words.get(action.acceptance.by) is not Type.PLAYER:
            raise _refuse(action.at, p.ProblemCode.UNKNOWN_NAME, action.acceptance.by, "player")
        if action.limit is not None and action.limit.times < 1:
            raise _refuse(action.at, p.ProblemCode.TYPES, str(action.limit.times))
        self.body(action.body, words, in_loop=False)

    def forbid(self, forbid: p.Forbid) -> None:
        if forbid.move == "vote":  # 106: every player's vote stands; no rule takes it away
            raise _refuse(forbid.at, p.ProblemCode.FORBID_VOTE, "106")
        if forbid.move != "propose" and forbid.move not in self.actions:
            raise _refuse(forbid.at, p.ProblemCode.UNKNOWN_NAME, forbid.move)
        words = {**EVERYWHERE, "player": Type.PLAYER}
        self.want(forbid.condition, words, Type.BOOL)

    def bind(self, words: dict[str, Type], name: str, kind: Type, at: p.At) -> None:
        if name in RESERVED or name in words or name in self.counters:
            raise _refuse(at, p.ProblemCode.DUPLICATE, name)
        words[name] = kind

    # --- effects

    def body(self, effects: tuple[p.Effect, ...], words: dict[str, Type], in_loop: bool) -> None:
        local = dict(words)
        for effect in effects:
            self.effect(effect, local, in_loop)

    def effect(self, effect: p.Effect, words: dict[str, Type], in_loop: bool) -> None:
        if isinstance(effect, p.Give | p.Take):
            self.holder(effect.holder, effect.counter, words, effect.at)
            self.want(effect.amount, words, Type.NUMBER)
        elif isinstance(effect, p.Move):
            self.holder(effect.source, effect.counter, words, effect.at)
            self.holder(effect.target, effect.counter, words, effect.at)
            self.want(effect.amount, words, Type.NUMBER)
        elif isinstance(effect, p.SetValue):
            if effect.holder:
                self.holder(effect.holder, effect.counter, words, effect.at)
            else:
                info = self.counter(effect.counter, effect.at)
                if info.kind is not p.HolderKind.GAME:
                    raise _refuse(effect.at, p.ProblemCode.TYPES, effect.counter, "game")
            self.want(effect.value, words, Type.NUMBER)
        elif isinstance(effect, p.Roll):
            self.want(effect.low, words, Type.NUMBER)
            self.want(effect.high, words, Type.NUMBER)
            self.bind(words, effect.name, Type.NUMBER, effect.at)
        elif isinstance(effect, p.Require):
            self.want(effect.condition, words, Type.BOOL)
        elif isinstance(effect, p.If):
            if isinstance(effect.condition, p.Ask):
                if in_loop or effect.condition.who != "king":
                    raise _refuse(effect.condition.at, p.ProblemCode.ASK_PLACE, "ASK")
            else:
                self.want(effect.condition, words, Type.BOOL)
            self.body(effect.then, words, in_loop)
            self.body(effect.otherwise, words, in_loop)
        elif isinstance(effect, p.ForEach):
            inner = dict(words)
            self.bind(inner, effect.name, Type.PLAYER, effect.at)
            self.body(effect.body, inner, in_loop=True)

    def counter(self, name: str, at: p.At) -> CounterInfo:
        info = self.counters.get(name)
        if info is None:
            raise _refuse(at, p.ProblemCode.UNDECLARED, name)
        return info

    def holder(self, holder: str, counter: str, words: Mapping[str, Type], at: p.At) -> None:
        info = self.counter(counter, at)
        kind = self.name_type(holder, words, at)
        if kind is Type.GAME:
            return  # the game's pot of a player counter, or a game counter itself
        if kind is not Type.PLAYER:
            raise _refuse(at, p.ProblemCode.TYPES, holder, "player")
        if info.kind is p.HolderKind.GAME:
            raise _refuse(at, p.ProblemCode.TYPES, counter, "player")

    # --- expressions

    def name_type(self, name: str, words: Mapping[str, Type], at: p.At) -> Type:
        if name == "me" and "me" not in words:
            raise _refuse(at, p.ProblemCode.ME_OUTSIDE_ACTION, name)
        found = words.get(name)
        if found is not None:
            return found
        info = self.counters.get(name)
        if info is not None and info.kind is p.HolderKind.GAME:
            return Type.NUMBER
        raise _refuse(at, p.ProblemCode.UNKNOWN_NAME, name)

    def want(self, expr: p.Expr, words: Mapping[str, Type], wanted: Type) -> None:
        found = self.type_of(expr, words)
        if found is not wanted:
            raise _refuse(expr.at, p.ProblemCode.TYPES, found.value, wanted.value)

    def type_of(self, expr: p.Expr, words: Mapping[str, Type]) -> Type:
        if isinstance(expr, p.Number):
            return Type.NUMBER
        if isinstance(expr, p.Name):
            return self.name_type(expr.name, words, expr.at)
        if isinstance(expr, p.Attribute):
            self.holder(expr.holder, expr.counter, words, expr.at)
            return Type.NUMBER
        if isinstance(expr, p.Unary):
            wanted = Type.NUMBER if expr.operator == "-" else Type.BOOL
            self.want(expr.operand, words, wanted)
            return wanted
        if isinstance(expr, p.Binary):
            return self.binary(expr, words)
        if isinstance(expr, p.Call):
            return self.call(expr, words)
        raise _refuse(expr.at, p.ProblemCode.ASK_PLACE, "ASK")

    def binary(self, expr: p.Binary, words: Mapping[str, Type]) -> Type:
        if expr.operator in p.LOGIC:
            self.want(expr.left, words, Type.BOOL)
            self.want(expr.right, words, Type.BOOL)
            return Type.BOOL
        if expr.operator in ("=", "!="):
            left = self.type_of(expr.left, words)
            self.want(expr.right, words, left)
            return Type.BOOL
        self.want(expr.left, words, Type.NUMBER)
        self.want(expr.right, words, Type.NUMBER)
        return Type.NUMBER if expr.operator in p.ARITHMETIC else Type.BOOL

    def call(self, expr: p.Call, words: Mapping[str, Type]) -> Type:
        if expr.function == "count":
            if len(expr.args) != 1 or expr.args[0] != p.Name("players"):
                raise _refuse(expr.at, p.ProblemCode.SYNTAX, "count", "count(players)")
            return Type.NUMBER
        if expr.function not in p.FUNCTIONS:
            raise _refuse(expr.at, p.ProblemCode.UNKNOWN_NAME, expr.function)
        if not expr.args or (expr.function == "floor" and len(expr.args) != 1):
            raise _refuse(expr.at, p.ProblemCode.SYNTAX, expr.function, "(")
        for arg in expr.args:
            self.want(arg, words, Type.NUMBER)
        return Type.NUMBER
