"""What an imported ruleset's own words say about the game the referee will run (111, 209, 210).

`candidates` finds, in each rule's text, in English or in Italian, a value it states for a
parameter the referee enforces (the winning score 209, the debate and voting lengths
112/202/203, the cap on mutable rules 210, the voting threshold 204), with the sentence it came
from: a group carries each into a rule's parameters or dismisses it, so the referee never runs
on a house value a rule contradicts. A threshold the referee cannot count (two thirds, 60 %) is
found too: it can only be dismissed, and stays with the players. `seed_carried` picks out the
values the game's own mechanics carry: in a ruleset that keeps Nomic's numbers, a value stated
by the rule that carries that parameter in the seed (209's 100 points, 210's 25 rules) is
carried by that rule, as the shipped rulesets carry it. `unenforced` names the mechanics a
document has that the referee does not run (voting strength, quorum, offices …): they stay with
the players.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from referee.core import params
from referee.importer import Document, Numbered, game_numbers, nomic_style

_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14,
    "fifteen": 15, "twenty": 20, "thirty": 30,
    "un": 1, "uno": 1, "una": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sei": 6,
    "sette": 7, "otto": 8, "nove": 9, "dieci": 10, "undici": 11, "dodici": 12,
    "quattordici": 14, "quindici": 15, "venti": 20, "trenta": 30,
}  # fmt: skip
_COUNT = r"(?P<n>\d+|" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>days?|weeks?|hours?|giorni|giorno|settimane|settimana|ore)"
_DURATION = re.compile(
    r"(?P<least>\b(?:at least|almeno|non meno di|no less than|not less than)\s+)?\b"
    + _COUNT
    + r"[\s-]+"
    + _UNIT
    + r"\b",
    re.I,
)
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
    "primo": 1, "secondo": 2, "terzo": 3, "quarto": 4, "quinto": 5,
}  # fmt: skip
_LATER_MAJORITY = re.compile(
    r"\b(?P<ord>" + "|".join(_ORDINALS) + r"|\d+)(?:st|nd|rd|th|°|º)?\s+"
    r"(?:(?:full|complete|completo)\s+)?(?:round|circuit|giro)\b[^.]*?\b(?:majority|maggioranza)"
    r"|\b(?:majority|maggioranza)\b[^.]*?\b(?:after|dopo)\s+(?:the\s+|il\s+)?"
    r"(?P<ord2>" + "|".join(_ORDINALS) + r"|\d+)(?:st|nd|rd|th|°|º)?\s+(?:round|circuit|giro)",
    re.I,
)
_FRACTIONS = {
    "two thirds": "2/3", "two-thirds": "2/3", "due terzi": "2/3",
    "three quarters": "3/4", "three-quarters": "3/4", "three fourths": "3/4",
    "tre quarti": "3/4", "three fifths": "3/5", "tre quinti": "3/5",
}  # fmt: skip
_SUPER = re.compile(
    r"\b(?P<words>" + "|".join(sorted(_FRACTIONS, key=len, reverse=True)) + r")\b"
    r"|\b(?P<frac>[1-9]/[1-9])\b"
    r"|\b(?P<pct>\d{2})\s?(?:%|per ?cent\b|percento\b)",
    re.I,
)
# what a sentence about adopting rule changes says (English and Italian)
_ADOPTS = (
    r"\b(?:adopt|pass|vote|votes|voting|voted|adott|approv|passa|votazion|vot[oiae]\b"
    r"|votare|votato|votano)"
)
# a winner: English and Italian; not "winning proposal" nor "proposte vincenti"
_WINS = (
    r"\bwins?\b(?!\s+(?:a|an)\b)|\bis the winner\b|\bvictor(?:y|ious)\b"
    r"|\bvinc(?:e|ono|erà|eranno|ere)\b|\bvincitor[ei]\b|\bvincitrice\b|\bla vittoria\b"
)
_DEBATE = r"\bdebat|\bdiscuss|\bdibatt|\bdiscut|\bdiscussion"
_VOTING = (
    r"\bvoting (?:period|lasts|closes|ends|is open)|\bvotes? (?:may|can) be cast"
    r"|\b(?:has|have|had) voted\b|\bvotazion|\bhanno votato\b|\bi voti (?:possono|si)"
)
_CAP = re.compile(
    r"(?:at most|more than|maximum of|up to|"
    r"più di|al massimo|non oltre)\s+(\d+)\s+(?:mutable rules|(?:regole|leggi) mutabili)"
    r"|(\d+)\s+(?:mutable rules|(?:regole|leggi) mutabili) at most"
    r"|(?:mutable rules|(?:regole|leggi) mutabili)[^.]*?"
    r"(?:exceed|more than|superare|più di|oltre)\s+(\d+)",
    re.I,
)


@dataclass(frozen=True)
class Candidate:
    """A value a rule's text states for a parameter: `winning_score = 50` in rule 2449. A
    voting threshold the referee cannot count is a fraction, `"2/3"`: it can only be dismissed."""

    parameter: str
    value: int | str
    rule: str  # the rule's label (or path, or number)
    sentence: str

    @property
    def countable(self) -> bool:
        """Whether the referee can hold this value (a count, not a fraction it cannot count)."""
        return isinstance(self.value, int)


def _sentences(text: str) -> list[str]:
    """The text's sentences; a Markdown heading inside a rule (`### 102.1`) ends one."""
    out = []
    for chunk in re.split(r"(?m)^\s{0,3}#{1,6}\s.*$", text):
        flat = " ".join(chunk.split())
        parts = re.split(r"(?<=[.;!?])\s+(?=[A-Z0-9(À-ÝÈÉ])", flat)
        out += [s.strip() for s in parts if s.strip()]
    return out


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _WORDS[word.lower()]


def _days(sentence: str) -> tuple[int, bool] | None:
    """The days a sentence's first duration gives, and whether it is a least ("at least a week")."""
    found = _DURATION.search(sentence)
    if found is None:
        return None
    count, unit = _count(found.group("n")), found.group("unit").lower()
    least = found.group("least") is not None
    if unit.startswith(("week", "settiman")):
        return count * 7, least
    if unit.startswith(("hour", "ore")):
        return (count // 24, least) if count % 24 == 0 and count >= 24 else None
    return count, least


def _threshold(low: str) -> int | str | None:
    """The voting threshold a sentence about adopting states: 1000 rounds of unanimity (never a
    majority), 0 (a majority from the start), or a fraction the referee cannot count."""
    if re.search(r"\btransmut|\btrasmut|\bappeal|\bappell", low):
        return None  # 110's unanimity and 212's approval of a ruling are not the threshold
    if not re.search(_ADOPTS, low):
        return None
    share = _SUPER.search(low)
    if share and re.search(r"\bmajority|\bmaggioranza|\bvot|\bfavor|\bin favou?r", low):
        if share.group("words"):
            return _FRACTIONS[share.group("words").lower()]
        if share.group("frac"):
            return share.group("frac")
        percent = int(share.group("pct"))
        if 50 < percent < 100:
            return f"{percent}%"
    if re.search(r"(?<!without )(?<!senza l')(?<!senza l’)(?<!senza )\bunanim", low):
        return 1000
    if re.search(
        r"\bsimple majority|\bmajority of (?:the )?(?:votes|players|those|voters)"
        r"|\bmaggioranza (?:semplice|assoluta|dei (?:voti|giocatori|votanti|presenti|membri)"
        r"|degli (?:elettori|aventi))",
        low,
    ):
        return 0
    return None


def _in_sentence(sentence: str) -> list[tuple[str, int | str]]:
    low = sentence.lower()
    found: list[tuple[str, int | str]] = []
    points = re.search(
        r"(\d+)\s+(?:\([^)]*\)\s+)?(?:or more\s+|o più\s+)?(?:points?|pts|punti)\b", low
    )
    if points and re.search(_WINS, low):
        found.append(("winning_score", int(points.group(1))))
    debate = re.search(_DEBATE, low)
    if debate and (days := _days(sentence)) is not None:
        found.append(("debate_days_min" if days[1] else "debate_days", days[0]))
    if re.search(_VOTING, low) and not debate and (days := _days(sentence)) is not None:
        found.append(("voting_days", days[0]))
    cap = _CAP.search(low)
    if cap:
        found.append(("max_mutable_rules", int(next(g for g in cap.groups() if g))))
    threshold = _threshold(low)
    if threshold is not None:
        found.append(("majority_after_rounds", threshold))
    return found


def rule_name(n: Numbered) -> str:
    """How a candidate names its rule: the label, else the path, else the number."""
    return n.section.label or n.section.path or str(n.number)


def _shown(sentence: str) -> str:
    return sentence if len(sentence) <= 160 else sentence[:157] + "…"


def _in_rule(text: str) -> list[tuple[str, int | str, str]]:
    """The values a rule's sentences state; unanimity that a later sentence turns into a
    majority after the Nth round of turns (204) is N rounds, said by both sentences."""
    sentences = _sentences(text)
    out: list[tuple[str, int | str, str]] = []
    for at, sentence in enumerate(sentences):
        for parameter, value in _in_sentence(sentence):
            said = sentence
            if parameter == "majority_after_rounds" and value == 1000:
                for later in sentences[at + 1 : at + 3]:
                    turned = _LATER_MAJORITY.search(later)
                    if turned:
                        word = (turned.group("ord") or turned.group("ord2")).lower()
                        value = int(word) if word.isdigit() else _ORDINALS[word]
                        said = f"{sentence} {later}"
                        break
            out.append((parameter, value, said))
    return out


def carried_values(text: str) -> list[tuple[str, int]]:
    """The values a rule's text states that the referee would carry by itself: what the
    labelled set (tests/data/findings) measures."""
    return [(p, v) for p, v, _ in _in_rule(text) if isinstance(v, int)]


def candidates(doc: Document) -> list[Candidate]:
    """Every value a rule's text states for a parameter the referee enforces."""
    out = []
    for n in game_numbers(doc):
        for parameter, value, sentence in _in_rule(n.section.text):
            out.append(Candidate(parameter, value, rule_name(n), _shown(sentence)))
    return out


def seed_carried(doc: Document, found: Sequence[Candidate]) -> list[Candidate]:
    """The candidates the game's own mechanics carry: where the rules keep Nomic's numbers (and
    so carry the seed's mechanics by number), every value stated for a parameter comes from
    the rule that carries it in the seed (`winning_score` only from 209) and is one the referee
    counts. Those rules carry their values, as the shipped rulesets' rules do."""
    numbered = game_numbers(doc)
    if not nomic_style(numbered):
        return []
    out = []
    for parameter in dict.fromkeys(c.parameter for c in found):
        stated = [c for c in found if c.parameter == parameter]
        home = str(params.SPEC_BY_NAME[parameter].rule)
        values = {c.value for c in stated}
        if all(c.rule == home and c.countable for c in stated) and len(values) == 1:
            out.append(stated[0])
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
        where = tuple(rule_name(n) for n in numbered if re.search(pattern, n.section.text, re.I))
        if where:
            out.append((name, where))
    powered = tuple(rule_name(n) for n in numbered if n.section.power)
    if powered:
        out.append(
            ("rules' power (which rule takes precedence, what a proposal may change)", powered)
        )
    return out


def describe(found: Sequence[Candidate], carried: Sequence[Candidate] = ()) -> list[str]:
    """The candidates as the import lists them: those the seed's mechanics carry say so, and a
    threshold the referee cannot count says it stays with the players."""
    out = []
    for c in found:
        line = f"  rule {c.rule} says {c.parameter} = {c.value}: “{c.sentence}”"
        if c in carried:
            line += f" (carried by rule {c.rule}, as in the seed)"
        elif not c.countable:
            line += (
                " (the referee counts only unanimity or a majority: dismiss it; the players"
                " keep this threshold)"
            )
        out.append(line)
    return out
