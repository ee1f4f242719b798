"""The interpreter of the players' mechanics blocks (issue 26; rules 101, 108, 111, 207, 211).

Pure and over plain data: the rules' programs in precedence order (211, `Owned`), what a block
sees of the game (`Table`), and the counters' values and what the blocks wait on (`Ledger`).
No eval, nothing of Python reachable from a block, no wall clock: dice are an HMAC-SHA256 of
the game's seed, the event's link in the chain and the draw's ordinal, so a replay draws the
same. Each event runs under a step budget and a depth limit; a block that runs past either is
stopped and nothing of the event applies. Within an event, a handler that stops (a REQUIRE,
a counter out of its bounds, a division by zero, a number too large) applies nothing of its
own, and the others still run. No error leaves this module: a stop is a result.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import math
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, tzinfo
from fractions import Fraction

from referee.core import program as p

STEP_BUDGET = 20_000  # steps of one event: every effect and every expression node is one
DEPTH_LIMIT = 24  # effects nested in effects, and events an action's handlers run in
LARGEST = Fraction(10**15)  # no value or denominator beyond this: a block cannot grow numbers
LARGEST_DIE = 1_000_000
GAME = p.GAME

Value = Fraction | str | bool  # a number, a player (email, or "game"), a condition


class StopReason(enum.StrEnum):
    """Why a block's effects (or a player's action) did not apply."""

    REQUIRE = "require"  # a REQUIRE was false
    BOUNDS = "bounds"  # a counter would leave its MIN or MAX
    DIVIDE = "divide"  # a division by zero
    TOO_LARGE = "too_large"  # a number past LARGEST, or a die past LARGEST_DIE
    BUDGET = "budget"  # past the step budget: nothing of the event applies
    DEPTH = "depth"  # past the depth limit: nothing of the event applies
    INVALID = "invalid"  # a value of the wrong kind where the checker could not see it
    UNKNOWN_ACTION = "unknown_action"
    NOT_ALLOWED = "not_allowed"  # BY king and the sender is not the King, or a player left
    ARGUMENTS = "arguments"  # the action's arguments: how many, or of what kind
    LIMIT = "limit"  # LIMIT n PER period already reached
    FORBIDDEN = "forbidden"  # a FORBID of a rule in force
    NO_OFFER = "no_offer"  # no such open offer, or not made to this player
    EXPIRED = "expired"  # the offer's days are over


@dataclass(frozen=True)
class Owned:
    """A rule's mechanics as the ruleset holds it: by its identity (109) and its number now."""

    rule: int
    number: int
    program: p.Program


@dataclass(frozen=True)
class Table:
    """What a block sees of the game at an event."""

    players: tuple[str, ...]  # the active players, in the game's order
    king: str | None
    seed: bytes
    link: int  # the event's ordinal in the chain: the dice's key with the draw's ordinal
    now: datetime
    zone: tzinfo  # the game's time zone: calendar days, weeks and months
    turn: int = 0  # the turn's ordinal, for LIMIT ... PER turn
    # The players' scores as the game keeps them: `points` is the score (113). The ledger's
    # exact value (with its decimals) holds while its whole part is the score; once the score
    # moved otherwise (the King's award), the score is the value.
    scores: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Binding:
    """A word's value, kept while a question or an offer waits: kind n(umber), p(layer), b."""

    name: str
    kind: str
    text: str


@dataclass(frozen=True)
class Question:
    """An `ASK king` waiting for the King's yes or no; its effects run on the answer."""

    number: int
    rule: int
    question: str
    yes: tuple[p.Effect, ...]
    no: tuple[p.Effect, ...]
    bindings: tuple[Binding, ...] = ()


@dataclass(frozen=True)
class Offer:
    """An action made to a player who accepts it (`ACCEPTED BY ... WITHIN n DAYS`)."""

    number: int
    rule: int
    action: str
    mover: str
    to: str
    expires: datetime
    bindings: tuple[Binding, ...] = ()


@dataclass(frozen=True)
class Ledger:
    """The blocks' data kept in the game's state: counter values by (counter, holder) as
    exact decimal text, the actions' uses by period, the open questions and offers."""

    values: tuple[tuple[str, str, str], ...] = ()
    uses: tuple[tuple[str, str, str, int], ...] = ()  # action, player, period key, times
    questions: tuple[Question, ...] = ()
    offers: tuple[Offer, ...] = ()
    next_number: int = 1  # questions and offers are numbered together: Q1, Q2 ...

    def value(self, counter: str, holder: str, start: Fraction = Fraction(0)) -> Fraction:
        text = self.index().get((counter, holder))
        return start if text is None else Fraction(text)

    def index(self) -> dict[tuple[str, str], str]:
        """The values by (counter, holder), made once per ledger (not a field: not in the
        state's data or digest)."""
        made: dict[tuple[str, str], str] | None = self.__dict__.get("_index")
        if made is None:
            made = {(counter, holder): text for counter, holder, text in self.values}
            object.__setattr__(self, "_index", made)
        return made


@dataclass(frozen=True)
class Block:
    """A rule's mechanics block, owned by the rule's identity (101, 109): the rule's number
    changes, the block stays its own; a proposal's block waits under its number."""

    owner: int
    program: p.Program


@dataclass(frozen=True)
class Mechanics:
    """The players' mechanics in the game's state: the dice's seed (hex; empty: derived from
    the game, for games made before seeds were kept), the blocks of the rules (in force or
    not: the rules say which), the blocks of the open proposals, and the ledger."""

    seed: str = ""
    blocks: tuple[Block, ...] = ()
    proposed: tuple[Block, ...] = ()
    ledger: Ledger = Ledger()
    clock: datetime | None = None  # the EVERYs have run up to here (from the first adoption)


@dataclass(frozen=True)
class Change:
    rule: int
    counter: str
    holder: str
    before: Fraction
    after: Fraction


@dataclass(frozen=True)
class Said:
    rule: int
    text: str


@dataclass(frozen=True)
class Stopped:
    rule: int  # identity; 0 when no rule is at fault (an unknown action)
    reason: StopReason
    detail: str = ""


@dataclass(frozen=True)
class Result:
    """What an event did to the blocks' data, and what mail says of it."""

    ledger: Ledger
    changes: tuple[Change, ...] = ()
    said: tuple[Said, ...] = ()
    stopped: tuple[Stopped, ...] = ()
    asked: tuple[Question, ...] = ()
    offered: Offer | None = None
    winners: tuple[tuple[int, str], ...] = ()  # (rule, player)
    steps: int = 0
    applied: bool = True  # False: nothing of the event applied (a budget, a depth, a refusal)


# --- counters ---------------------------------------------------------------------------------


def counters(owned: Sequence[Owned]) -> dict[str, p.Counter]:
    """Every counter in force: `points` always; a name declared by several rules takes the
    declaration of the rule first in precedence (211)."""
    programs = tuple(rule.program for rule in owned)
    for kept, table in _COUNTERS:
        if len(kept) == len(programs) and all(a is b for a, b in zip(kept, programs, strict=True)):
            return dict(table)
    found: dict[str, p.Counter] = {p.POINTS: p.Counter(p.POINTS, p.HolderKind.PLAYER, decimals=0)}
    points_set = False
    for rule in owned:
        for counter in _indexed(rule.program).counters:
            if counter.name == p.POINTS:
                if not points_set:
                    found[p.POINTS] = p.Counter(p.POINTS, decimals=counter.decimals or 0)
                    points_set = True
            elif counter.name not in found:
                found[counter.name] = counter
    _COUNTERS[:] = [(programs, dict(found))]
    return found


def text_of(value: Fraction, decimals: int) -> str:
    """A counter value as exact decimal text ("40", "0.1", "-2.50" never: "-2.5")."""
    if value.denominator == 1:
        return str(value.numerator)
    scaled = round(value * 10**decimals)
    sign = "-" if scaled < 0 else ""
    whole, part = divmod(abs(scaled), 10**decimals)
    return f"{sign}{whole}.{str(part).rjust(decimals, '0')}".rstrip("0").rstrip(".")


def quantize(value: Fraction, decimals: int) -> Fraction:
    scale = 10**decimals
    return Fraction(round(value * scale), scale)


# --- dice -------------------------------------------------------------------------------------


def seed_from(first_link: str) -> bytes:
    """The dice's seed of a game made before seeds were kept: from its chain's first link."""
    return hashlib.sha256(b"nomic-referee dice\x00" + first_link.encode()).digest()


def draw(seed: bytes, link: int, ordinal: int, low: int, high: int) -> int:
    """The `ordinal`-th die of the event at `link`, between low and high inclusive."""
    digest = hmac.new(seed, f"{link}/{ordinal}".encode(), hashlib.sha256).digest()
    return low + int.from_bytes(digest, "big") % (high - low + 1)


# --- the run of one event ---------------------------------------------------------------------


class _Stop(Exception):
    def __init__(self, reason: StopReason, detail: str = "") -> None:
        super().__init__(reason.value)
        self.reason = reason
        self.detail = detail


class _Asked(Exception):
    """Unwinds a handler at an `IF ASK`: what runs on yes and on no, with the rest after."""

    def __init__(self, ask: p.Ask, yes: tuple[p.Effect, ...], no: tuple[p.Effect, ...]) -> None:
        super().__init__("ask")
        self.ask = ask
        self.yes = yes
        self.no = no


_BROKEN = (ArithmeticError, TypeError, ValueError, KeyError, AttributeError, RecursionError)


@dataclass
class _Run:
    owned: Sequence[Owned]
    table: Table
    ledger: Ledger
    defs: dict[str, p.Counter] = field(default_factory=dict)
    values: dict[tuple[str, str], Fraction] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    said: list[Said] = field(default_factory=list)
    stopped: list[Stopped] = field(default_factory=list)
    asked: list[Question] = field(default_factory=list)
    steps: int = 0
    draws: int = 0
    next_number: int = 1
    rule: int = 0

    written: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.defs = counters(self.owned)
        self.texts = self.ledger.index()
        self.scores = dict(self.table.scores)
        self.next_number = self.ledger.next_number

    # bookkeeping

    def step(self, depth: int) -> None:
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise _Stop(StopReason.BUDGET)
        if depth > DEPTH_LIMIT:
            raise _Stop(StopReason.DEPTH)

    def get(self, counter: str, holder: str) -> Fraction:
        key = (counter, holder)
        found = self.values.get(key)
        if found is not None:
            return found
        text = self.texts.get(key)
        if counter == p.POINTS and holder != GAME:
            score = self.scores.get(holder)
            if score is not None and (text is None or math.floor(Fraction(text)) != score):
                text = str(score)
        if text is not None:
            found = self.values[key] = Fraction(text)
            return found
        definition = self.defs.get(counter)
        if definition is None:
            raise _Stop(StopReason.INVALID, counter)
        if holder == GAME and definition.kind is p.HolderKind.PLAYER:
            return Fraction(0)  # the game's pot of a player counter starts empty
        return definition.start or Fraction(0)

    def put(self, counter: str, holder: str, value: Fraction) -> None:
        definition = self.defs.get(counter)
        if definition is None:
            raise _Stop(StopReason.INVALID, counter)
        value = quantize(_bounded(value), definition.decimals or 0)
        before = self.get(counter, holder)
        low, high = definition.minimum, definition.maximum
        pot = holder == GAME and definition.kind is p.HolderKind.PLAYER
        if not pot and ((low is not None and value < low) or (high is not None and value > high)):
            raise _Stop(StopReason.BOUNDS, counter)
        self.values[(counter, holder)] = value
        self.written.add((counter, holder))
        if value != before:
            self.changes.append(Change(self.rule, counter, holder, before, value))

    def checkpoint(self) -> _Mark:
        return (
            dict(self.values),
            set(self.written),
            len(self.changes),
            len(self.said),
            len(self.asked),
        )

    def rollback(self, mark: _Mark) -> None:
        values, written, changes, said, asked = mark
        self.values = values
        self.written = written
        del self.changes[changes:]
        del self.said[said:]
        del self.asked[asked:]

    def number(self) -> int:
        made = self.next_number
        self.next_number += 1
        return made

    # a guarded handler: its effects all or none; a budget or a depth unwinds the whole event

    def guarded(self, rule: int, effects: tuple[p.Effect, ...], env: dict[str, Value]) -> bool:
        self.rule = rule
        mark = self.checkpoint()
        try:
            self.effects(effects, env, 1)
        except _Asked as asked:
            self.asked.append(
                Question(self.number(), rule, asked.ask.question, asked.yes, asked.no, _keep(env))
            )
        except _Stop as stop:
            if stop.reason in (StopReason.BUDGET, StopReason.DEPTH):
                raise
            self.rollback(mark)
            self.stopped.append(Stopped(rule, stop.reason, stop.detail))
            return False
        except _BROKEN as error:
            self.rollback(mark)
            self.stopped.append(Stopped(rule, StopReason.INVALID, type(error).__name__))
            return False
        return True

    # effects

    def effects(self, effects: tuple[p.Effect, ...], env: dict[str, Value], depth: int) -> None:
        for index, effect in enumerate(effects):
            try:
                self.effect(effect, env, depth)
            except _Asked as asked:  # what follows the IF ASK waits for the answer too
                rest = effects[index + 1 :]
                raise _Asked(asked.ask, asked.yes + rest, asked.no + rest) from None

    def effect(self, effect: p.Effect, env: dict[str, Value], depth: int) -> None:
        self.step(depth)
        if isinstance(effect, p.Give | p.Take):
            holder = self.holder(effect.holder, env)
            amount = self.number_of(effect.amount, env, depth)
            sign = 1 if isinstance(effect, p.Give) else -1
            self.put(effect.counter, holder, self.get(effect.counter, holder) + sign * amount)
        elif isinstance(effect, p.Move):
            amount = self.number_of(effect.amount, env, depth)
            source = self.holder(effect.source, env)
            target = self.holder(effect.target, env)
            self.put(effect.counter, source, self.get(effect.counter, source) - amount)
            self.put(effect.counter, target, self.get(effect.counter, target) + amount)
        elif isinstance(effect, p.SetValue):
            holder = self.holder(effect.holder, env) if effect.holder else GAME
            self.put(effect.counter, holder, self.number_of(effect.value, env, depth))
        elif isinstance(effect, p.Roll):
            low = self.number_of(effect.low, env, depth)
            high = self.number_of(effect.high, env, depth)
            if low.denominator != 1 or high.denominator != 1 or not 0 <= high - low < LARGEST_DIE:
                raise _Stop(StopReason.TOO_LARGE, effect.name)
            self.draws += 1
            die = draw(self.table.seed, self.table.link, self.draws, int(low), int(high))
            env[effect.name] = Fraction(die)
        elif isinstance(effect, p.Announce):
            self.said.append(Said(self.rule, effect.text))
        elif isinstance(effect, p.Require):
            if not self.truth(effect.condition, env, depth):
                raise _Stop(StopReason.REQUIRE)
        elif isinstance(effect, p.If):
            if isinstance(effect.condition, p.Ask):
                raise _Asked(effect.condition, effect.then, effect.otherwise)
            chosen = effect.then if self.truth(effect.condition, env, depth) else effect.otherwise
            self.effects(chosen, env, depth + 1)
        elif isinstance(effect, p.ForEach):
            for player in self.table.players:
                self.effects(effect.body, {**env, effect.name: player}, depth + 1)

    def holder(self, name: str, env: Mapping[str, Value]) -> str:
        if name == GAME:
            return GAME
        found = env.get(name)
        if not isinstance(found, str) or not found:
            raise _Stop(StopReason.INVALID, name)
        return found

    # expressions

    def number_of(self, expr: p.Expr, env: Mapping[str, Value], depth: int) -> Fraction:
        found = self.value(expr, env, depth)
        if not isinstance(found, Fraction):
            raise _Stop(StopReason.INVALID, "number")
        return found

    def truth(self, expr: p.Expr, env: Mapping[str, Value], depth: int) -> bool:
        found = self.value(expr, env, depth)
        if not isinstance(found, bool):
            raise _Stop(StopReason.INVALID, "condition")
        return found

    def value(self, expr: p.Expr, env: Mapping[str, Value], depth: int) -> Value:
        self.step(depth)
        if isinstance(expr, p.Number):
            return expr.value
        if isinstance(expr, p.Name):
            if expr.name in env:
                return env[expr.name]
            return self.get(expr.name, GAME)
        if isinstance(expr, p.Attribute):
            return self.get(expr.counter, self.holder(expr.holder, env))
        if isinstance(expr, p.Unary):
            if expr.operator == "-":
                return -self.number_of(expr.operand, env, depth + 1)
            return not self.truth(expr.operand, env, depth + 1)
        if isinstance(expr, p.Binary):
            return self.binary(expr, env, depth + 1)
        if isinstance(expr, p.Call):
            return self.call(expr, env, depth + 1)
        raise _Stop(StopReason.INVALID, "ASK")

    def binary(self, expr: p.Binary, env: Mapping[str, Value], depth: int) -> Value:
        op = expr.operator
        if op == "and":
            return self.truth(expr.left, env, depth) and self.truth(expr.right, env, depth)
        if op == "or":
            return self.truth(expr.left, env, depth) or self.truth(expr.right, env, depth)
        if op in ("=", "!="):
            left = self.value(expr.left, env, depth)
            right = self.value(expr.right, env, depth)
            if type(left) is not type(right):
                raise _Stop(StopReason.INVALID, op)
            return (left == right) == (op == "=")
        a = self.number_of(expr.left, env, depth)
        b = self.number_of(expr.right, env, depth)
        if op in _ORDER:
            return _ORDER[op](a, b)
        if op == "/":
            if b == 0:
                raise _Stop(StopReason.DIVIDE)
            return _bounded(a / b)
        return _bounded(a + b if op == "+" else a - b if op == "-" else a * b)

    def call(self, expr: p.Call, env: Mapping[str, Value], depth: int) -> Value:
        if expr.function == "count":
            return Fraction(len(self.table.players))
        args = [self.number_of(a, env, depth) for a in expr.args]
        if expr.function == "floor" and len(args) == 1:
            return Fraction(args[0].numerator // args[0].denominator)
        if expr.function == "min" and args:
            return min(args)
        if expr.function == "max" and args:
            return max(args)
        raise _Stop(StopReason.INVALID, expr.function)

    # handlers

    def base(self) -> dict[str, Value]:
        return {"king": self.table.king} if self.table.king else {}

    def handlers(
        self, event: str, words: Mapping[str, Value], skip: int | None, depth: int
    ) -> None:
        """Every handler of `event`, rule by rule in precedence order (211)."""
        for owned in self.owned:
            if owned.rule == skip:  # a rule's own adoption does not run its own handlers
                continue
            for handler in _indexed(owned.program).handlers.get(event, ()):
                env = {**self.base(), **words}
                if handler.condition is not None:
                    self.rule = owned.rule
                    try:
                        if not self.truth(handler.condition, env, depth):
                            continue
                    except _Stop as stop:
                        if stop.reason in (StopReason.BUDGET, StopReason.DEPTH):
                            raise
                        self.stopped.append(Stopped(owned.rule, stop.reason, stop.detail))
                        continue
                    except _BROKEN:
                        continue
                self.guarded(owned.rule, handler.body, env)

    # the result

    def result(
        self,
        uses: tuple[tuple[str, str, str, int], ...] | None = None,
        offers: tuple[Offer, ...] | None = None,
        questions: tuple[Question, ...] | None = None,
        offered: Offer | None = None,
    ) -> Result:
        values = self.ledger.values
        if self.written:
            rows = dict(self.texts)
            for key in self.written:
                decimals = (self.defs.get(key[0]) or _PLAIN).decimals or 0
                rows[key] = text_of(self.values[key], decimals)
            values = tuple((c, h, t) for (c, h), t in sorted(rows.items()))
        waiting = self.ledger.questions if questions is None else questions
        ledger = Ledger(
            values=values,
            uses=self.ledger.uses if uses is None else uses,
            questions=waiting + tuple(self.asked),
            offers=self.ledger.offers if offers is None else offers,
            next_number=self.next_number,
        )
        return Result(
            ledger,
            tuple(self.changes),
            tuple(self.said),
            tuple(self.stopped),
            tuple(self.asked),
            offered=offered,
            winners=winners(
                self.owned, self.table, ledger, {(c.counter, c.holder) for c in self.changes}
            ),
            steps=self.steps,
        )

    def nothing(
        self, reason: StopReason, rule: int = 0, detail: str = "", ledger: Ledger | None = None
    ) -> Result:
        stop = Stopped(rule, reason, detail)
        kept = self.ledger if ledger is None else ledger
        return Result(kept, stopped=(stop,), steps=self.steps, applied=False)


_PLAIN = p.Counter("", decimals=0)
_Mark = tuple[dict[tuple[str, str], Fraction], set[tuple[str, str]], int, int, int]


@dataclass(frozen=True)
class _Index:
    """A program's statements by what looks them up, made once per program."""

    handlers: Mapping[str, tuple[p.Handler, ...]]
    wins: tuple[p.Win, ...]
    counters: tuple[p.Counter, ...]


_INDEXES: dict[int, tuple[p.Program, _Index]] = {}
_READS: dict[int, tuple[p.Win, tuple[frozenset[str], bool]]] = {}
_COUNTERS: list[tuple[tuple[p.Program, ...], dict[str, p.Counter]]] = []


def _indexed(program: p.Program) -> _Index:
    kept = _INDEXES.get(id(program))
    if kept is not None and kept[0] is program:
        return kept[1]
    handlers: dict[str, list[p.Handler]] = {}
    for handler in program.handlers:
        handlers.setdefault(handler.event, []).append(handler)
    made = _Index(
        {event: tuple(found) for event, found in handlers.items()},
        program.wins,
        program.counters,
    )
    if len(_INDEXES) > 4096:
        _INDEXES.clear()
    _INDEXES[id(program)] = (program, made)
    return made


def _reads(win: p.Win) -> tuple[frozenset[str], bool]:
    """The counters a WIN reads (its condition's and its winner's), and whether it reads
    only its own player's (`w.counter`, numbers and operators: nothing else)."""
    kept = _READS.get(id(win))
    if kept is not None and kept[0] is win:
        return kept[1]
    names: set[str] = set()
    own_only = bool(win.each)
    pending: list[p.Expr] = [win.condition]
    while pending:
        expr = pending.pop()
        if isinstance(expr, p.Attribute):
            names.add(expr.counter)
            own_only = own_only and expr.holder == win.each
        elif isinstance(expr, p.Name):
            names.add(expr.name)
            own_only = own_only and expr.name == win.each
        elif isinstance(expr, p.Unary):
            pending.append(expr.operand)
        elif isinstance(expr, p.Binary):
            pending += [expr.left, expr.right]
        elif isinstance(expr, p.Call):
            pending += list(expr.args)
            own_only = own_only and expr.function != "count"
        elif not isinstance(expr, p.Number):
            own_only = False
    made = (frozenset(names), own_only)
    if len(_READS) > 4096:
        _READS.clear()
    _READS[id(win)] = (win, made)
    return made


_ORDER: Mapping[str, Callable[[Fraction, Fraction], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _bounded(value: Fraction) -> Fraction:
    if abs(value) > LARGEST or value.denominator > LARGEST:
        raise _Stop(StopReason.TOO_LARGE)
    return value


def _keep(env: Mapping[str, Value]) -> tuple[Binding, ...]:
    kept = []
    for name, value in sorted(env.items()):
        if isinstance(value, bool):
            kept.append(Binding(name, "b", "1" if value else ""))
        elif isinstance(value, Fraction):
            kept.append(Binding(name, "n", str(value)))
        else:
            kept.append(Binding(name, "p", value))
    return tuple(kept)


def _restore(bindings: tuple[Binding, ...]) -> dict[str, Value]:
    restored: dict[str, Value] = {}
    for b in bindings:
        restored[b.name] = (
            bool(b.text) if b.kind == "b" else Fraction(b.text) if b.kind == "n" else b.text
        )
    return restored


# --- the events -------------------------------------------------------------------------------


def happen(
    owned: Sequence[Owned],
    table: Table,
    ledger: Ledger,
    event: str,
    words: Mapping[str, Value],
    skip_rule: int | None = None,
) -> Result:
    """Run the handlers of `event` (`proposal.adopted` ...) with its words (`author` ...).
    `skip_rule`: the rule whose own adoption this is (its handlers do not run for it)."""
    run = _Run(owned, table, ledger)
    try:
        run.handlers(event, words, skip_rule, 0)
    except _Stop as stop:
        return run.nothing(stop.reason, run.rule)
    return run.result()


def find_action(owned: Sequence[Owned], name: str) -> tuple[Owned, p.Action] | None:
    """The action of that name in force, and its rule (the first in precedence)."""
    for rule in owned:
        for action in rule.program.actions:
            if action.name == name:
                return rule, action
    return None


def period_key(table: Table, period: p.Period) -> str:
    """The calendar day, ISO week or turn `now` is in, in the game's time zone."""
    local = table.now.astimezone(table.zone).date()
    if period is p.Period.DAY:
        return local.isoformat()
    if period is p.Period.WEEK:
        year, week, _day = local.isocalendar()
        return f"{year}-W{week:02d}"
    if period is p.Period.MONTH:
        return f"{local.year}-{local.month:02d}"
    return f"turn {table.turn}"


def _arguments(action: p.Action, args: Sequence[Value], table: Table) -> dict[str, Value] | None:
    if len(args) != len(action.parameters):
        return None
    env: dict[str, Value] = {}
    for parameter, arg in zip(action.parameters, args, strict=True):
        if parameter.kind is p.ArgKind.PLAYER:
            if not isinstance(arg, str) or arg not in table.players:
                return None
        elif not isinstance(arg, Fraction) or abs(arg) > LARGEST:
            return None
        env[parameter.name] = arg
    return env


def act(
    owned: Sequence[Owned],
    table: Table,
    ledger: Ledger,
    mover: str,
    name: str,
    args: Sequence[Value],
) -> Result:
    """A player's action (`PICKPOCKET carla`): its rule's REQUIRE and effects, then the
    handlers of `action.NAME`; or, for an action others accept, an offer to that player.
    Refused with nothing applied when not allowed, past its LIMIT, forbidden or failing."""
    run = _Run(owned, table, ledger)
    found = find_action(owned, name)
    if found is None:
        return run.nothing(StopReason.UNKNOWN_ACTION, 0, name)
    rule, action = found
    allowed = mover in table.players and (action.mover is p.Mover.PLAYER or mover == table.king)
    if not allowed:
        return run.nothing(StopReason.NOT_ALLOWED, rule.rule, name)
    env = _arguments(action, args, table)
    if env is None:
        return run.nothing(StopReason.ARGUMENTS, rule.rule, name)
    refusal = forbidden(owned, table, ledger, name, mover)
    if refusal is not None:
        return run.nothing(StopReason.FORBIDDEN, refusal.rule, name)
    uses = ledger.uses
    if action.limit is not None:
        key = period_key(table, action.limit.per)
        mine = [u for u in uses if u[0] == name and u[1] == mover and u[2] == key]
        if mine and mine[0][3] >= action.limit.times:
            return run.nothing(StopReason.LIMIT, rule.rule, name)
        times = (mine[0][3] if mine else 0) + 1
        others = tuple(u for u in uses if not (u[0] == name and u[1] == mover))
        uses = (*others, (name, mover, key, times))
    env = {**run.base(), **env, "me": mover}
    try:
        if action.acceptance is not None:
            return _offer(run, rule, action, env, uses)
        if not run.guarded(rule.rule, action.body, env):
            stop = run.stopped[-1]
            return run.nothing(stop.reason, rule.rule, stop.detail)
        run.handlers(f"action.{name}", {"player": mover}, None, 1)
    except _Stop as stop:
        return run.nothing(stop.reason, run.rule)
    return run.result(uses=uses)


def _offer(
    run: _Run,
    rule: Owned,
    action: p.Action,
    env: dict[str, Value],
    uses: tuple[tuple[str, str, str, int], ...],
) -> Result:
    """An action others accept: its REQUIRE and effects are tried now on a copy (the offer
    is refused if they would fail), and run for real when accepted."""
    assert action.acceptance is not None
    trial = _Run(run.owned, run.table, run.ledger)
    if not trial.guarded(rule.rule, action.body, dict(env)):
        stop = trial.stopped[-1]
        return run.nothing(stop.reason, rule.rule, stop.detail)
    to = env[action.acceptance.by]
    assert isinstance(to, str)
    expires = run.table.now + timedelta(days=action.acceptance.days)
    offer = Offer(run.number(), rule.rule, action.name, str(env["me"]), to, expires, _keep(env))
    return run.result(uses=uses, offers=(*run.ledger.offers, offer), offered=offer)


def accept(owned: Sequence[Owned], table: Table, ledger: Ledger, number: int, by: str) -> Result:
    """The player an offer was made to accepts it: the action runs now, on today's state."""
    run = _Run(owned, table, ledger)
    offer = next((o for o in ledger.offers if o.number == number), None)
    if offer is None or offer.to != by:
        return run.nothing(StopReason.NO_OFFER, 0, str(number))
    left = Ledger(
        ledger.values,
        ledger.uses,
        ledger.questions,
        tuple(o for o in ledger.offers if o.number != number),
        ledger.next_number,
    )
    if table.now > offer.expires:
        return run.nothing(StopReason.EXPIRED, offer.rule, offer.action, left)
    found = find_action(owned, offer.action)
    if found is None or found[0].rule != offer.rule:  # the rule is no longer in force
        return run.nothing(StopReason.UNKNOWN_ACTION, offer.rule, offer.action, left)
    rule, action = found
    run = _Run(owned, table, left)
    try:
        if not run.guarded(rule.rule, action.body, _restore(offer.bindings)):
            stop = run.stopped[-1]
            return run.nothing(stop.reason, rule.rule, stop.detail, left)
        run.handlers(f"action.{action.name}", {"player": offer.mover}, None, 1)
    except _Stop as stop:
        return run.nothing(stop.reason, run.rule, "", left)
    return run.result()


def answer(owned: Sequence[Owned], table: Table, ledger: Ledger, number: int, yes: bool) -> Result:
    """The King's answer to an open question: its effects run now, on the state as it is;
    nothing runs if its rule is no longer in force."""
    run = _Run(owned, table, ledger)
    question = next((q for q in ledger.questions if q.number == number), None)
    if question is None:
        return run.nothing(StopReason.NO_OFFER, 0, str(number))
    rest = tuple(q for q in ledger.questions if q.number != number)
    if not any(o.rule == question.rule for o in owned):
        return run.result(questions=rest)
    try:
        run.guarded(
            question.rule, question.yes if yes else question.no, _restore(question.bindings)
        )
    except _Stop as stop:
        left = Ledger(ledger.values, ledger.uses, rest, ledger.offers, ledger.next_number)
        return run.nothing(stop.reason, run.rule, "", left)
    return run.result(questions=rest)


def forbidden(
    owned: Sequence[Owned],
    table: Table,
    ledger: Ledger,
    move: str,
    player: str,
    one_proposal: bool = False,
) -> Stopped | None:
    """The FORBID of a rule in force that refuses `move` ("propose", "vote" or an action) to
    `player` now, or None. The turn's one proposal is never forbidden (104): `one_proposal`."""
    if move == "vote" or (move == "propose" and one_proposal):
        return None
    run = _Run(owned, table, ledger)
    for rule in owned:
        for forbid in rule.program.forbids:
            if forbid.move != move:
                continue
            try:
                if run.truth(forbid.condition, {**run.base(), "player": player}, 0):
                    return Stopped(rule.rule, StopReason.FORBIDDEN, move)
            except (_Stop, *_BROKEN):
                continue
    return None


def winners(
    owned: Sequence[Owned],
    table: Table,
    ledger: Ledger,
    changed: set[tuple[str, str]] | None = None,
) -> tuple[tuple[int, str], ...]:
    """Who a WIN of a rule in force names now, rule by rule (checked after every event).
    `changed`: the (counter, holder) values an event changed. Only the WINs that read one of
    those counters are evaluated (one that reads none has not changed its mind), and a
    `FOR EACH player w: WIN w` that reads only w's own counters, only for the players whose
    values changed. None: every WIN, for every player (after a player joins or leaves)."""
    found: list[tuple[int, str]] = []
    counters_changed = None if changed is None else {counter for counter, _h in changed}
    holders_changed = None if changed is None else {holder for _c, holder in changed}
    wins = []
    for rule in owned:
        for win in _indexed(rule.program).wins:
            reads, own_only = _reads(win)
            if counters_changed is None or not counters_changed.isdisjoint(reads):
                wins.append((rule, win, own_only))
    if not wins:
        return ()
    run = _Run(owned, table, ledger)
    for rule, win, own_only in wins:
        players: Sequence[str] = table.players if win.each else ("",)
        if win.each and own_only and holders_changed is not None:
            players = [player for player in table.players if player in holders_changed]
        for player in players:
            env = {**run.base(), **({win.each: player} if win.each else {})}
            try:
                if run.truth(win.condition, env, 0):
                    who = run.value(win.who, env, 0)
                    if isinstance(who, str) and who in table.players:
                        found.append((rule.rule, who))
            except (_Stop, *_BROKEN):
                continue
    return tuple(dict.fromkeys(found))


# --- the clock --------------------------------------------------------------------------------


_PERIOD_ORDER = (p.Period.DAY, p.Period.WEEK, p.Period.MONTH)


def _begins(period: p.Period, day: date) -> bool:
    if period is p.Period.DAY:
        return True
    if period is p.Period.WEEK:
        return day.weekday() == 0
    return day.day == 1


def edges(
    since: datetime, until: datetime, zone: tzinfo, periods: set[p.Period]
) -> Iterator[tuple[datetime, p.Period, p.Edge]]:
    """Every period START (00:00 of its first day) and END (its last instant) in the game's
    time zone after `since` up to `until`, in time order: once per period crossed."""
    if until <= since:
        return
    day = since.astimezone(zone).date()
    last = until.astimezone(zone).date() + timedelta(days=1)
    while day <= last:
        boundary = datetime(day.year, day.month, day.day, tzinfo=zone)
        for edge, at in (
            (p.Edge.END, boundary - timedelta(microseconds=1)),
            (p.Edge.START, boundary),
        ):
            for period in _PERIOD_ORDER:
                if period in periods and _begins(period, day) and since < at <= until:
                    yield at, period, edge
        day += timedelta(days=1)


def tick(
    owned: Sequence[Owned], table: Table, ledger: Ledger, since: datetime, until: datetime
) -> tuple[Result, ...]:
    """The clock from `since` to `until`: each EVERY at each period it crosses, one event each
    (after downtime too), and the offers whose days are over closed."""
    clocks = [(rule, every) for rule in owned for every in rule.program.clocks]
    results: list[Result] = []
    draws = 0
    wanted = {(e.period, e.edge) for _r, e in clocks}
    for at, period, edge in edges(since, until, table.zone, {e.period for _r, e in clocks}):
        if (period, edge) not in wanted:
            continue
        run = _Run(owned, table, ledger)
        run.draws = draws
        try:
            for rule, every in clocks:
                if every.period is period and every.edge is edge:
                    run.guarded(rule.rule, every.body, run.base())
        except _Stop as stop:
            results.append(run.nothing(stop.reason, run.rule, f"{period} {edge} {at.isoformat()}"))
            continue
        draws = run.draws
        result = run.result()
        results.append(result)
        ledger = result.ledger
    expired = tuple(o for o in ledger.offers if o.expires < until)
    if expired:
        kept = tuple(o for o in ledger.offers if o.expires >= until)
        ledger = Ledger(ledger.values, ledger.uses, ledger.questions, kept, ledger.next_number)
        results.append(Result(ledger))
    return tuple(results)
