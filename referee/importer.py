"""Read a rule document (a club's laws, a constitution, a Nomic ruleset) into rules (101, 102).

A ruleset that names its rules by headers (`Rule 2327/3 (Power=1)` and a title line, `### Rule
4E83: Title`, `**101.** text`, `**101** *Title*`, an underlined `Rule 5`) is read by them: a
rule runs from its header to the next rule header, heading or separator line, its lists
included; its History / Annotations blocks are its history; separators, a table of contents,
a power table and section titles are document text. Rule numbers there are identifiers: any
order, any gap, negative or alphanumeric, and each rule keeps its label in the game.

Otherwise `read_document` finds the document's title and preamble, its headings at any depth
(Markdown `#`, underlined lines, ALL-CAPS lines, "Chapter/Capitolo/Luku/Глава N" lines) and its
numbered rules: Arabic, dotted (`2.2.1`), `§`-prefixed, negative (`§ -1`) and Roman (`IV`, `IV.`)
numbers, possibly restarting under each heading. Lettered items (`a)`, `(b)`), bullets and
dash-items stay inside their rule. A paragraph without a number belongs to the rule or heading
above it; a line that merely begins with a number inside a paragraph is not a new rule: a
number starts a rule only when the line's shape and the numbering's sequence agree.

Nothing is dropped or rewritten: every character of the document is in exactly one place
(the title, the preamble, a heading or a rule, with each rule's marker kept as written), which
is what `referee.exporter` puts back together. A rule's identity in the document is its path
(`II/III`: the labels of the headings above it, then its own); its label (`§ 2.2`, `IV`) is kept
for display and for the players' commands. `write_folder` writes the folder the loader reads
(`referee.rulebook`): `ruleset.toml` plus one `NNN.md` per rule, for a person to review.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from referee.counts import counted

# --- the parts of a document ----------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    """A heading line (two lines when underlined) and the unnumbered text under it."""

    line: str  # exactly as written
    label: str  # "II" for "Chapter II", "" when it has no number
    depth: int
    path: str
    line_no: int
    text: str = ""
    kind: str = "heading"  # "text": document text outside rules (separators, a contents list)


@dataclass(frozen=True)
class Section:
    """One numbered rule of the document (or one paragraph, in a document without numbers)."""

    marker: str  # as written: "• § 2.2.1.", "IV.", "" when unnumbered
    label: str  # "§ 2.2.1", "IV", "" when unnumbered
    path: str  # "II/III": the headings' labels, then the rule's own; unique in the document
    depth: int
    line_no: int
    text: str = ""
    title: str = ""  # "Read the Ruleset Week" under `Rule 2327/3 (Power=1)`
    revision: str = ""  # "3" in `Rule 2327/3`
    power: str = ""  # "1" in `(Power=1)`
    history: str = ""  # the rule's History / Annotations blocks, as written
    mutability: str = ""  # "immutable" or "mutable" when the header says (`Rule 101 (Immutable)`)


Part = Heading | Section


@dataclass(frozen=True)
class Document:
    title: str
    preamble: str
    parts: tuple[Part, ...]
    numbering: str  # what numbered the rules: "§", "arabic", "dotted", "roman", "none", mixed
    notes: tuple[str, ...] = ()  # lines that looked numbered but were kept as text, and why
    format: str = "txt"  # "md" when the document uses Markdown headings
    headers: bool = False  # rules found by their headers (`Rule 2327/3`, `**101.**`)

    @property
    def sections(self) -> tuple[Section, ...]:
        return tuple(p for p in self.parts if isinstance(p, Section))

    @property
    def headings(self) -> tuple[Heading, ...]:
        return tuple(p for p in self.parts if isinstance(p, Heading) and p.kind == "heading")

    @property
    def passages(self) -> tuple[Heading, ...]:
        """Document text kept outside rules (separator lines, a table of contents)."""
        return tuple(p for p in self.parts if isinstance(p, Heading) and p.kind == "text")


# --- recognising lines ----------------------------------------------------------------------

_ROMAN = re.compile(r"M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})\Z")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}

# A rule's number at the start of a line: an optional bullet, an optional "§" or "Art.", then
# an Arabic (dotted, maybe negative) or Roman number, an optional "." and then a space.
_MARKER = re.compile(
    r"^(?P<indent>\s*)(?P<marker>(?P<bullet>[•·▪◦‣*]\s*|[–—-]\s+)?"
    r"(?P<pre>§§?\s*|(?:Art\.|Article|Articolo|Artikla|Artikel|Статья|Статья)\s+)?"
    r"(?P<num>-?\d+(?:\.\d+)*|[IVXLCDM]+)(?P<end>[.)]?))(?=\s|$)(?P<rest>.*)$"
)
# Items that stay inside their rule: bullets, dashes, "a)", "(b)", "1)", "(2)".
_SUB_ITEM = re.compile(r"^\s*(?:[•·▪◦‣*]|[–—-](?=\s)|\(?[0-9a-zA-Z]{1,3}\)(?=\s|$))")
_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^\s*(=+|-+|~+)\s*$")
_KEYWORDS = (
    # (rank, words): a smaller rank is a larger division
    (1, ("book", "libro", "kirja", "книга", "книга")),
    (2, ("part", "parte", "osa", "часть", "teil", "partie")),
    (3, ("title", "titolo", "titre", "título", "titel", "отдел", "отдѣлъ")),
    (4, ("chapter", "capitolo", "luku", "глава", "kapitel", "chapitre", "capítulo", "раздел")),
    (4, ("раздѣлъ",)),
)
_KEYWORD_RANK = {word: rank for rank, words in _KEYWORDS for word in words}
_NUMBER_WORD = r"(?P<num>[IVXLCDM]+|\d+|[A-Z])"
_KEYWORD_LINE = re.compile(
    r"^\s*(?:#+\s*)?(?P<word>[^\W\d_]+)\s+" + _NUMBER_WORD + r"\b\.?(?P<rest>.*)$", re.I
)
_NUMBER_FIRST_LINE = re.compile(
    r"^\s*(?P<num>[IVXLCDM]+|\d+)\.?\s+(?P<word>luku|osa)\b(?P<rest>.*)$", re.I
)
# A club's one-line rule after its numeral: a short capitalised title, a dash or a colon, then
# the rule's text ("II Drinks — No drinks on the board."): the numeral needs no "." then.
_ONE_LINE = re.compile(
    r"^[A-ZÀ-Ý][^.:;—–]{0,40}?\s(?:—|–|-|:)\s+\S|^[A-ZÀ-Ý][^.:;—–\s]{0,40}:\s+\S"
)
_DASHES = re.compile(r"^\s*(?:-\s*){3,}$")  # a separator line that ends the rule above it
_MAX_GAP = 10  # a number further than this from its predecessor needs a "§" to start a rule


def roman_value(text: str) -> int | None:
    """The value of a Roman numeral written in capitals, or None."""
    if not text or _ROMAN.match(text) is None:
        return None
    total = 0
    for index, char in enumerate(text):
        value = _ROMAN_VALUES[char]
        following = _ROMAN_VALUES[text[index + 1]] if index + 1 < len(text) else 0
        total += -value if value < following else value
    return total


def _keyword_heading(line: str) -> tuple[int, str] | None:
    """(rank, label) when the line is "Chapter II ...", "Глава 3", "2. luku" and the like."""
    if len(line.strip()) > 100:
        return None
    found = _KEYWORD_LINE.match(line)
    if found is not None:
        rank = _KEYWORD_RANK.get(found.group("word").lower())
        if rank is not None and (found.group("num").isdigit() or roman_value(found.group("num"))):
            return rank, found.group("num")
    found = _NUMBER_FIRST_LINE.match(line)
    if found is not None and (found.group("num").isdigit() or roman_value(found.group("num"))):
        return _KEYWORD_RANK[found.group("word").lower()], found.group("num")
    return None


def _is_caps_heading(line: str) -> bool:
    """An ALL-CAPS line of a few words: a heading, unless it is a sentence."""
    letters = [c for c in line if c.isalpha()]
    if len(letters) < 3 or len(line.strip()) > 80:
        return False
    return all(c.isupper() for c in letters if c.isupper() or c.islower()) and any(
        c.isupper() for c in letters
    )


def _heading_label(text: str) -> tuple[str, str]:
    """The number a heading starts with ("II. Voting" -> "II") and the rest."""
    found = _MARKER.match(text)
    if found is not None and not found.group("bullet"):
        num = found.group("num")
        if num.lstrip("-").replace(".", "").isdigit() or roman_value(num):
            return num, found.group("rest").strip()
    return "", text.strip()


# --- the reader -----------------------------------------------------------------------------


@dataclass
class _Open:
    """A part being read: its lines so far."""

    part: Part
    lines: list[str] = field(default_factory=list)


@dataclass
class _Scope:
    """What the numbering has done so far under the current heading (numbers restart)."""

    last_top: int | None = None
    last_roman: int | None = None
    children: dict[tuple[int, ...], int] = field(default_factory=dict)
    seen: set[tuple[int, ...]] = field(default_factory=set)


class _Reader:
    def __init__(self, lines: Sequence[str], numbered: bool) -> None:
        self.lines = lines
        self.numbered = numbered
        self.title = ""
        self.preamble: list[str] = []
        self.parts: list[_Open] = []
        self.notes: list[str] = []
        self.kinds: list[tuple[str, int]] = []  # heading kinds, in the order first seen
        self.stack: list[Heading] = []  # the headings above the current line
        self.scope = _Scope()
        self.paths: set[str] = set()
        self.unnumbered = 0
        self.styles: set[str] = set()
        self.markdown = False
        self.last_text = -1  # the index of the last line with text
        self.top_end: str | None = None  # how the rules' numbers end: "." or ")"

    # ----- helpers ------------------------------------------------------------------------

    def owner_lines(self) -> list[str]:
        return self.parts[-1].lines if self.parts else self.preamble

    def depth_of(self, kind: tuple[str, int]) -> int:
        if kind not in self.kinds:
            self.kinds.append(kind)
            md = sorted(k for k in self.kinds if k[0] == "md")
            others = [k for k in self.kinds if k[0] != "md"]
            self.kinds = md + others if md else others
        return self.kinds.index(kind) + 1

    def unique(self, path: str) -> str:
        candidate, count = path, 1
        while candidate in self.paths:
            count += 1
            candidate = f"{path}#{count}"
        self.paths.add(candidate)
        return candidate

    def heading_path(self) -> list[str]:
        return [h.label or h.line.splitlines()[0].strip("# ").strip()[:40] for h in self.stack]

    def add_heading(self, line: str, label: str, kind: tuple[str, int], line_no: int) -> None:
        depth = self.depth_of(kind)
        self.stack = [h for h in self.stack if h.depth < depth]
        component = label or line.splitlines()[0].strip("# ").strip()[:40]
        path = self.unique("/".join([*self.heading_path(), component]))
        heading = Heading(line=line, label=label, depth=depth, path=path, line_no=line_no)
        self.stack.append(heading)
        self.parts.append(_Open(heading))
        self.scope = _Scope()
        if re.fullmatch(r"-?\d+(?:\.\d+)*", label):  # "## 2. Games" then "2.1", "2.2"
            self.scope.seen.add(tuple(int(p) for p in label.split(".")))
        self.unnumbered = 0

    def add_section(self, marker: str, label: str, depth: int, line_no: int, rest: str) -> None:
        own = label or f"¶{self.unnumbered}"
        path = self.unique("/".join([*self.heading_path(), own]))
        base = len(self.stack)
        section = Section(marker, label, path, base + depth, line_no)
        self.parts.append(_Open(section, [rest] if rest else []))

    def opens_part(self, line: str, index: int, previous: str) -> bool:
        """Whether the line opens a part that is not a rule: a `-` separator after a rule
        (document text outside rules from there on, kept for the export), or a plain heading."""
        if _DASHES.match(line) and self.parts and isinstance(self.parts[-1].part, Section):
            part = Heading(line="", label="", depth=0, path="", line_no=index, kind="text")
            self.parts.append(_Open(part, [line.rstrip()]))
            return True
        if previous in ("start", "blank") and self.plain_heading(line, index):
            self.add_heading(line, "", ("plain", 0), index)
            return True
        return False

    # ----- numbering ----------------------------------------------------------------------

    def accept(
        self, found: re.Match[str], standalone: bool, after_rule: bool, line_no: int
    ) -> tuple[str, int] | None:
        """(label, depth) when the numbered line starts a rule; None when it is plain text.

        A line starts a paragraph (`standalone`) after a blank line or a heading; a rule's
        one-line predecessor (`after_rule`) lets short rules follow each other line by line
        when their numbers follow each other exactly."""
        para_start = standalone or after_rule
        num, end, pre = found.group("num"), found.group("end"), (found.group("pre") or "").strip()
        rest = found.group("rest").strip()
        scope = self.scope
        if re.fullmatch(r"[IVXLCDM]+", num):
            value = roman_value(num)
            if value is None:
                return None
            last = scope.last_roman
            if pre:
                ok = True
            elif last is None:
                titled = bool(end) or not rest or _ONE_LINE.match(rest) is not None
                ok = para_start and titled and value <= 40
            else:
                exact = value in (last + 1, 1) and (para_start or bool(end))
                near = para_start and (bool(end) or not rest) and last < value <= last + _MAX_GAP
                ok = exact or near
                if not ok and end:
                    self.note(line_no, found.group(0), "breaks the Roman numbering")
            if not ok:
                return None
            scope.last_roman = value
            self.styles.add("§" if pre else "roman")
            return (f"{pre} {num}" if pre else num), 1
        parts = tuple(int(p) for p in num.split("."))
        parent, last_part = parts[:-1], parts[-1]
        if pre:
            ok = True
        elif len(parts) == 1 and self.top_end is not None and end and end != self.top_end:
            ok = False  # "1)" items inside rules numbered "101.", and the other way round
        elif len(parts) == 1 and (scope.last_top or 0) >= 100 and end and para_start:
            # Nomic's numbers are identifiers: any order, any gap; small ones are list items
            ok = last_part >= 100 and parts not in scope.seen
        elif len(parts) == 1:
            last = scope.last_top
            one_line = not end and _ONE_LINE.match(rest) is not None
            if last is None:
                first = -1 <= last_part <= 1000 if end else last_part in (0, 1)
                ok = (standalone if not end else para_start) and first
            elif end and para_start:
                ok = last <= last_part <= last + _MAX_GAP or last_part in (0, 1)
                ok = ok or (last_part > last and last_part % 100 == 1)  # 117, then 201
            else:
                ok = last_part == last + 1 and (standalone or bool(end) or one_line)
        else:
            known = parent in scope.seen
            previous = scope.children.get(parent, 0)
            if not known:  # "1.1" with no "1." before it: a new group, if it starts at 1
                ok = last_part == 1 and (standalone or (para_start and bool(end)))
            elif end and para_start:
                ok = previous <= last_part <= previous + _MAX_GAP
            else:  # dotted numbers that follow exactly may run line by line
                ok = last_part == previous + 1 and (para_start or bool(end))
        if not ok:
            if end or para_start:
                self.note(line_no, found.group(0), "does not continue the numbering")
            return None
        scope.seen.add(parts)
        if parent:
            scope.children[parent] = max(scope.children.get(parent, 0), last_part)
        else:
            scope.last_top = last_part
            if self.top_end is None and end:
                self.top_end = end
        self.styles.add("§" if pre else ("dotted" if parent else "arabic"))
        return (f"{pre} {num}" if pre else num), len(parts)

    def note(self, line_no: int, line: str, why: str) -> None:
        shown = line.strip()
        shown = shown if len(shown) <= 60 else shown[:57] + "…"
        self.notes.append(f"line {line_no}: kept as text ({why}): {shown}")

    # ----- the pass -----------------------------------------------------------------------

    def read(self) -> None:
        lines = self.lines
        self.last_text = max((i for i, x in enumerate(lines) if x.strip()), default=-1)
        index = self.read_title()
        previous = "start"  # start | blank | text | heading | rule
        while index < len(lines):
            line = lines[index]
            line_no = index + 1
            index += 1
            if not line.strip():
                self.owner_lines().append("")
                previous = "blank" if previous != "start" else "start"
                continue
            standalone = previous in ("start", "blank", "heading")
            following = lines[index] if index < len(lines) else ""
            md = _MD_HEADING.match(line)
            if md is not None:
                self.markdown = True
                label, _ = _heading_label(md.group(2))
                keyword = _keyword_heading(md.group(2))
                if keyword is not None:
                    label = keyword[1]
                self.add_heading(line, label, ("md", len(md.group(1))), line_no)
                previous = "heading"
                continue
            under = _UNDERLINE.match(following) if following else None
            if (
                under is not None
                and standalone
                and len(under.group(1)) >= 3
                and _MARKER.match(line) is None
                and _SUB_ITEM.match(line) is None
            ):
                label, _ = _heading_label(line)
                keyword = _keyword_heading(line)
                level = 1 if under.group(1)[0] == "=" else 2
                self.add_heading(
                    line + "\n" + following,
                    keyword[1] if keyword else label,
                    ("md", level),
                    line_no,
                )
                index += 1
                previous = "heading"
                continue
            keyword = _keyword_heading(line)
            if keyword is not None and standalone:
                self.add_heading(line, keyword[1], ("kw", keyword[0]), line_no)
                previous = "heading"
                continue
            found = _MARKER.match(line)
            more = index <= self.last_text
            if standalone and more and _is_caps_heading(line):
                label = ""
                if found is not None and not found.group("bullet") and not found.group("pre"):
                    label = found.group("num")
                if found is None or label:
                    self.add_heading(line, label, ("caps", 0), line_no)
                    previous = "heading"
                    continue
            if self.opens_part(line, index, previous):
                previous = "heading"
                continue
            if self.numbered and found is not None:
                accepted = self.accept(found, standalone, previous == "rule", line_no)
                if accepted is not None:
                    label, depth = accepted
                    marker = found.group("marker").strip()
                    self.add_section(marker, label, depth, line_no, found.group("rest").strip())
                    previous = "rule"
                    continue
            if not self.numbered and standalone and _SUB_ITEM.match(line) is None:
                self.unnumbered += 1
                self.add_section("", "", 1, line_no, line.rstrip())
                previous = "text"
                continue
            self.owner_lines().append(line.rstrip())
            previous = "text"

    def plain_heading(self, line: str, index: int) -> bool:
        """A short line standing alone, without closing punctuation, before a numbered rule
        ("Regole Mutabili") or, in a document without numbers, before a paragraph."""
        text = line.strip()
        if self.parts and isinstance(self.parts[-1].part, Heading):
            return False  # the text under a heading, before its first rule
        if len(text) > 60 or text[-1] in ".;:,!?)" or _MARKER.match(line) or _SUB_ITEM.match(line):
            return False
        if index >= len(self.lines) or self.lines[index].strip():
            return False
        following = next((x for x in self.lines[index:] if x.strip()), None)
        if following is None:
            return False
        return not self.numbered or _MARKER.match(following) is not None

    def read_title(self) -> int:
        """The first line is the title when it stands alone and reads like one; returns where
        the body starts."""
        lines = self.lines
        first = next((i for i, line in enumerate(lines) if line.strip()), None)
        if first is None:
            return len(lines)
        line = lines[first]
        after = lines[first + 1] if first + 1 < len(lines) else ""
        md = _MD_HEADING.match(line)
        if md is not None:
            level = len(md.group(1))
            same = [
                x for x in lines[first + 1 :] if (m := _MD_HEADING.match(x)) and len(m[1]) == level
            ]
            if not same:
                self.title = line
                self.markdown = True
                return first + 1
            return first
        under = _UNDERLINE.match(after) if after else None
        if under is not None and under.group(1)[0] == "=" and len(under.group(1)) >= 3:
            others = [x for x in lines[first + 2 :] if re.fullmatch(r"\s*=+\s*", x)]
            if not others:
                self.title = line + "\n" + after
                return first + 2
            return first
        if _MARKER.match(line) or _SUB_ITEM.match(line) or _keyword_heading(line):
            return first
        if after.strip() == "" and not line.rstrip().endswith(".") and len(line) <= 200:
            self.title = line.rstrip()
            return first + 1
        return first

    def document(self) -> Document:
        parts: list[Part] = []
        for open_part in self.parts:
            text = "\n".join(open_part.lines).strip("\n")
            parts.append(replace(open_part.part, text=text))
        styles = sorted(self.styles) if self.numbered else ["none"]
        if "dotted" in styles and "arabic" in styles:
            styles.remove("arabic")
        return Document(
            title=self.title,
            preamble="\n".join(self.preamble).strip("\n"),
            parts=tuple(parts),
            numbering="+".join(styles) if styles else "none",
            notes=tuple(self.notes),
            format="md" if self.markdown else "txt",
        )


# --- rule headers: rulesets that name each rule by a header line ----------------------------

_RULE_WORDS = (
    "rule",
    "regola",
    "règle",
    "regel",
    "regla",
    "regra",
    "sääntö",
    "правило",
    "pravidlo",
)
_LABEL_TEXT = r"-?(?:\d[0-9A-Za-z]*|[A-Za-z]{1,3}\d[0-9A-Za-z]*)(?:\.\d+)*|[IVXLCDM]+"
# "(Immutable)", "[mutable]", "(immutabile)" beside a rule's number: what a careful person
# retyping the ruleset marks the rule as.
_IMMUTABLE_WORDS = (
    "immutable",
    "immutabile",
    "immuable",
    "unveränderlich",
    "inmutable",
    "imutável",
)
_MUTABLE_WORDS = ("mutable", "mutabile", "muable", "veränderlich", "mutável")
_MUTABILITY = r"[(\[]\s*(?P<mut>" + "|".join((*_IMMUTABLE_WORDS, *_MUTABLE_WORDS)) + r")\s*[)\]]"
_POWER = r"\(\s*(?:power|potere|pouvoir|macht|poder)\s*=\s*(?P<power>-?\d+(?:\.\d+)?)\s*\)"
_WORD_HEADER = re.compile(
    r"^(?P<word>[^\W\d_]+)\s+(?P<label>" + _LABEL_TEXT + r")(?:/(?P<rev>\d+))?"
    r"\s*(?:" + _POWER + r")?\s*(?:" + _MUTABILITY + r")?"
    r"\s*(?:(?P<sep>[:.—–-])\s*(?P<rest>.*)|(?P<bare>))$",
    re.I,
)
# A Markdown heading that is a rule's number and title: `## 101. Title`, `### 101) Title`.
_NUMBERED_HEADING = re.compile(
    r"^(?P<label>" + _LABEL_TEXT + r")(?P<end>[.):])(?:\s+(?P<title>.*))?$|^(?P<alone>\d+)$"
    r"|^(?P<dotted>\d+(?:\.\d+)+)(?:\s+(?P<dtitle>.*))?$"  # `### 101.1` and `### 101.1 Title`
)
_BOLD_HEADER = re.compile(
    r"^(?P<open>\*\*|__)(?P<label>" + _LABEL_TEXT + r")(?P<end>[.):]?)(?P=open)"
    r"(?:\s+(?P<rest>.*))?$"
)
_ATX = re.compile(r"^\s{0,3}(?P<hashes>#{1,6})\s+(?P<text>.*?)(?:\s+#+)?\s*$")
_SEPARATOR = re.compile(r"^\s*(?:([-=~_*#+])(?:\s*\1){2,}|(?:-\s*){3,})\s*$")
_BULLET_LINE = re.compile(r"^\s*(?:[-*+•·▪◦‣]\s|\[|\d+[.)]\s)")
_TRAILER = re.compile(
    r"^\s{0,3}(?:history|annotations?|historical notes?|amendment history|cfjs|storia"
    r"|annotazioni|cronologia|historique|historia|geschichte|historia de cambios)\s*:",
    re.I,
)


@dataclass(frozen=True)
class _Header:
    """A rule's header line: its label, revision, power and title, and how it was written."""

    index: int  # the line's index
    kind: str  # "word" (Rule N ...) or "bold" (**N.**)
    label: str
    revision: str
    power: str
    title: str  # the title on the header line, if any
    rest: str  # text on the header line that is the rule's first line, if any
    level: int  # the Markdown heading level, 0 when not a heading
    indent: int
    mutability: str = ""  # "immutable" / "mutable" when the header says so


def _strip_emphasis(text: str) -> str:
    return re.sub(r"(\*\*|__)", "", text).strip()


def _header(line: str, index: int) -> _Header | None:
    """The rule header a line is, if it is one: `Rule 2327/3 (Power=1)`, `### Rule 4E83: Title`,
    `**101.** text`, `**101** *Title*`, `Rule -216.`"""
    indent = len(line) - len(line.lstrip())
    if indent > 3 or not line.strip():
        return None
    body, level = line.strip(), 0
    atx = _ATX.match(line)
    if atx is not None:
        body, level = atx.group("text").strip(), len(atx.group("hashes"))
        numbered = _NUMBERED_HEADING.match(_strip_emphasis(body))
        if numbered is not None:
            label = numbered.group("label") or numbered.group("alone") or numbered.group("dotted")
            if not _real_label(label):
                return None
            title = (numbered.group("title") or numbered.group("dtitle") or "").strip()
            return _Header(index, "heading", label, "", "", title, "", level, indent)
    if _BULLET_LINE.match(body) and not body.startswith(("**", "__")):
        return None
    bold = _BOLD_HEADER.match(body)
    if bold is not None:
        label = bold.group("label")
        if not _real_label(label):
            return None
        rest = (bold.group("rest") or "").strip()
        title = ""
        italic = re.fullmatch(r"([*_])(?P<t>[^*_].*?)\1", rest)
        if italic is not None:
            title, rest = italic.group("t").strip(), ""
        elif level:
            title, rest = rest, ""
        return _Header(index, "bold", label, "", "", title, rest, level, indent)
    wrapped = body.startswith(("**", "__"))
    found = _WORD_HEADER.match(_strip_emphasis(body))
    if found is None or found.group("word").casefold() not in _RULE_WORDS:
        return None
    label = found.group("label")
    if not _real_label(label):
        return None
    rest = (found.group("rest") or "").strip()
    title = ""
    if rest and (level or wrapped or (len(rest) <= 80 and rest[-1] not in ".;,:")):
        title, rest = rest, ""
    elif found.group("sep") == "-" and not rest:
        return None
    mut = (found.group("mut") or "").casefold()
    return _Header(
        index,
        "word",
        label,
        found.group("rev") or "",
        found.group("power") or "",
        title,
        rest,
        level,
        indent,
        "immutable" if mut in _IMMUTABLE_WORDS else "mutable" if mut else "",
    )


def _real_label(label: str) -> bool:
    if re.fullmatch(r"[IVXLCDM]+", label):
        return roman_value(label) is not None
    return any(c.isdigit() for c in label)


def _headers(lines: Sequence[str]) -> list[_Header]:
    """The lines that head a rule, of the kind the document uses most; a table of contents
    (headers with nothing under them whose labels come again later) is left out."""
    found = [h for i, line in enumerate(lines) if (h := _header(line, i)) is not None]
    if not found:
        return []
    kinds = Counter(h.kind for h in found)
    kind = max(kinds, key=lambda k: (kinds[k], k == "word"))
    chosen = [h for h in found if h.kind == kind]
    levels = Counter(h.level for h in chosen)
    level = max(levels, key=lambda k: levels[k])
    if kind == "heading":  # `## 1. Games` over `### 101. Title`: a section, not a rule
        if len(levels) > 1:
            level = _rule_level(lines, chosen)
        chosen = [h for h in chosen if h.level == level]
        if _chapters(lines, chosen):
            return []
    chosen = [h for h in chosen if h.level == level or (level and h.level and h.level <= level)]
    out = []
    for position, head in enumerate(chosen):
        end = chosen[position + 1].index if position + 1 < len(chosen) else len(lines)
        empty = not any(x.strip() for x in lines[head.index + 1 : end])
        again = any(h.label == head.label for h in chosen[position + 1 :])
        if empty and again:
            continue  # a table of contents
        out.append(head)
    return out


def _carries_text(lines: Sequence[str], head: _Header) -> bool:
    """Whether a numbered heading has text of its own before the next heading."""
    for line in lines[head.index + 1 :]:
        if _ATX.match(line):
            return False
        if line.strip():
            return True
    return False


def _rule_level(lines: Sequence[str], heads: Sequence[_Header]) -> int:
    """Of numbered headings at two levels, the level whose headings are the rules, as a person
    retyping the ruleset would take it: the level that carries the rules' texts. Parts over
    rules (`## 1. Part` with little or no text, then `### 101. Rule`) give the lower level;
    rules with sub-rules (`## 101.` over `### 101.1`, or sub-headings numbered afresh under
    each rule) give the upper one, when it has text of its own; the sub-rules stay inside."""
    levels = sorted({h.level for h in heads})
    upper, lower = levels[0], levels[1]
    ups = [h for h in heads if h.level == upper]
    downs = [h for h in heads if h.level == lower]
    upper_text = sum(_carries_text(lines, h) for h in ups) * 2 > len(ups)
    if not upper_text:
        return lower
    parent: dict[int, str] = {}  # each lower heading -> the label of the upper one above it
    current = ""
    for head in heads:
        if head.level == upper:
            current = head.label
        elif head.level == lower:
            parent[head.index] = current
    extends = sum(1 for h in downs if h.label.startswith(parent[h.index] + ".") and parent[h.index])
    lower_labels = [h.label for h in downs]
    restarts = len(set(lower_labels)) < len(lower_labels)
    upper_distinct = len({h.label for h in ups}) == len(ups)
    if extends * 2 > len(downs) or (restarts and upper_distinct):
        return upper
    return lower


def _chapters(lines: Sequence[str], heads: Sequence[_Header]) -> bool:
    """Numbered Markdown headings are chapters, not rules, when most of them open on a
    numbered clause (`## 1. Membership` then `1. Anyone may join.`, `1.1 ...`): the clauses
    are the rules. A rule whose text has a list opens on its prose."""
    chapters = 0
    for position, head in enumerate(heads):
        end = heads[position + 1].index if position + 1 < len(heads) else len(lines)
        first = next((x for x in lines[head.index + 1 : end] if x.strip()), "")
        found = _MARKER.match(first)
        if found is not None and not found.group("bullet"):
            chapters += 1
    return chapters * 2 > len(heads)


def _plain_heading(line: str) -> bool:
    """A short line of its own that names a part of the document ("Immutable Rules",
    "VOTING"), not a sentence nor a label for what follows ("Table of Contents:")."""
    text = line.strip()
    if not text or len(text) > 60 or line[:1].isspace() or text[-1] in ".;:,":
        return False
    if _SEPARATOR.match(line) or _BULLET_LINE.match(line) or _TRAILER.match(line):
        return False
    return text[0].isupper() or text[0].isdigit()


@dataclass
class _Block:
    """A part being read by `_HeaderReader`, with its lines so far."""

    part: Part
    lines: list[str] = field(default_factory=list)
    header: _Header | None = None
    marker: list[str] = field(default_factory=list)
    trailer: int = -1  # where the History / Annotations block starts in `lines`


class _HeaderReader:
    """Rules found by their headers: everything from one header to the next rule header, the
    next heading or a separator line is that rule (its lists included); its History and
    Annotations blocks are kept as the rule's history; text outside rules is document text."""

    def __init__(self, lines: Sequence[str], headers: Sequence[_Header]) -> None:
        self.lines = lines
        self.headers = {h.index: h for h in headers}
        self.level = headers[0].level if headers else 0
        self.blocks: list[_Block] = []
        self.paths: set[str] = set()
        self.stack: list[Heading] = []
        self.markdown = any(h.level for h in headers)
        named = [h.label for h in headers]
        self.nested = len(set(named)) < len(named)  # numbered afresh under each heading
        self.title = ""
        self.preamble: list[str] = []

    def unique(self, path: str) -> str:
        candidate, count = path, 1
        while candidate in self.paths:
            count += 1
            candidate = f"{path}#{count}"
        self.paths.add(candidate)
        return candidate

    def heading_size(self, index: int, after_separator: bool) -> int:
        """How many lines the heading at `index` takes (0: it is not a heading)."""
        line = self.lines[index]
        atx = _ATX.match(line)
        if atx is not None:
            if self.level and len(atx.group("hashes")) > self.level:
                return 0  # a heading inside a rule that is itself a heading
            self.markdown = True
            return 1
        previous = self.lines[index - 1] if index else ""
        following = self.lines[index + 1] if index + 1 < len(self.lines) else ""
        standalone = not previous.strip() or bool(_SEPARATOR.match(previous))
        if not standalone or not _plain_heading(line):
            return 0
        if after_separator:
            return 1  # a title between separator lines
        if re.fullmatch(r"\s*(=+|-+)\s*", following) and len(following.strip()) >= 3:
            return 2  # an underlined heading
        if following.strip():
            return 0
        nxt = next((i for i in range(index + 1, len(self.lines)) if self.lines[i].strip()), None)
        if nxt is None:
            return 0
        return 1 if nxt in self.headers else 0

    def owner(self) -> list[str]:
        return self.blocks[-1].lines if self.blocks else self.preamble

    def read(self) -> None:
        lines = self.lines
        index = self.read_title()
        in_rule = False
        after_separator = False
        while index < len(lines):
            line = lines[index]
            head = self.headers.get(index)
            if head is not None:
                index = self.open_rule(head)
                in_rule, after_separator = True, False
                continue
            if not line.strip():
                self.owner().append("")
                index += 1
                continue
            if _SEPARATOR.match(line):
                last = self.blocks[-1].part if self.blocks else None
                if in_rule or not isinstance(last, Heading) or last.kind != "text":
                    self.open_text(index)
                self.owner().append(line.rstrip())
                in_rule, after_separator = False, True
                index += 1
                continue
            size = self.heading_size(index, after_separator)
            if size:
                self.open_heading(index, size)
                in_rule, after_separator = False, False
                index += size
                continue
            block = self.blocks[-1] if self.blocks else None
            if in_rule and block is not None and block.trailer < 0 and _TRAILER.match(line):
                block.trailer = len(block.lines)
            self.owner().append(line.rstrip())
            after_separator = False
            index += 1

    def read_title(self) -> int:
        first = next((i for i, line in enumerate(self.lines) if line.strip()), None)
        if first is None or first in self.headers:
            return 0 if first is None else first
        line = self.lines[first]
        atx = _ATX.match(line)
        if atx is not None:
            level = len(atx.group("hashes"))
            same = [x for x in self.lines if (m := _ATX.match(x)) and len(m[1]) == level]
            if len(same) == 1:
                self.title = line.rstrip()
                self.markdown = True
                return first + 1
            return first
        after = self.lines[first + 1] if first + 1 < len(self.lines) else ""
        if re.fullmatch(r"\s*=+\s*", after) and len(after.strip()) >= 3:
            self.title = line.rstrip() + "\n" + after.rstrip()
            return first + 2
        if not after.strip() and _plain_heading(line):
            self.title = line.rstrip()
            return first + 1
        return first

    def open_text(self, index: int) -> None:
        part = Heading(line="", label="", depth=0, path="", line_no=index + 1, kind="text")
        self.blocks.append(_Block(part))

    def open_heading(self, index: int, size: int) -> None:
        line = "\n".join(x.rstrip() for x in self.lines[index : index + size])
        atx = _ATX.match(self.lines[index])
        depth = len(atx.group("hashes")) if atx is not None else (2 if "-" in line[-3:] else 1)
        text = atx.group("text") if atx is not None else self.lines[index].strip()
        self.stack = [h for h in self.stack if h.depth < depth]
        label, _ = _heading_label(text)
        component = label or text[:40]
        path = self.unique("/".join([*(h.path.rsplit("/", 1)[-1] for h in self.stack), component]))
        heading = Heading(line=line, label=label, depth=depth, path=path, line_no=index + 1)
        self.stack.append(heading)
        self.blocks.append(_Block(heading))

    def open_rule(self, head: _Header) -> int:
        """Start the rule a header heads; returns the index of its first line of text."""
        lines = self.lines
        written = lines[head.index].rstrip()
        if head.rest and written.endswith(head.rest):
            written = written[: -len(head.rest)].rstrip()  # `**101.**`, its text after it
        marker = [written]
        index = head.index + 1
        title = head.title
        following = lines[index] if index < len(lines) else ""
        if re.fullmatch(r"\s*(=+|-+)\s*", following) and len(following.strip()) >= 3:
            marker.append(following.rstrip())  # an underlined header
            index += 1
        elif not title and not head.rest and following.strip():
            after = lines[index + 1] if index + 1 < len(lines) else ""
            text = following.strip()
            if (
                len(text) <= 100
                and text[-1] not in ".;,:"
                and index + 1 not in self.headers
                and (not after.strip() or _indent(after) > _indent(following))
                and not _SEPARATOR.match(following)
                and not _BULLET_LINE.match(following)
            ):
                title = text  # the rule's title on the line under its header
                marker.append(following.rstrip())
                index += 1
        # rules numbered afresh under each heading are told apart by it: `1/2`, `2/1`
        under = self.stack[-1].path if self.nested and self.stack else ""
        path = self.unique(f"{under}/{head.label}" if under else head.label)
        depth = len(self.stack) + 1
        section = Section(
            marker="\n".join(marker) + ("" if head.rest else "\n"),
            label=head.label,
            path=path,
            depth=depth,
            line_no=head.index + 1,
            title=title,
            revision=head.revision,
            power=head.power,
            mutability=head.mutability,
        )
        block = _Block(section, [head.rest] if head.rest else [], head, marker)
        self.blocks.append(block)
        return index

    def document(self) -> Document:
        parts: list[Part] = []
        for block in self.blocks:
            if isinstance(block.part, Section):
                body = block.lines if block.trailer < 0 else block.lines[: block.trailer]
                trailer = [] if block.trailer < 0 else block.lines[block.trailer :]
                first = (
                    body[:1] if block.part.marker and not block.part.marker.endswith("\n") else []
                )
                rest = textwrap.dedent("\n".join(body[len(first) :]))
                text = "\n".join([*first, rest]) if first else rest
                parts.append(
                    replace(
                        block.part,
                        text=text.strip("\n"),
                        history="\n".join(trailer).strip("\n"),
                    )
                )
            else:
                parts.append(replace(block.part, text="\n".join(block.lines).strip("\n")))
        return Document(
            title=self.title,
            preamble="\n".join(self.preamble).strip("\n"),
            parts=tuple(parts),
            numbering="headers",
            format="md" if self.markdown else "txt",
            headers=True,
        )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def read_document(text: str) -> Document:
    """The document's title, preamble, headings and rules, every character kept."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    headers = _headers(lines)
    if len(headers) >= 2:
        by_headers = _HeaderReader(lines, headers)
        by_headers.read()
        return by_headers.document()
    reader = _Reader(lines, numbered=True)
    reader.read()
    if not any(isinstance(p.part, Section) for p in reader.parts):
        reader = _Reader(lines, numbered=False)  # no numbers at all: one rule per paragraph
        reader.read()
    return reader.document()


# --- the document's language ---------------------------------------------------------------

# The commonest short words of each language the referee speaks: words of one, rare in the other.
_STOPWORDS = {
    "it": frozenset(
        re.findall(
            r"\S+",
            "il lo la le gli di che è e per una un del della delle dei degli non con sono nel "
            "nella alla al ai ogni chi si ha dal dalla più può deve essere quando come",
        )
    ),
    "en": frozenset(
        re.findall(
            r"\S+",
            "the of and to is in that be by or for each any must may which with are not it an "
            "as has who when can this shall than",
        )
    ),
}
_MIN_WORDS = 12  # fewer words of either language than this: say nothing
_SHARE = 0.08  # and they are at least this share of all words (a quarter, in plain prose)


def detect_language(text: str) -> str:
    """ "it" or "en" when the document is plainly written in it (its commonest short words are
    that language's, a good share of all its words and several times the other's), else ""
    (another language, or too little text to tell)."""
    words = Counter(re.findall(r"[^\W\d_]+", text.casefold()))
    counts = {lang: sum(words[w] for w in common) for lang, common in _STOPWORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    others = max(v for lang, v in counts.items() if lang != best)
    total = sum(words.values())
    if counts[best] >= max(_MIN_WORDS, _SHARE * total) and counts[best] >= 3 * others:
        return best
    return ""


# --- what becomes of each rule in the game --------------------------------------------------


@dataclass(frozen=True)
class Numbered:
    """A section with the number it takes in the game (109) and its file name."""

    number: int
    section: Section

    @property
    def file_name(self) -> str:
        return f"{self.number:03d}.md"


def game_numbers(doc: Document) -> tuple[Numbered, ...]:
    """Each rule's number in the game.

    When every rule's label is a distinct whole number (`101.`, `1.`, `§ 7`, `Rule 2327`), in
    any order and with any gaps, that number is the rule's. In a ruleset whose rules have
    headers (`Rule 4E83`, `Rule -216`), a rule labelled by a distinct whole number keeps it and
    the others take numbers from the first hundred above every number a label uses. Otherwise
    (dotted, Roman, repeating or missing labels) the rules are numbered in document order from
    that hundred (101 for most documents), so a rule's number is never another rule's label.
    """
    sections = doc.sections
    plain = [re.fullmatch(r"(?:§\s*)?(\d+)", s.label) for s in sections]
    values = [int(m.group(1)) if m is not None else None for m in plain]
    whole = [v for v in values if v is not None]
    used = [abs(int(n)) for s in sections for n in re.findall(r"\d+", s.label)]
    base = (max(used, default=0) // 100 + 1) * 100 + 1
    distinct = len(set(whole)) == len(whole) and all(v > 0 for v in whole)
    if sections and len(whole) == len(sections) and distinct:
        return tuple(Numbered(v, s) for v, s in zip(whole, sections, strict=True))
    if doc.headers and distinct:
        out, fresh = [], base
        for value, section in zip(values, sections, strict=True):
            if value is None:
                value, fresh = fresh, fresh + 1
            out.append(Numbered(value, section))
        return tuple(out)
    return tuple(Numbered(base + i, s) for i, s in enumerate(sections))


def nomic_style(numbered: Sequence[Numbered]) -> bool:
    """Rules numbered like Nomic's own (101..., 201...): the 100s are immutable (102)."""
    return (
        bool(numbered)
        and all(re.fullmatch(r"\d{3}", n.section.label) for n in numbered)
        and any(n.number < 200 for n in numbered)
        and any(n.number >= 200 for n in numbered)
    )


# --- the folder -----------------------------------------------------------------------------


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL, which JSON leaves as it is,
    is escaped too (TOML forbids it raw)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_array(values: Iterable[str]) -> str:
    items = [toml_string(v) for v in values]
    return "[" + ", ".join(items) + "]"


@dataclass(frozen=True)
class Options:
    """What the document does not say: the language, which rules are immutable (102, 110) and
    which rules carry which game parameters (111, 211). References are labels, paths or
    numbers, resolved when the folder is loaded."""

    language: str = ""
    immutable: tuple[str, ...] = ()
    carry: tuple[tuple[str, str], ...] = ()  # (parameter, rule reference)
    # values the rules' texts state for parameters: (parameter, value, rule, sentence)
    candidates: tuple[tuple[str, int | str, str, str], ...] = ()
    dismissed: tuple[str, ...] = ()  # parameters whose candidates the group set aside


def immutable_under(doc: Document, heading: str) -> list[str]:
    """The paths of the rules under the heading named `heading` (its text or its path, case
    and punctuation aside), down to the next heading of its depth or above."""
    wanted = _heading_key(heading)
    out: list[str] = []
    inside: int | None = None
    for part in doc.parts:
        if isinstance(part, Heading) and part.kind == "heading":
            if inside is not None and part.depth <= inside:
                inside = None
            if inside is None and wanted in (_heading_key(part.line), _heading_key(part.path)):
                inside = part.depth
        elif isinstance(part, Section) and inside is not None:
            out.append(part.path)
    return out


def _heading_key(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return " ".join(re.sub(r"[^\w\s/]", " ", first).casefold().split())


def immutable_by_power(doc: Document, power: float) -> list[str]:
    """The paths of the rules whose header gives them `power` or more (`Rule 101/4 (Power=4)`)."""
    return [s.path for s in doc.sections if s.power and float(s.power) >= power]


def folder_files(doc: Document, options: Options, source: str) -> dict[str, str]:
    """The ruleset folder's files by name: `ruleset.toml` and one `NNN.md` per rule."""
    numbered = game_numbers(doc)
    out = _index_lines(doc, options, source, numbered) + _heading_lines(doc, numbered)
    files = {"ruleset.toml": "\n".join(out) + "\n"}
    for position, n in enumerate(numbered, start=1):
        files[n.file_name] = _rule_file(n, position)
    return files


def _index_lines(
    doc: Document, options: Options, source: str, numbered: Sequence[Numbered]
) -> list[str]:
    """ruleset.toml up to its headings: the document's metadata and the group's options."""
    immutable = list(options.immutable)
    said = [s for s in doc.sections if s.mutability]  # `Rule 101 (Immutable)`
    immutable += [s.path for s in said if s.mutability == "immutable" and s.path not in immutable]
    if not immutable and not said and nomic_style(numbered):
        immutable = [str(n.number) for n in numbered if n.number < 200]
    name = doc.title.splitlines()[0].strip().strip("#").strip().rstrip(":") if doc.title else ""
    out = [
        "# A ruleset imported by `nomic-referee import`: review it, edit it, then `init`.",
        "# Each NNN.md is one rule; its text is exactly the document's. The options below",
        "# are read at init (rules 102, 110, 111, 211).",
        f"name = {toml_string(name or Path(source).stem)}",
        f"language = {toml_string(options.language)}",
        f"source = {toml_string(Path(source).name)}",
        f"format = {toml_string(doc.format)}",
        f"numbering = {toml_string(doc.numbering)}",
        f"title = {toml_string(doc.title)}",
        f"preamble = {toml_string(doc.preamble)}",
        "",
        "# Rules listed here are immutable (by label, path or number); the rest are mutable.",
        f"immutable = {_toml_array(immutable)}",
        "",
        "# Parameters whose values below (under [[candidates]]) the group sets aside: the house",
        "# value holds even though a rule states another. A candidate whose sentence sets its",
        "# value plainly is carried by its rule unless its parameter is carried ([carry]) or",
        "# listed here; the others stay prose. init --strict refuses while any is neither.",
        f"dismissed = {_toml_array(options.dismissed)}",
        "",
        '# Game parameters carried by rules: name = "rule" (the value is the house value',
        "# in the config's [parameters], else the default),",
        '# or name = { rule = "§ 4.6", value = 60 }.',
        "# A parameter no rule carries keeps its house value; a proposal can give it to a rule",
        "# with a SET line.",
        "[carry]",
    ]
    for name_, ref in options.carry:
        stated = [c for c in options.candidates if c[0] == name_ and c[2] == ref]
        if stated:
            out.append(f"{name_} = {{ rule = {toml_string(ref)}, value = {stated[0][1]} }}")
        else:
            out.append(f"{name_} = {toml_string(ref)}")
    for parameter, value, rule, sentence in options.candidates:
        out += [
            "",
            "[[candidates]]",
            f"parameter = {toml_string(parameter)}",
            f"value = {value if isinstance(value, int) else toml_string(value)}",
            f"rule = {toml_string(rule)}",
            f"sentence = {toml_string(sentence)}",
        ]
    return out


def _heading_lines(doc: Document, numbered: Sequence[Numbered]) -> list[str]:
    """ruleset.toml's `[[headings]]`: every heading and passage, with the rule it precedes."""
    before: dict[int, int] = {}  # heading index -> number of the rule after it
    order = {id(n.section): n.number for n in numbered}
    pending: list[int] = []
    for index, part in enumerate(doc.parts):
        if isinstance(part, Heading):
            pending.append(index)
        else:
            for h in pending:
                before[h] = order[id(part)]
            pending = []
    out: list[str] = []
    for index, part in enumerate(doc.parts):
        if not isinstance(part, Heading):
            continue
        out += ["", "[[headings]]"]
        if part.kind != "heading":
            out.append(f"kind = {toml_string(part.kind)}")
        out += [
            f"line = {toml_string(part.line)}",
            f"label = {toml_string(part.label)}",
            f"path = {toml_string(part.path)}",
            f"depth = {part.depth}",
            f"text = {toml_string(part.text)}",
        ]
        if index in before:
            out.append(f"before = {before[index]}")
    return out


def _rule_file(n: Numbered, position: int) -> str:
    """A rule's `NNN.md`: its front matter, then its text exactly as the document's."""
    s = n.section
    front = [
        "+++",
        f"number = {n.number}",
        f"label = {toml_string(s.label)}",
        f"path = {toml_string(s.path)}",
        f"marker = {toml_string(s.marker)}",
        f"position = {position}",
    ]
    for key in ("title", "revision", "power", "history"):
        if getattr(s, key):
            front.append(f"{key} = {toml_string(getattr(s, key))}")
    front.append("+++")
    return "\n".join(front) + "\n" + s.text + "\n"


def write_folder(doc: Document, options: Options, source: str, folder: Path) -> list[Path]:
    """Write the folder; refuses to mix with rule files already there."""
    files = folder_files(doc, options, source)
    folder.mkdir(parents=True, exist_ok=True)
    stale = sorted(p.name for p in folder.glob("*.md")) + (
        ["ruleset.toml"] if (folder / "ruleset.toml").exists() else []
    )
    if stale:
        raise FileExistsError(f"{folder} already holds a ruleset ({', '.join(stale[:3])} ...)")
    written = []
    for name, content in files.items():
        path = folder / name
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


_LIST_ITEM = re.compile(r"^\s*(?:\(?[0-9]{1,3}[.)]|\(?[a-zA-Z][.)]|\([ivx]+\)|[-*+•·▪◦‣–])\s")
SHOWN_RULES = 8  # the rules the summary lists by name


def warnings(doc: Document) -> list[str]:
    """What makes the result look wrong: no rule, rules shorter than a line, numbering that
    restarts at every paragraph, labels used twice."""
    sections = doc.sections
    if not sections:
        return ["no rule found: nothing in the document looks like a rule"]
    out = []
    short = [s for s in sections if len(" ".join(s.text.split())) < 40]
    if len(sections) >= 4 and len(short) * 2 > len(sections):
        out.append(
            f"{len(short)} of {counted(len(sections), 'rule')} are shorter than a line: "
            "are list items or headings being read as rules?"
        )
    labels_ = [s.label for s in sections if s.label]
    firsts = sum(1 for label in labels_ if re.fullmatch(r"(?:§\s*)?[1Ia]", label))
    # a club's rules numbered afresh under each heading of their own are told apart by path
    places = [(s.path.rpartition("/")[0], s.label) for s in sections if s.label]
    if places and all(places.count(place) == 1 for place in places) and "/" in sections[0].path:
        return out
    if firsts >= 3 and firsts * 4 >= len(sections):
        out.append(
            f"the numbering restarts {firsts} times (a rule labelled 1 {firsts} times): "
            "are numbered lists being read as rules?"
        )
    twice = sorted({label for label in labels_ if labels_.count(label) > 1})
    if twice:
        shown = ", ".join(twice[:10]) + (" …" if len(twice) > 10 else "")
        out.append(f"labels used by several rules (name them by path or number): {shown}")
    if doc.numbering == "none":
        out.append("no rule numbers found: each paragraph was taken as one rule")
    return out


def language_line(language: str, given: bool) -> str:
    """What the summary says of the ruleset's language: the game's mail and site speak it
    unless the config's [game] language says otherwise."""
    if given:
        return f"language: {language} (--language)"
    if language:
        return f"language: {language}, from the document's words (--language to choose another)"
    return (
        "language: not found (neither Italian nor English): the game speaks [game] language; "
        "--language to record the document's"
    )


def summary(doc: Document) -> list[str]:
    """What the reader found, for the person who will review the folder."""
    numbered = game_numbers(doc)
    sections = doc.sections
    lists = sum(1 for s in sections if any(_LIST_ITEM.match(x) for x in s.text.splitlines()))
    outside = sum(len(p.text) for p in doc.passages) + len(doc.preamble)
    outside += sum(len(h.text) for h in doc.headings)
    history = sum(1 for s in sections if s.history)
    how = "their headers" if doc.headers else f"their numbers ({doc.numbering})"
    lines = [
        f"title: {doc.title.splitlines()[0] if doc.title else '(none)'}",
        f"found {counted(len(sections), 'rule')} by {how}, "
        f"{counted(len(doc.headings), 'heading')}; "
        f"{counted(lists, 'rule')} with a list kept inside; "
        f"{outside} characters of text outside rules "
        f"(preamble, headings' text, {counted(len(doc.passages), 'passage')})"
        + (f"; {counted(history, 'rule')} with a history or annotations" if history else ""),
    ]
    for n in numbered[:SHOWN_RULES]:
        section = n.section
        first = section.title or next((x.strip() for x in section.text.splitlines() if x), "")
        first = first if len(first) <= 50 else first[:47] + "…"
        label = section.label or "(unnumbered)"
        extra = "".join(
            f", {key} {getattr(section, key)}"
            for key in ("revision", "power")
            if getattr(section, key)
        ) + (f", {section.mutability}" if section.mutability else "")
        lines.append(f"  rule {label}{extra}: {first}  [number {n.number}, path {section.path}]")
    if len(numbered) > SHOWN_RULES:
        last = numbered[-1].section
        more = counted(len(numbered) - SHOWN_RULES, "more rule")
        lines.append(f"  … {more}, the last {last.label or last.path}")
    lines += [f"warning: {w}" for w in warnings(doc)]
    lines += doc.notes
    return lines
