"""What an imported ruleset's own words say about the game the referee will run (111, 209, 210).

`candidates` finds, in each rule's text, in English or in Italian, a value it states for a
parameter the referee enforces (the winning score 209, the debate and voting lengths
112/202/203, the cap on mutable rules 210, the voting threshold 204), with the sentence it came
from. `carried_values` keeps those a sentence sets plainly (its subject is the mechanic, its
verb sets it: "the first player to reach 100 points wins", "voting lasts 7 days"): the referee
carries them by itself, and every other value found stays prose, on house values, unless the
group carries it (measured on tests/data/findings: precision 0.95 or more, recall 0.8). A
threshold the referee cannot count (two thirds, 60 %) is found too: it can only be dismissed,
and stays with the players. `seed_carried` picks out the
values the game's own mechanics carry: in a ruleset that keeps Nomic's numbers, a value stated
by the rule that carries that parameter in the seed (209's 100 points, 210's 25 rules) is
carried by that rule, as the shipped rulesets carry it. `unenforced` names the mechanics a
document has that the referee does not run (voting strength, quorum, offices …): they stay with
the players.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
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

    @property
    def plain(self) -> bool:
        """Whether its sentence sets the value plainly, so the referee carries it by itself."""
        return self.countable and (self.parameter, self.value) in carried_values(self.sentence)


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
    if re.search(r"(?<!without )(?<!senza l')(?<!senza l’)(?<!senza )\bunanim", low) or re.search(
        r"\bonly (?:if|when) every (?:eligible )?(?:player|voter)s? (?:votes? for|has approved"
        r"|approves?|is in favou?r)",
        low,
    ):
        return 1000
    if re.search(
        r"\bsimple majority|\bmajority of (?:the )?(?:votes|players|those|voters)"
        r"|\bvotes? for (?:it )?(?:are|is) more than (?:the )?votes? against"
        r"|\bmore (?:players |voters )?vote for it than against"
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


# --- what a sentence states plainly: its subject is the mechanic, its verb sets the value ----
# (issue 30). Only these are carried by themselves; every other value found stays prose.

# the subject of a sentence about adopting rule changes, then the verb that decides them
_CHANGE_SUBJECT = re.compile(
    r"^(?:(?:a|an|each|every|any|the|un|una|ogni|il|la)\s+)?(?:proposed\s+)?"
    r"(?:rule[- ]changes?|proposals?|pull requests?|amendments?|changes? to (?:these|the|this)"
    r" (?:house )?(?:rules|laws|statutes)|cambiament[oi] (?:di|del|al) regolamento"
    r"|propost[ae]|modific[ah]e? (?:delle|alle) regole)"
    r"(?:\s+(?!that\b|which\b|whose\b|who\b|if\b|che\b|whose\b)[\w'-]+){0,3}?"
    r"\s+(?:(?:is|are|shall be|will be|è|sono|viene|vengono)\s+)?"
    r"(?:adopted|passed|approved|merged|accepted|adottat[oaie]|approvat[oaie]|accolt[oaie]"
    r"|passes|pass|needs|need|requires|require|passa|passano|richiede)\b",
    re.I,
)
_NOT_THE_CHANGE = re.compile(r"\badoption index|\bunless\b|\bsalvo\b|\btrasmut|\btransmut", re.I)
_DEBATE_WORD = re.compile(r"\bdebat|\bdiscuss|\bdibatt|\breview period", re.I)
_VOTING_WORD = re.compile(r"\bvoting\b|\bvotazion|\bvotes? (?:may|can) be cast", re.I)
# the verb (or preposition) right before a duration that a sentence about it sets
_SETS_DAYS = re.compile(
    r"\b(?:lasts?|is|are|for|per|dura|durano|closes(?:\s+after)?|open|aperta|aperto|has|have"
    r"|ha|hanno|period of)\s+(?P<least>(?:at least|almeno|no less than|not less than)\s+)?"
    + _COUNT
    + r"[\s-]+"
    + _UNIT
    + r"\b",
    re.I,
)
# "two weeks of debate": the duration names the debate itself
_DAYS_OF_DEBATE = re.compile(
    r"\b(?:has|have|ha|hanno)\s+(?P<least>(?!))?"
    + _COUNT
    + r"[\s-]+"
    + _UNIT
    + r"\s+(?:of|di)\s+(?:debate|discussion|dibattito|discussione)\b",
    re.I,
)
# a duration so placed is a deadline, a bound or a condition, not the length itself
_NOT_THE_LENGTH = re.compile(
    r"\bwithin\b|\bentro\b|\bduring\b(?!\s+which)|\bfirst\b|\bextend|\bprorog|\bup to\b"
    r"|\bmore than\b|(?<!no )(?<!not )\bless than\b|\bshorter\b|\blonger\b|\bcannot\b"
    r"|\bcan't\b|\bset to\b|\beligible\b|\bif\b|\bunless\b|\bwithdraw|\bat the request\b"
    r"|\bcounts?\b|\bal massimo\b|\bse\b",
    re.I,
)
_REACHES = re.compile(
    r"\b(?:reach|reaches|reached|reaching|achieve|achieves|score|scores|earn|earns|has|have|holds?|with"
    r"|collect|collects|gets?|raggiunge|arriva a|totalizzare|totalizza|ottiene)\s+"
    r"(?:i\s+)?(?P<n>\d+|one hundred|a hundred|cento)\s+(?:or more\s+|o più\s+)?"
    r"(?:\(positive\)\s+|positive\s+|league\s+)?(?:points?|punti)\b",
    re.I,
)
_WINS_PLAINLY = re.compile(
    r"\bwins?\b(?!\s+(?:\d|a\b|an\b|nothing|points?))|\bis (?:declared )?the winner\b"
    r"|\bthe winner is\b|\bis won by\b|\bvince\b|\bvincitore\b",
    re.I,
)
_NOT_THE_WIN = re.compile(
    r"\bnot\b|\bnothing\b|\bbelow\b|\bmust\b|\bbefore\b|\bsecond\b|\bcannot\b|\bmay\b"
    r"|\bnon\b|\bif\b",
    re.I,
)
_TITLE = re.compile(r"^[^\W\d_][\w' ]{0,40}?\s[—–]\s+")
_HUNDRED = {"one hundred": 100, "a hundred": 100, "cento": 100}
_NOT_THE_CAP = re.compile(r"\bplayers?\b|\bpropos|\bgiocator|\bround\b|\bturn\b", re.I)


def _length(found: re.Match[str]) -> int | None:
    """The days of a duration a pattern found, whole days only (48 hours is 2, 36 none)."""
    days = _days(found.string[found.start("n") : found.end("unit")])
    return days[0] if days is not None and days[0] > 0 else None


def _plain_days(sentence: str) -> list[tuple[str, int]]:
    """The debate or voting length a clause sets plainly: the first mechanic it names is its
    subject, and a verb sets the duration right after ("Voting lasts 3 days"), or the
    duration names the debate itself ("two weeks of debate")."""
    out = []
    for clause in sentence.split(";"):
        if _NOT_THE_LENGTH.search(clause):
            continue
        debate, voting = _DEBATE_WORD.search(clause), _VOTING_WORD.search(clause)
        named = _DAYS_OF_DEBATE.search(clause)
        if named is not None and (days := _length(named)) is not None:
            out.append(("debate_days", days))
            continue
        subject = min((m for m in (debate, voting) if m), key=lambda m: m.start(), default=None)
        found = _SETS_DAYS.search(clause)
        if subject is None or found is None or found.start() < subject.start():
            continue
        least = found.group("least") is not None
        if (days := _length(found)) is None:
            continue
        if subject is debate:
            out.append(("debate_days_min" if least else "debate_days", days))
        elif not least:
            out.append(("voting_days", days))
    return out


def _plain(said: str, stated: list[tuple[str, int | str]]) -> list[tuple[str, int]]:
    """The values a sentence sets plainly, of those it states (`stated`); a one-line rule's
    title before it ("Votes — A change …") is not its subject."""
    sentence = _TITLE.sub("", said, count=1)
    out = _plain_days(sentence)
    points = _REACHES.search(sentence)
    if points and _WINS_PLAINLY.search(sentence) and not _NOT_THE_WIN.search(sentence):
        word = points.group("n").lower()
        out.append(("winning_score", int(word) if word.isdigit() else _HUNDRED[word]))
    cap = _CAP.search(sentence)
    if cap and not _NOT_THE_CAP.search(sentence):
        out.append(("max_mutable_rules", int(next(g for g in cap.groups() if g))))
    if _CHANGE_SUBJECT.search(sentence) and not _NOT_THE_CHANGE.search(sentence):
        threshold = dict(stated).get("majority_after_rounds")
        if isinstance(threshold, int):
            out.append(("majority_after_rounds", threshold))
    return out


def carried_values(text: str) -> list[tuple[str, int]]:
    """The values a rule's text sets plainly, which the referee carries by itself: a sentence
    whose subject is the mechanic and whose verb sets it ("the first player to reach 100
    points wins", "voting lasts 7 days"). What the labelled set (tests/data/findings)
    measures."""
    out: list[tuple[str, int]] = []
    for sentence, _, stated in _readings(text):
        out += [found for found in _plain(sentence, stated) if found not in out]
    return out


def rule_name(n: Numbered, shared: Collection[str] = ()) -> str:
    """How a candidate names its rule: the label, else the path, else the number; the path
    when other rules share the label (`Scoring/II`, where every heading has a rule II)."""
    if n.section.label and n.section.label not in shared:
        return n.section.label
    return n.section.path or str(n.number)


def _shared_labels(numbered: Sequence[Numbered]) -> set[str]:
    """The labels several rules use."""
    seen = [n.section.label for n in numbered if n.section.label]
    return {label for label in seen if seen.count(label) > 1}


def _shown(sentence: str) -> str:
    return sentence if len(sentence) <= 160 else sentence[:157] + "…"


def _readings(text: str) -> list[tuple[str, str, list[tuple[str, int | str]]]]:
    """Each sentence of a rule, what it says (itself, or with the sentence that finishes it)
    and the values it states. Unanimity that a later sentence turns into a majority after the
    Nth round of turns (204) is N rounds, said by both; that later sentence's majority is
    not read again alone."""
    sentences = _sentences(text)
    out: list[tuple[str, str, list[tuple[str, int | str]]]] = []
    turned_at: set[int] = set()
    for at, sentence in enumerate(sentences):
        said, values = sentence, []
        for parameter, value in _in_sentence(sentence):
            if parameter == "majority_after_rounds" and at in turned_at:
                continue
            if parameter == "majority_after_rounds" and value == 1000:
                for later_at in range(at + 1, min(at + 3, len(sentences))):
                    turned = _LATER_MAJORITY.search(sentences[later_at])
                    if turned:
                        word = (turned.group("ord") or turned.group("ord2")).lower()
                        value = int(word) if word.isdigit() else _ORDINALS[word]
                        said = f"{sentence} {sentences[later_at]}"
                        turned_at.add(later_at)
                        break
            values.append((parameter, value))
        out.append((sentence, said, values))
    return out


def _in_rule(text: str) -> list[tuple[str, int | str, str]]:
    """The values a rule's sentences state, each with what says it."""
    return [(p, v, said) for _, said, values in _readings(text) for p, v in values]


def candidates(doc: Document) -> list[Candidate]:
    """Every value a rule's text states for a parameter the referee enforces."""
    out = []
    numbered = game_numbers(doc)
    shared = _shared_labels(numbered)
    for n in numbered:
        for parameter, value, sentence in _in_rule(n.section.text):
            out.append(Candidate(parameter, value, rule_name(n, shared), sentence))
    return out


def carried_plainly(found: Sequence[Candidate], handled: Iterable[str] = ()) -> list[Candidate]:
    """The values the referee carries by itself (111, 211): for each parameter the group has
    not carried or set aside (`handled`), the value the rules set plainly, by the first rule
    that does, when every rule that sets it plainly agrees. The rest stays prose: the
    parameter keeps its house value, which the ruleset mail names."""
    out = []
    for parameter in dict.fromkeys(c.parameter for c in found if c.parameter not in handled):
        plain = [c for c in found if c.parameter == parameter and c.plain]
        if plain and len({c.value for c in plain}) == 1:
            out.append(plain[0])
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


def describe(
    found: Sequence[Candidate],
    carried: Sequence[Candidate] = (),
    plainly: Sequence[Candidate] = (),
) -> list[str]:
    """The candidates as the import lists them: those the seed's mechanics carry say so, those
    the referee carries because the rule sets them plainly say so, and a threshold the
    referee cannot count says it stays with the players."""
    out = []
    for c in found:
        line = f"  rule {c.rule} says {c.parameter} = {c.value}: “{_shown(c.sentence)}”"
        if c in carried:
            line += f" (carried by rule {c.rule}, as in the seed)"
        elif c in plainly:
            line += f" (carried by rule {c.rule}: the rule sets it plainly)"
        elif not c.countable:
            line += (
                " (the referee counts only unanimity or a majority: dismiss it; the players"
                " keep this threshold)"
            )
        out.append(line)
    return out


def waiting(
    found: Sequence[Candidate], handled: Iterable[str], plainly: Sequence[Candidate], folder: str
) -> list[str]:
    """What the import says of the values neither the group nor the referee carries: they stay
    prose, on house values, and `init --strict` refuses until each is carried or dismissed."""
    done = set(handled) | {c.parameter for c in plainly}
    names = sorted({c.parameter for c in found if c.parameter not in done})
    if not names:
        return []
    return [
        "these stay prose, on house values that the ruleset mail names (no sentence sets them "
        f"plainly): {', '.join(names)}; carry one by its rule (--carry NAME=RULE, or [carry] in "
        f"{folder}/ruleset.toml) or set it aside (--dismiss NAME); init --strict refuses until "
        "each is carried or dismissed"
    ]
