"""A block in plain words, its problems in the player's language, and the dry run (issue 26)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from referee.core import interpreter as i
from referee.core import program as p
from referee.core.check import check
from referee.core.describe import describe, dry_run, dry_run_text, problem_text
from referee.notation import read_block
from tests.notation_blocks import CINQUE, FIVE, SCOPE

NAMES = {"ada@example.org": "Ada", "bob@example.org": "Bob", "game": "the game"}


def tree(text: str, language: str = "en") -> p.Program:
    made = read_block(text, language)
    assert isinstance(made, p.Program)
    return made


def test_the_coins_block_in_plain_words_in_both_languages() -> None:
    assert describe(tree(FIVE[0]), "en") == [
        "Every player has coins, starting at 0.",
        "When a proposal is adopted: its author gets 40 coins.",
    ]
    assert describe(tree(CINQUE[0], "it"), "it") == [
        "Ogni giocatore ha monete, che parte da 0.",
        "Quando una proposta è adottata: il suo autore riceve 40 monete.",
    ]


def test_every_statement_of_the_five_blocks_has_words() -> None:
    for block in FIVE:
        for language in ("en", "it"):
            sentences = describe(tree(block), language)
            assert len(sentences) == len(tree(block).declarations)
            assert all(s.endswith(".") and "{" not in s for s in sentences)
    said = " ".join(describe(tree(FIVE[2]), "en"))
    assert "PICKPOCKET <target>" in said and "a die r is rolled from 1 to 10" in said


def test_a_problem_says_line_column_and_what_in_the_player_s_language() -> None:
    made = tree("COUNTER coins FOR player\nON proposal.adopted: GIVE author 1 coinz\n")
    (problem,) = check(made, SCOPE)
    assert problem_text(problem, "en") == (
        "Line 2, column 22: no rule declares the counter “coinz” (COUNTER coinz …)."
    )
    assert problem_text(problem, "it").startswith("Riga 2, colonna 22: nessuna regola")
    syntax = read_block("COUNTER coins FOR player STRAT 0\n", "it")
    assert isinstance(syntax, p.Problem)
    assert "INIZIO" in problem_text(syntax, "it") and "“STRAT”" in problem_text(syntax, "it")


def test_the_dry_run_shows_what_the_next_adoption_would_do() -> None:
    table = i.Table(
        ("ada@example.org", "bob@example.org"),
        "ada@example.org",
        b"seed",
        3,
        datetime(2026, 12, 3, tzinfo=UTC),
        ZoneInfo("UTC"),
    )
    result = dry_run(tree(FIVE[0]), [], table, i.Ledger(), "bob@example.org", 302)
    text = dry_run_text(result, NAMES.__getitem__, "en", 302)
    assert text == "If adopted now: Bob 0 → 40 coins when 302 passes."
    quiet = dry_run(tree(FIVE[1]), [], table, i.Ledger(), "bob@example.org", 302)
    assert dry_run_text(quiet, NAMES.__getitem__, "it", 302) == (
        "Se adottata ora: nulla cambia quando passa la 302."
    )
