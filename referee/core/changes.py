"""What one step changed in the rules and the scores, for the one mail that says so (205).

Rule 205 has every change to the rules or the scores sent to every player. The engine gathers
the changes of one event as typed values, and sends one ruleset-and-scores notice at the end of
the step that opens with them: which rule, its number before and after (109), the parameters it
set (111, 211), and whose score moved, by how much and why: an award (202), the dissent bonus
(206), a deposition (213).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class ScoreCause(enum.StrEnum):
    AWARD = "award"  # 202 (4)
    DISSENT_BONUS = "dissent_bonus"  # 206
    DEPOSITION = "deposition"  # 213

    @property
    def rule(self) -> int:
        return {"award": 202, "dissent_bonus": 206, "deposition": 213}[self.value]

    @property
    def mechanic(self) -> str:
        """The mechanic (`referee.core.mechanics`) that grants the points, which mail cites."""
        return {"award": "turn", "dissent_bonus": "dissent", "deposition": "deposition"}[self.value]


class RuleChangeKind(enum.StrEnum):
    """A proposal's kind (103) when a proposal made the change; else what the referee did."""

    ENACT = "enact"
    REPEAL = "repeal"
    AMEND = "amend"
    TRANSMUTE = "transmute"
    ENACT_AMENDMENT = "enact-amendment"
    AMEND_AMENDMENT = "amend-amendment"
    REPEAL_AMENDMENT = "repeal-amendment"
    MAJORITY = "majority"  # 204: adoption by majority from now
    PARAMETER = "parameter"  # the King settled a parameter after a silent amendment


@dataclass(frozen=True)
class ParameterChange:
    name: str
    old: str | None  # None: the rule did not carry it before
    new: str


@dataclass(frozen=True)
class RuleChange:
    kind: RuleChangeKind
    identity: int
    old_number: int | None  # None for a new rule
    new_number: int
    proposal: int | None = None
    parameters: tuple[ParameterChange, ...] = ()
    label: str = ""  # the rule's label from its document ("§ 2.2", "II/III"), if any

    @property
    def renumbered(self) -> bool:
        return self.old_number is not None and self.old_number != self.new_number


@dataclass(frozen=True)
class ScoreChange:
    player: str  # the player's name
    email: str
    delta: int
    cause: ScoreCause
    proposal: int | None = None

    @property
    def rule(self) -> int:
        return self.cause.rule


@dataclass(frozen=True)
class Changes:
    """Everything one step changed, in the order it happened."""

    rules: tuple[RuleChange, ...] = ()
    scores: tuple[ScoreChange, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.rules or self.scores)

    def plus(self, change: RuleChange | ScoreChange) -> Changes:
        if isinstance(change, RuleChange):
            return Changes((*self.rules, change), self.scores)
        return Changes(self.rules, (*self.scores, change))


def parameter_changes(
    before: tuple[tuple[str, str], ...], after: tuple[tuple[str, str], ...]
) -> tuple[ParameterChange, ...]:
    old = dict(before)
    return tuple(
        ParameterChange(name, old.get(name), value)
        for name, value in after
        if old.get(name) != value
    )


def rule_change_data(change: RuleChange) -> dict[str, Any]:
    return {
        "kind": change.kind.value,
        "identity": change.identity,
        "old_number": change.old_number,
        "new_number": change.new_number,
        "renumbered": change.renumbered,
        "proposal": change.proposal,
        "parameters": [{"name": p.name, "old": p.old, "new": p.new} for p in change.parameters],
        # the label beside the old number, unless it is that number ("Rule 201 (201)")
        "label": "" if change.label == str(change.old_number) else change.label,
    }


def score_change_data(change: ScoreChange, current: Callable[[int], int] = int) -> dict[str, Any]:
    """`current` gives the number the granting rule has now (109): mail cites that number."""
    return {
        "player": change.player,
        "email": change.email,
        "delta": change.delta,
        "cause": change.cause.value,
        "rule": current(change.rule),
        "mechanic": change.cause.mechanic,
        "proposal": change.proposal,
    }


def changes_data(changes: Changes, current: Callable[[int], int] = int) -> dict[str, Any]:
    """The changes for a mail; `proposal` is the proposal that made the step's rule changes
    (None for the referee's own: the switch to majority, a parameter the King set)."""
    return {
        "rules": [rule_change_data(c) for c in changes.rules],
        "scores": [score_change_data(c, current) for c in changes.scores],
        "proposal": next((c.proposal for c in changes.rules if c.proposal), None),
    }
