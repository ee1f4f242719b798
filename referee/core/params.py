"""Game parameters carried by rules, their validation, and which rule's value holds (111, 211).

Each number the procedure needs (debate days, award range, winning score, ...) is attached to
the rule that sets it (209 carries `winning_score = 100`). When several rules in force carry the
same parameter, rule 111 (immutable beats mutable) and rule 211 (lower number wins, unless
exactly one rule claims to prevail or defer) decide whose value holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from referee.core import numerals
from referee.core.model import GameState, Rule


@dataclass(frozen=True)
class ParameterSpec:
    name: str
    default: int
    low: int
    high: int
    rule: int  # the initial rule that carries it
    meaning: str


SPECS: tuple[ParameterSpec, ...] = (
    ParameterSpec("debate_days", 7, 1, 365, 202, "days of debate before the vote (112, 202)"),
    ParameterSpec("debate_days_min", 7, 1, 365, 112, "shortest debate allowed (112)"),
    ParameterSpec("voting_days", 7, 1, 365, 203, "days of voting after the debate (203)"),
    ParameterSpec("award_min", 1, 0, 1000, 202, "fewest points the King awards (202)"),
    ParameterSpec("award_max", 10, 0, 1000, 202, "most points the King awards (202)"),
    ParameterSpec("winning_score", 100, 1, 100000, 209, "points that win the game (209)"),
    ParameterSpec("dissent_bonus", 10, 0, 1000, 206, "points to who voted against a winner (206)"),
    ParameterSpec("max_mutable_rules", 25, 1, 1000, 210, "most mutable rules in force (210)"),
    ParameterSpec(
        "majority_after_rounds", 2, 0, 1000, 204, "full rounds before majority voting (204)"
    ),
    ParameterSpec("deposition_penalty", 100, 0, 100000, 213, "points a deposed King loses (213)"),
    ParameterSpec(
        "crown_days", 7, 1, 365, 213, "days a deposed King has to crown a successor (213, 214)"
    ),
)
SPEC_BY_NAME: Mapping[str, ParameterSpec] = {s.name: s for s in SPECS}

# Rule 211: a rule may say of itself that it prevails over, or defers to, other rules.
PRECEDENCE = "precedence"
PRECEDENCE_VALUES = ("prevails", "defers")


def winning_rule(candidates: Iterable[Rule]) -> Rule | None:
    """The rule whose statement holds among rules that disagree (111, then 211)."""
    rules = list(candidates)
    if not rules:
        return None
    immutable = [r for r in rules if not r.mutable]
    if immutable:  # 111: the immutable rule holds, the mutable one is disregarded entirely
        rules = immutable
    rules.sort(key=lambda r: r.number)
    claims = [r for r in rules if r.parameter(PRECEDENCE) in PRECEDENCE_VALUES]
    if len(claims) == 1:  # 211: at most one claims precedence or deference: follow it
        claim = claims[0]
        if claim.parameter(PRECEDENCE) == "prevails":
            return claim
        others = [r for r in rules if r is not claim]
        return others[0] if others else claim
    return rules[0]  # 211: otherwise the lower number prevails


def effective(state: GameState) -> dict[str, int]:
    """The value in force of every parameter: a rule's, else the house value, else the default.

    It depends on the rules and the house values only, which most moves leave as they were:
    the last answer is kept with the very tuples it was read from, and given again (a copy)
    while the state holds the same ones."""
    rules, house_values = state.rules, state.house_parameters
    last = _EFFECTIVE[0] if _EFFECTIVE else None
    if last is not None and last[0] is rules and last[1] is house_values:
        return dict(last[2])
    values = _effective(state)
    _EFFECTIVE[:] = [(rules, house_values, values)]
    return dict(values)


# The last `effective`: (the rules, the house values, the values), the tuples themselves
_EFFECTIVE: list[tuple[tuple[Rule, ...], tuple[tuple[str, str], ...], dict[str, int]]] = []


def _effective(state: GameState) -> dict[str, int]:
    house = dict(state.house_parameters)
    values: dict[str, int] = {}
    # The rules in force carrying each parameter, in the rules' order (one pass over them)
    carrying: dict[str, list[Rule]] = {}
    for rule in state.rules:
        if rule.in_force:
            for name in {name for name, _ in rule.parameters}:
                carrying.setdefault(name, []).append(rule)
    for spec in SPECS:
        holder = winning_rule(carrying.get(spec.name, ()))
        raw = holder.parameter(spec.name) if holder is not None else house.get(spec.name)
        values[spec.name] = int(raw) if raw is not None else spec.default
    return values


def debate_days(values: Mapping[str, int]) -> int:
    """112: the debate lasts `debate_days`, never less than the minimum in force."""
    return max(values["debate_days"], values["debate_days_min"])


def carrier(state: GameState, name: str) -> Rule | None:
    """The rule whose value of `name` is in force, if any rule carries it."""
    return winning_rule(r for r in state.rules if r.in_force and r.parameter(name) is not None)


@dataclass(frozen=True)
class ParameterProblem:
    name: str
    value: str
    unknown: bool
    detail: str
    least_days: int = 0  # the detail is the shortest debate allowed (112), in days


def check_sets(
    sets: Iterable[tuple[str, str]], current: Mapping[str, int]
) -> ParameterProblem | None:
    """Validate SET lines against each other and the values in force; None when all are fine."""
    merged = dict(current)
    for name, value in sets:
        if name == PRECEDENCE:
            if value not in PRECEDENCE_VALUES:
                return ParameterProblem(name, value, False, "prevails | defers")
            continue
        spec = SPEC_BY_NAME.get(name)
        if spec is None:
            return ParameterProblem(name, value, True, ", ".join(s.name for s in SPECS))
        number = numerals.number(value)
        if number is None:  # only ASCII digits, within a bound (never int()'s 4,300-digit error)
            return ParameterProblem(name, value[:40], False, f"{spec.low}..{spec.high}")
        if not spec.low <= number <= spec.high:
            return ParameterProblem(name, value, False, f"{spec.low}..{spec.high}")
        merged[name] = number
    if merged["award_min"] > merged["award_max"]:
        return ParameterProblem(
            "award_min", str(merged["award_min"]), False, f"<= award_max ({merged['award_max']})"
        )
    if merged["debate_days"] < merged["debate_days_min"]:  # 112: at least one week
        return ParameterProblem(
            "debate_days",
            str(merged["debate_days"]),
            False,
            f">= {merged['debate_days_min']} (112)",
            merged["debate_days_min"],
        )
    return None


def normalise_sets(sets: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Later SET lines for the same name replace earlier ones; names lower-cased."""
    out: dict[str, str] = {}
    for name, value in sets:
        out[name.strip().lower()] = value.strip()
    return tuple(out.items())


def merge(
    base: tuple[tuple[str, str], ...], sets: Iterable[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    out = dict(base)
    out.update(dict(sets))
    return tuple(out.items())
