"""Find a rule by what a player writes: its number, its label or its path (rules 109, 103).

A rule taken in from a document keeps the label it had there (`§ 2.2`, `IV`) and its path
(`II/III`: the headings above it, then its label), so players can name it as the document
does: `RULE § 2.2`, `RULE 2.2`, `HISTORY II/III`, `PROPOSE REPEAL IV`, `AMEND 2327`,
`RULE 4E83`, `RULE -216`. A label is tried first (the rules in force before repealed ones), as
the document's label is what its players know a rule by; then a number (the rule's number now,
then any number it had, 109); then paths. A label that several rules share is ambiguous: the
answer lists them, and their numbers or paths tell them apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from referee.core import numerals
from referee.core.model import Rule


@dataclass(frozen=True)
class Found:
    """The rule a reference names, or the rules it could name."""

    rule: Rule | None
    candidates: tuple[Rule, ...] = ()

    @property
    def ambiguous(self) -> bool:
        return self.rule is None and len(self.candidates) > 1


def normal(label: str) -> str:
    """`§ 2.2.` , `§2.2` and `2.2` are one label; `iv` and `IV.` too."""
    cleaned = re.sub(r"\s+", "", label).replace("§", "").casefold()
    return "/".join(part.strip(".)(:,;") for part in cleaned.split("/"))


def _by_number(rules: Sequence[Rule], number: int) -> Rule | None:
    for rule in rules:
        if rule.number == number:
            return rule
    for rule in rules:
        if number in rule.numbers:
            return rule
    return None


def _prefer_in_force(found: Iterable[Rule]) -> tuple[Rule, ...]:
    rules = tuple(found)
    live = tuple(r for r in rules if r.in_force)
    return live or rules


def resolve(rules: Sequence[Rule], ref: str | int | None) -> Found:
    """The rule `ref` names among `rules`: a number, a label or a path."""
    if ref is None:
        return Found(None)
    text = str(ref).strip().lstrip("#").strip()
    plain = text.rstrip(".,:;")
    wanted = normal(text)
    if not wanted:
        return Found(None)
    labelled = _prefer_in_force(r for r in rules if r.label and normal(r.label) == wanted)
    if len(labelled) == 1:
        return Found(labelled[0])
    if numerals.is_number(plain):
        by_number = _by_number(rules, int(plain))
        if by_number is not None:
            return Found(by_number)
    if labelled:
        return Found(None, labelled)
    pathed = [r for r in rules if r.path and normal(r.path) == wanted]
    if len(pathed) == 1:
        return Found(pathed[0])
    return Found(None, tuple(pathed))


def display(rule: Rule, rules: Sequence[Rule] = ()) -> str:
    """The label to show beside the number: the label itself (`§ 2.2`, `IV`) when no other of
    `rules` shares it, else the path that tells them apart (`II/III`); empty for a rule that
    has neither."""
    if not rule.label:
        return rule.path if "/" in rule.path else ""
    if rule.label == str(rule.number):
        return ""  # `Rule 2327`, not `Rule 2327 (2327)`
    twins = [r for r in rules if r.label and normal(r.label) == normal(rule.label)]
    if len(twins) <= 1 and rules:
        return rule.label
    return rule.path if "/" in rule.path else rule.label


def beside(rule: Rule, rules: Sequence[Rule], cited: int | None) -> str:
    """The label to show beside the number `cited` for `rule` (an older number of it, once it
    is renumbered): `display`, or empty when the label only repeats that number (a document
    numbered as the game is: "amend rule 201 (201) (now rule 401)" says 201 twice)."""
    label = display(rule, rules)
    return "" if cited is not None and label == str(cited) else label


def shown(rule: Rule) -> str:
    """`103 (§ 2.2)`: the number, with the label beside it when the rule has one."""
    label = display(rule)
    return f"{rule.number} ({label})" if label else str(rule.number)


def reading_key(path: str, position: int, number: int, identity: int) -> tuple[int, int, int]:
    """Where a rule stands when read: a rule from a document (it has a path) at its place in
    the document (its `position`, else its first number), then the others (a proposal's new
    rule) by number. The site, the archive and the ruleset mail all read rules in this order."""
    return (0, position, identity) if path else (1, number, identity)


def reading_order(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    """Rules as a reader expects them: those from a document in the document's order (its
    `position`, else its first number: an amended rule keeps its place among its siblings
    under its new number), then the others by number."""
    return tuple(sorted(rules, key=lambda r: reading_key(r.path, r.position, r.number, r.identity)))
