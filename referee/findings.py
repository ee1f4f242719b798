"""What an imported ruleset's own words say about the game the referee will run (111, 209, 210).

`candidates` finds, in each rule's text, a value it states for a parameter the referee enforces
(the winning score 209, the debate and voting lengths 112/202/203, the cap on mutable rules 210,
the voting threshold 204), with the sentence it came from: a group carries each into a rule's
parameters or dismisses it, so the referee never runs on a house value a rule contradicts.
`unenforced` names the mechanics a document has that the referee does not run (voting
strength, quorum, offices …): they stay with the players.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from referee.importer import Document, Numbered, game_numbers

_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14,
    "fifteen": 15, "twenty": 20, "thirty": 30,
}  # fmt: skip
_COUNT = r"(?P<n>\d+|" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")"
_DURATION = re.compile(_COUNT + r"[\s-]+(?P<unit>days?|weeks?|hours?)\b", re.I)


@dataclass(frozen=True)
class Candidate:
    """A value a rule's text states for a parameter: `winning_score = 50` in rule 2449."""

    parameter: str
    value: int
    rule: str  # the rule's label (or path, or number)
    sentence: str


def _sentences(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [s.strip() for s in re.split(r"(?<=[.;!?])\s+(?=[A-Z0-9(])", flat) if s.strip()]


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _WORDS[word.lower()]


def _days(sentence: str) -> int | None:
    found = _DURATION.search(sentence)
    if found is None:
        return None
    count, unit = _count(found.group("n")), found.group("unit").lower()
    if unit.startswith("week"):
        return count * 7
    if unit.startswith("hour"):
        return count // 24 if count % 24 == 0 and count >= 24 else None
    return count


def _in_sentence(sentence: str) -> list[tuple[str, int]]:
    low = sentence.lower()
    found: list[tuple[str, int]] = []
    points = re.search(r"(\d+)\s+(?:or more\s+)?(?:points?|pts)\b", low)
    won = re.search(r"\bwins?\b(?!\s+(?:a|an)\b)|\bis the winner\b|\bvictor(?:y|ious)\b", low)
    if points and won:
        found.append(("winning_score", int(points.group(1))))
    if re.search(r"\bdebate", low) and (days := _days(sentence)) is not None:
        found.append(("debate_days", days))
    voting = re.search(
        r"\bvoting (?:period|lasts|closes|is open)|\bvotes? (?:may|can) be cast", low
    )
    if voting and "debate" not in low and (days := _days(sentence)) is not None:
        found.append(("voting_days", days))
    cap = re.search(
        r"(?:at most|no more than|not more than|maximum of|up to)\s+(\d+)\s+mutable rules"
        r"|(\d+)\s+mutable rules at most|mutable rules[^.]*?(?:exceed|more than)\s+(\d+)",
        low,
    )
    if cap:
        found.append(("max_mutable_rules", int(next(g for g in cap.groups() if g))))
    if re.search(r"\b(?:adopt|pass|vote|votes|voting)", low):
        if re.search(r"\bunanim", low):
            found.append(("majority_after_rounds", 1000))
        elif re.search(r"\b(?:simple )?majority of (?:the )?(?:votes|players|those)", low):
            found.append(("majority_after_rounds", 0))
    return found


def _name(n: Numbered) -> str:
    return n.section.label or n.section.path or str(n.number)


def candidates(doc: Document) -> list[Candidate]:
    """Every value a rule's text states for a parameter the referee enforces."""
    out = []
    for n in game_numbers(doc):
        for sentence in _sentences(n.section.text):
            for parameter, value in _in_sentence(sentence):
                shown = sentence if len(sentence) <= 160 else sentence[:157] + "…"
                out.append(Candidate(parameter, value, _name(n), shown))
    return out


_MECHANICS: tuple[tuple[str, str], ...] = (
    ("voting strength", r"\bvoting strength|\bvotes? (?:count|counts) (?:double|twice)"),
    ("quorum", r"\bquorum"),
    ("offices", r"\boffices?\b|\bofficers?\b"),
    ("elections", r"\belect(?:ion|ed|s)?\b"),
    ("adoption indices", r"\badoption index"),
    ("a voting threshold other than unanimity or a majority",
     r"\btwo[-\s]thirds\b|\bthree[-\s]quarters\b|\b\d+\s?%|\bsupermajority"),
    ("currencies and assets", r"\bcurrenc|\bassets?\b|\bcoins?\b|\bbalances?\b"),
    ("contracts and pledges", r"\bcontracts?\b|\bpledges?\b|\bpromises?\b"),
    ("ratification", r"\bratif"),
    ("deputisation and proxies", r"\bdeputi[sz]|\bprox(?:y|ies)\b"),
    ("conditional votes", r"\bconditional votes?"),
    ("penalties and blots", r"\bpenalt|\bblots?\b|\bfines?\b"),
    ("holidays and calendar events",
     r"\bholidays?\b|\bbirthdays?\b|\bweek of each\b|\beach (?:january|february|march"
     r"|april|may|june|july|august|september|october|november|december)\b"),
)  # fmt: skip


def unenforced(doc: Document) -> list[tuple[str, tuple[str, ...]]]:
    """The document's mechanics the referee does not run, each with the rules that state it."""
    numbered = game_numbers(doc)
    out = []
    for name, pattern in _MECHANICS:
        where = tuple(_name(n) for n in numbered if re.search(pattern, n.section.text, re.I))
        if where:
            out.append((name, where))
    powered = tuple(_name(n) for n in numbered if n.section.power)
    if powered:
        out.append(
            ("rules' power (which rule takes precedence, what a proposal may change)", powered)
        )
    return out


def describe(found: Sequence[Candidate]) -> list[str]:
    """The candidates as the import lists them."""
    return [f"  rule {c.rule} says {c.parameter} = {c.value}: “{c.sentence}”" for c in found]
