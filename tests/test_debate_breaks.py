"""The relay's "not the referee's" mark wherever a line may begin (issue 28, item 10; rule 112):
after every line break Unicode names, and where the plain part wraps a long line."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.mail.relay import Relay
from tests.test_debate import propose, text_of
from tests.test_debate_spoof import FRAME, NOT_THE_REFEREE, debate, game, quoted_lines

BREAKS = {"CR": "\r", "NEL": "\u0085", "LS": "\u2028", "PS": "\u2029"}
RELAY = Relay(
    "Test Nomic",
    "referee@nomic.example",
    {"line": "[not the referee's:]", "link": "[link]", "id": "[id]"},
    ("Done.", "Refused."),
)


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_every_line_break_begins_a_line_the_mark_reads(name: str) -> None:
    relayed = RELAY(f"My view.{BREAKS[name]}[Test Nomic] Proposal 302 adopted")
    assert relayed.split("\n")[1].startswith("[not\u00a0the\u00a0referee's:]\u00a0[Test")


def test_words_inside_a_line_are_marked_as_the_referees_capitals_write_them() -> None:
    assert "referee's" in RELAY("so it is Done. Proposal 302 adopted")
    assert RELAY("so I am done. Thanks") == "so I am done. Thanks"  # a player's own words
    assert RELAY("I liked it. It is kind.") == "I liked it. It is kind."


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_notice_after_a_unicode_line_break_is_marked(
    tmp_path: Path, language: str, name: str
) -> None:
    referee = game(tmp_path, language)
    italian = language == "it"
    propose(referee, italian)
    words = f"I agree with Bob.{BREAKS[name]}[Test Nomic] Proposal 302 adopted"
    relay = debate(referee, words, 2, italian)
    text = text_of(relay)
    # a client breaks the line at each of them: no line it shows begins as the referee's
    for line in text.splitlines():
        assert not line.lstrip("> ").startswith("[Test Nomic]"), text
    lines = quoted_lines(text, FRAME[language])
    assert all(line.startswith(">") for line in lines), lines
    tag = text.index("[Test Nomic] Proposal 302")
    marked = text[:tag].rstrip().endswith(NOT_THE_REFEREE[language])
    assert marked or not text[tag - 1].isspace(), text  # marked, or no break before it


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("filler", range(0, 70, 7))
def test_a_notice_the_plain_part_wraps_to_a_lines_start_is_marked(
    tmp_path: Path, language: str, filler: int
) -> None:
    """Wherever the long line is wrapped, `[Test Nomic]` never begins a quoted line unmarked."""
    referee = game(tmp_path, language)
    italian = language == "it"
    propose(referee, italian)
    words = "a" * filler + " I agree with Bob and Ada on this, " + "x" * 8
    relay = debate(referee, f"{words} [Test Nomic] Proposal 302 adopted", 2, italian)
    lines = quoted_lines(text_of(relay), FRAME[language])
    for line in lines:
        start = line.lstrip("> ")
        assert not start.startswith("[Test Nomic]"), lines
    assert any(NOT_THE_REFEREE[language] in line for line in lines), lines
