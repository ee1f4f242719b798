"""The built-in rulesets on disk: the seed's Italian text unchanged, our English one (101, 102)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee import rulebook
from referee.core import params
from referee.resources import data_folder

SEED = Path(__file__).resolve().parents[1] / "ruleset" / "it" / "SOURCE.txt"


def test_the_italian_ruleset_is_the_seed_text_unchanged() -> None:
    seed = SEED.read_text(encoding="utf-8")
    expected = {int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d{3})\. (.*)$", seed, re.M)}
    ruleset = rulebook.load("builtin", "it")
    assert {r.number: r.text for r in ruleset.rules} == expected
    assert len(expected) == 32


def test_shared_seed_matches_the_shipped_copy() -> None:
    shared = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "004_6bc15e76d3f0ad90.txt"
    if not shared.is_file():
        pytest.skip("shared/ is not beside this checkout")
    assert shared.read_bytes() == SEED.read_bytes()


def test_both_languages_agree_on_numbers_mutability_and_parameters() -> None:
    it = rulebook.load("builtin", "it").rules
    en = rulebook.load("builtin", "en").rules
    assert [(r.number, r.mutable, r.parameters) for r in it] == [
        (r.number, r.mutable, r.parameters) for r in en
    ]
    assert [r.number for r in en if not r.mutable] == list(range(101, 118))  # 102
    assert [r.number for r in en if r.mutable] == list(range(201, 216))
    carried = {name for r in en for name, _ in r.parameters}
    assert carried == {s.name for s in params.SPECS}
    assert all(r.title for r in en)


def test_loader_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "101.md").write_text("+++\nnumber = 101\nmutable = true\n+++\n", encoding="utf-8")
    with pytest.raises(rulebook.RulesetError, match=r"101\.md: the rule has no text"):
        rulebook.load_folder(tmp_path)
    (tmp_path / "101.md").write_text("no front matter", encoding="utf-8")
    with pytest.raises(rulebook.RulesetError, match="front matter"):
        rulebook.load_folder(tmp_path)
    (tmp_path / "101.md").write_text(
        "+++\nnumber = 101\nmutable = false\n[parameters]\nwinning_score = 0\n+++\nText.\n",
        encoding="utf-8",
    )
    with pytest.raises(rulebook.RulesetError, match="winning_score"):
        rulebook.load_folder(tmp_path)
    (tmp_path / "101.md").write_text("+++\nnumber = 101\nmutable = false\n+++\nText.\n")
    with pytest.raises(rulebook.RulesetError, match="at least one mutable rule"):
        rulebook.load_folder(tmp_path)
    with pytest.raises(rulebook.RulesetError, match="not found"):
        rulebook.load("nowhere", "en", tmp_path)


def test_a_numbered_document_is_taken_in() -> None:
    ruleset = rulebook.load(str(SEED), "it")
    assert len(ruleset.rules) == 32 and ruleset.rules[0].number == 101
    assert data_folder("templates").is_dir()


def test_a_code_of_laws_is_taken_in_and_played() -> None:
    """The Finnish club's laws: preamble, nested § labels, one label twice, the long s."""
    from referee.core import engine
    from referee.core.events import Outcome, Propose, Query, QueryKind
    from referee.core.model import GameState, ProposalKind
    from tests.helpers import ADA, PLAYERS, T0

    laws = Path(__file__).resolve().parents[1] / "tests" / "data" / "dalmuti-laws.txt"
    ruleset = rulebook.load(str(laws), "en")
    rules = ruleset.rules
    assert rules[0].title == "preamble" and "Peliſäännöt" in rules[0].text
    assert [r.title for r in rules[1:4]] == ["§ -1", "-1.1", "§ 1"]
    twins = [r for r in rules if r.title == "§ 2.2.2.10.1"]
    assert len(twins) == 2 and twins[0].text != twins[1].text  # both kept, told apart
    assert all(r.mutable for r in rules) and len(rules) == 59
    assert any("♦" in r.text for r in rules)
    state = GameState(
        name="Dalmuti",
        language="en",
        started_at=T0,
        players=PLAYERS,
        king=ADA,
        rules=ruleset.at(T0),
        house_parameters=(("max_mutable_rules", "100"),),
    )
    state = engine.start_game(state, T0).state
    amend = Propose(
        state.turn_player or "",
        ProposalKind.AMEND,
        target=twins[1].number,
        text="Jokainen käyttämätön häpeäpaalu on -2 pisteen arvoinen.",
    )
    decision = engine.decide(state, amend, T0)
    accepted = decision.effects[0]
    assert isinstance(accepted, Outcome) and accepted.ok
    found = engine.decide(decision.state, Query(ADA, QueryKind.RULE, twins[0].number), T0)
    answer = found.effects[0]
    assert isinstance(answer, Outcome) and answer.data["rule"]["title"] == "§ 2.2.2.10.1"
