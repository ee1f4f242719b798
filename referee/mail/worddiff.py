"""A word-level diff of two texts, for the mail that circulates a change (rules 107, 112, 105).

A proposal to amend a rule, a revision of a proposal and an amendment to an amendment each
show the players what the change does to the words: `word_diff(old, new)` splits both texts
into words, spaces and punctuation and lets `difflib` find the longest common runs. Runs of
changed words are joined across the single spaces between them, so a reader sees
`[-the old words-]{+new ones+}` rather than a change per word. The HTML and plain renderings
live in `referee.mail.markup`; this module only decides what changed.
"""

from __future__ import annotations

import difflib
import enum
import re
from dataclasses import dataclass

_WORDS = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)
# Above this many word pairs (about 3,000 words rewritten on each side) the changed middle is
# shown as one deletion and one insertion: a hostile proposal cannot make circulation slow.
MAX_DIFF_CELLS = 9_000_000


class Change(enum.StrEnum):
    SAME = "same"
    DELETED = "deleted"
    INSERTED = "inserted"


@dataclass(frozen=True)
class Piece:
    change: Change
    text: str


@dataclass(frozen=True)
class WordDiff:
    """The new text with the old one's deleted words and the new one's inserted words marked."""

    pieces: tuple[Piece, ...]

    @property
    def changed(self) -> bool:
        return any(p.change is not Change.SAME for p in self.pieces)

    @property
    def deleted(self) -> int:
        return sum(1 for p in self.pieces if p.change is Change.DELETED)

    @property
    def inserted(self) -> int:
        return sum(1 for p in self.pieces if p.change is Change.INSERTED)

    def __str__(self) -> str:
        """The plain-text form, `[-deleted-]{+inserted+}`."""
        marks = {Change.SAME: ("", ""), Change.DELETED: ("[-", "-]"), Change.INSERTED: ("{+", "+}")}
        return "".join(marks[p.change][0] + p.text + marks[p.change][1] for p in self.pieces)


def word_diff(old: str, new: str) -> WordDiff:
    """What turns `old` into `new`, word by word (spaces and punctuation are words too)."""
    a, b = _WORDS.findall(old.strip()), _WORDS.findall(new.strip())
    # The common head and tail first, in linear time: most changes touch a few words of a long
    # text, and `difflib` on a long, repetitive text takes time that grows with its square.
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    raw: list[tuple[Change, str]] = [(Change.SAME, "".join(a[:head]))]
    if len(middle_a) * len(middle_b) > MAX_DIFF_CELLS:  # too much rewritten to diff word by word
        raw += [(Change.DELETED, "".join(middle_a)), (Change.INSERTED, "".join(middle_b))]
    else:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                raw.append((Change.SAME, "".join(middle_a[i1:i2])))
                continue
            if i2 > i1:
                raw.append((Change.DELETED, "".join(middle_a[i1:i2])))
            if j2 > j1:
                raw.append((Change.INSERTED, "".join(middle_b[j1:j2])))
    raw.append((Change.SAME, "".join(a[len(a) - tail :])))
    return WordDiff(tuple(Piece(c, t) for c, t in _join_runs([r for r in raw if r[1]]) if t))


def _join_runs(raw: list[tuple[Change, str]]) -> list[tuple[Change, str]]:
    """Fold a lone space between two changes into both sides, then merge neighbours alike.

    `[-a-] {+b+}`-style noise (one change per word) becomes one deletion and one insertion
    that each read as a phrase.
    """
    folded: list[tuple[Change, str]] = []
    index = 0
    while index < len(raw):
        change, text = raw[index]
        between = 0 < index < len(raw) - 1
        if (
            change is Change.SAME
            and between
            and text == " "
            and raw[index - 1][0] is not Change.SAME
            and raw[index + 1][0] is not Change.SAME
        ):
            folded.append((Change.DELETED, text))
            folded.append((Change.INSERTED, text))
        else:
            folded.append((change, text))
        index += 1
    # Gather each stretch of changes into one deletion followed by one insertion.
    out: list[tuple[Change, str]] = []
    deleted: list[str] = []
    inserted: list[str] = []

    def flush() -> None:
        if deleted:
            out.append((Change.DELETED, "".join(deleted)))
        if inserted:
            out.append((Change.INSERTED, "".join(inserted)))
        deleted.clear()
        inserted.clear()

    for change, text in folded:
        if change is Change.SAME:
            flush()
            out.append((change, text))
        elif change is Change.DELETED:
            deleted.append(text)
        else:
            inserted.append(text)
    flush()
    return out
