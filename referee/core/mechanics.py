"""Which rule in force carries each mechanic of the game, and how mail cites it (101-117, 201-215).

Every move, deadline, bonus, penalty and ending the referee applies is a *mechanic*, owned by a
rule followed by its identity through every renumbering (109). A mechanic granted by an
immutable rule (113: winning by points; 104, 106 and 112: voting and debate; 114: leaving)
always runs; when the mutable rule that carried its detail is repealed, the referee cites the
immutable rule and uses house values. A mechanic only a mutable rule grants (206's dissent
bonus, 213's deposition, 215's ending, 212's appeals ...) runs only while a rule in force
carries it: the seed's rule (amended or not), or a rule that declares one of the mechanic's
parameters with `SET`. An imported ruleset names its carriers in `ruleset.toml`
(`[mechanics]`), and a mechanic no rule carries runs there only if listed in `house_mechanics`.

`citations` is what every mail cites: for each mechanic, the rule by its label, else its number
now, with the number it was first known by ("rule 304, formerly 209"), or "repealed" when the
last rule that carried it has left the ruleset. It is computed when the text is written.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from referee.core import params
from referee.core.model import Adoption, GameState, Rule


class Mechanic(enum.StrEnum):
    """What the referee does under some rule; the value is the key templates cite it by."""

    CHANGES = "changes"  # 103: the seven kinds of rule change
    VOTE = "vote"  # 104, 106: every proposal is voted on by every voter
    NUMBERING = "numbering"  # 109: proposals numbered from 301, rules renumbered
    TRANSMUTATION = "transmutation"  # 110: unanimity to make an immutable rule mutable
    PRIORITY = "priority"  # 111: an immutable rule beats a mutable one
    RETROACTION = "retroaction"  # 108: no change applies retroactively
    DEBATE = "debate"  # 112: the week of debate, revision by the proposer
    POINTS = "points"  # 113: the game is won by earning points
    LEAVING = "leaving"  # 114: a player may always leave
    MUTABLE_MIN = "mutable_min"  # 115: at least one mutable rule
    TURNS = "turns"  # 201: turns in order of surname, never skipped
    TURN = "turn"  # 202: the four parts of a turn, the King's award
    VOTING = "voting"  # 203: when the vote closes, abstainers against
    MAJORITY = "majority"  # 204: unanimity, then majority after two rounds
    RULESET_MAIL = "ruleset_mail"  # 205: the ruleset and scores mailed after each change
    DISSENT = "dissent"  # 206: the dissent bonus
    ONE_VOTE = "one_vote"  # 208: each player has exactly one vote
    WINNING = "winning"  # 209: the winning score, the tie
    CAP = "cap"  # 210: the cap on mutable rules
    CONFLICTS = "conflicts"  # 211: lower number prevails, precedence claims
    APPEALS = "appeals"  # 212: appeals to the King, the hold of the next turn
    CUSTOM = "custom"  # 212: custom and the spirit of the game, where the rules are silent
    DEPOSITION = "deposition"  # 213: accusing and deposing the King
    ONE_KING = "one_king"  # 214: never two Kings
    IMPOSSIBLE = "impossible"  # 215: the first player unable to complete a turn wins


@dataclass(frozen=True)
class MechanicSpec:
    mechanic: Mechanic
    seed: int  # the seed rule (its identity) that carries it
    grantor: int | None  # the immutable rule that grants it whatever happens to `seed`
    house: bool  # runs, on house values, when no rule carries it (the game could not move)
    parameters: tuple[str, ...] = ()  # a rule that SETs one of these carries the mechanic


M = Mechanic
SPECS: tuple[MechanicSpec, ...] = (
    MechanicSpec(M.CHANGES, 103, 103, True),
    MechanicSpec(M.VOTE, 104, 104, True),
    MechanicSpec(M.NUMBERING, 109, 109, True),
    MechanicSpec(M.TRANSMUTATION, 110, 110, True),
    MechanicSpec(M.PRIORITY, 111, 111, True),
    MechanicSpec(M.RETROACTION, 108, 108, True),
    MechanicSpec(M.DEBATE, 112, 112, True, ("debate_days_min",)),
    MechanicSpec(M.POINTS, 113, 113, True),
    MechanicSpec(M.LEAVING, 114, 114, True),
    MechanicSpec(M.MUTABLE_MIN, 115, 115, True),
    # Without turns, their parts and a closing vote no proposal could be made or decided; 116
    # and 104 say the rules that permit rule changes stay usable, so these run as house rules.
    MechanicSpec(M.TURNS, 201, None, True),
    MechanicSpec(M.TURN, 202, 112, True, ("debate_days", "award_min", "award_max")),
    MechanicSpec(M.VOTING, 203, 104, True, ("voting_days",)),
    MechanicSpec(M.MAJORITY, 204, None, False, ("majority_after_rounds",)),
    MechanicSpec(M.RULESET_MAIL, 205, None, True),
    MechanicSpec(M.DISSENT, 206, None, False, ("dissent_bonus",)),
    MechanicSpec(M.ONE_VOTE, 208, 106, True),
    MechanicSpec(M.WINNING, 209, 113, True, ("winning_score",)),
    MechanicSpec(M.CAP, 210, None, False, ("max_mutable_rules",)),
    MechanicSpec(M.CONFLICTS, 211, 111, True),
    MechanicSpec(M.APPEALS, 212, None, False),
    MechanicSpec(M.CUSTOM, 212, None, True),
    MechanicSpec(M.DEPOSITION, 213, None, False, ("deposition_penalty", "crown_days")),
    MechanicSpec(M.ONE_KING, 214, 105, True),
    MechanicSpec(M.IMPOSSIBLE, 215, None, False),
)
SPEC: Mapping[Mechanic, MechanicSpec] = {s.mechanic: s for s in SPECS}


def _declared(state: GameState, mechanic: Mechanic) -> tuple[int, ...]:
    """The identities of the rules the ruleset names as carriers of `mechanic`."""
    if not state.carriers:
        return (SPEC[mechanic].seed,)
    return tuple(identity for name, identity in state.carriers if name == mechanic.value)


def owner(state: GameState, mechanic: Mechanic) -> Rule | None:
    """The rule in force that carries `mechanic`: a declared carrier (the seed's rule, amended
    or renumbered, keeps its identity), else a rule that SETs one of its parameters."""
    for identity in _declared(state, mechanic):
        rule = state.rule_by_identity(identity)
        if rule is not None and rule.in_force:
            return rule
    for name in SPEC[mechanic].parameters:
        for rule in state.rules_in_force:
            if rule.parameter(name) is not None:
                return rule
    return None


def _grantor(state: GameState, mechanic: Mechanic) -> Rule | None:
    identity = SPEC[mechanic].grantor
    if identity is None or state.carriers:  # an imported ruleset names its own carriers
        return None
    rule = state.rule_by_identity(identity)
    return rule if rule is not None and rule.in_force and not rule.mutable else None


def is_house(state: GameState, mechanic: Mechanic) -> bool:
    """Whether `mechanic` runs as a house mechanic where no rule carries it."""
    if state.carriers:
        return mechanic.value in state.house_mechanics
    return SPEC[mechanic].house


def runs(state: GameState, mechanic: Mechanic) -> bool:
    """Whether the referee applies `mechanic` now: a rule in force carries it, an immutable
    rule grants it, or it is a house mechanic. A house value never revives a repealed one."""
    if owner(state, mechanic) is not None or _grantor(state, mechanic) is not None:
        return True
    return is_house(state, mechanic)


def carries(state: GameState, mechanic: Mechanic, rule: Rule) -> bool:
    """Whether `rule` is a declared carrier of `mechanic` (by identity, whatever its number)."""
    return rule.identity in _declared(state, mechanic)


def deciding_rule(state: GameState, mechanic: Mechanic) -> Rule | None:
    """The rule in force whose word holds for `mechanic`: among its carrier and every rule in
    force that SETs one of its parameters, the one 111 and 211 put first (an immutable rule,
    else one claiming precedence, else the lowest number). None when no rule carries it."""
    holders = [r for r in [owner(state, mechanic)] if r is not None]
    for name in SPEC[mechanic].parameters:
        holders += [r for r in state.rules_in_force if r.parameter(name) is not None]
    return params.winning_rule(list(dict.fromkeys(holders))) if holders else None


def adoption_citations(
    state: GameState, transmuting_immutable: bool = False
) -> tuple[dict[str, str], dict[str, str] | None]:
    """Which rule decides how many votes a change needs now (104, 110, 204), as a citation,
    and the rule on adoption it prevails over when that is another rule (211): 110 for the
    transmutation of an immutable rule; once the game votes by majority, the rule that made
    the switch; else the carrier of 204's unanimity."""
    if transmuting_immutable:
        return citation(state, Mechanic.TRANSMUTATION), None
    seed = owner(state, Mechanic.MAJORITY)
    decided: Rule | None = None
    if state.adoption is Adoption.MAJORITY:
        switched = [r for r in state.rules if any(h.event == "majority" for h in r.history)]
        decided = max(
            switched,
            key=lambda r: max(h.at for h in r.history if h.event == "majority"),
            default=None,
        )
    if decided is None:  # unanimity: 204's, else the vote itself (104) as a house rule
        seed_cite = citation(state, Mechanic.MAJORITY)
        return (citation(state, Mechanic.VOTE) if seed_cite == NONE else seed_cite), None
    over = cite_rule(seed) if seed is not None and seed.identity != decided.identity else None
    return cite_rule(decided), over


def parameter_runs(state: GameState, name: str) -> bool:
    """Whether the mechanics that use parameter `name` still run (all of them, if several)."""
    users = [s.mechanic for s in SPECS if name in s.parameters]
    return all(runs(state, m) for m in users)


def _former(state: GameState, mechanic: Mechanic) -> Rule | None:
    for identity in _declared(state, mechanic):
        rule = state.rule_by_identity(identity)
        if rule is not None:
            return rule
    return None


def shown_name(rule: Rule) -> str:
    """How a rule is named in mail: its label if it has one, else its number now."""
    return rule.label or str(rule.number)


def cite_rule(rule: Rule) -> dict[str, str]:
    """A rule's citation as data: `name` (label or number now), `was` (the number it was
    first known by, when that differs), `state` (`in_force` | `repealed`)."""
    first = rule.numbers[0] if rule.numbers else rule.number
    was = "" if rule.label or first == rule.number else str(first)
    return {
        "name": shown_name(rule),
        "was": was,
        "state": "in_force" if rule.in_force else "repealed",
    }


HOUSE = {"name": "", "was": "", "state": "house"}
NONE = {"name": "", "was": "", "state": "none"}  # no rule of this game ever carried it


def citation(state: GameState, mechanic: Mechanic) -> dict[str, str]:
    """The rule to cite for `mechanic` now (see the module's docstring): a house rule when it
    runs though no rule carries it, `none` when no rule of this game ever granted it."""
    rule = owner(state, mechanic) or _grantor(state, mechanic) or _former(state, mechanic)
    if rule is not None:
        return cite_rule(rule)
    return dict(HOUSE) if is_house(state, mechanic) else dict(NONE)


_CACHE: list[tuple[object, object, object, dict[str, dict[str, str]]]] = []


def citations(state: GameState) -> dict[str, dict[str, str]]:
    """Every mechanic's citation, keyed by its name: what a mail's templates cite."""
    for rules, carriers, house, table in _CACHE:
        if rules is state.rules and carriers is state.carriers and house is state.house_mechanics:
            return table
    table = {m.value: citation(state, m) for m in Mechanic}
    _CACHE[:] = [(state.rules, state.carriers, state.house_mechanics, table)]
    return table


def example_rule(state: GameState) -> str:
    """A mutable rule in force to name in an example (`PROPOSE AMEND 304`): the turn's rule if
    it is mutable and in force, else the lowest-numbered mutable rule; empty when none."""
    turn = owner(state, Mechanic.TURN)
    if turn is not None and turn.mutable:
        return str(turn.number)
    mutable = [r for r in state.rules_in_force if r.mutable]
    return str(mutable[0].number) if mutable else ""
