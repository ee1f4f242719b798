"""The word diff of a circulated change (107, 112): always exact, and bounded on hostile texts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from referee.mail.worddiff import MAX_DIFF_CELLS, Change, word_diff

WORDS = st.lists(st.sampled_from(["cake", "the", "King", ",", " ", "\n", "may", "301"]))


def sides(old: str, new: str) -> tuple[str, str]:
    diff = word_diff(old, new)
    before = "".join(p.text for p in diff.pieces if p.change is not Change.INSERTED)
    after = "".join(p.text for p in diff.pieces if p.change is not Change.DELETED)
    return before, after


@given(WORDS, WORDS)
def test_the_diff_gives_back_both_texts(old: list[str], new: list[str]) -> None:
    a, b = "".join(old), "".join(new)
    assert sides(a, b) == (a.strip(), b.strip())


def test_one_word_changed_in_a_long_repetitive_text_is_that_word() -> None:
    """What an attacker's 180 KB revision of "Lorem ipsum" repeated looks like: the head and
    tail are matched first, so only the changed word is diffed."""
    body = "Lorem ipsum dolor sit amet. " * 6500
    diff = word_diff(f"Players may eat cake 1. {body}", f"Players may eat cake 2. {body}")
    changed = [p for p in diff.pieces if p.change is not Change.SAME]
    assert [(p.change, p.text) for p in changed] == [(Change.DELETED, "1"), (Change.INSERTED, "2")]


def test_a_wholly_rewritten_long_text_is_one_deletion_and_one_insertion() -> None:
    words = int(MAX_DIFF_CELLS**0.5) + 10
    old = " ".join(f"a{i}" for i in range(words))
    new = " ".join(f"b{i}" for i in range(words))
    diff = word_diff(old, new)
    assert [p.change for p in diff.pieces] == [Change.DELETED, Change.INSERTED]
    assert sides(old, new) == (old, new)
