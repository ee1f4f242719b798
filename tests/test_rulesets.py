"""The built-in rulesets on disk: the seed's Italian text unchanged, our English one (101, 102)."""

from __future__ import annotations

import re
import tempfile
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
    """The Finnish club's laws: preamble, nested § labels, one label twice, the long s.

    58 mutable rules are more than rule 210's 25: the game is set up the way the refusal at
    init says (the config's [parameters] max_mutable_rules), not by raising the cap in code."""
    from referee.config import load_settings
    from referee.core import engine
    from referee.core.events import Outcome, Propose, Query, QueryKind
    from referee.core.model import ProposalKind
    from referee.service import initial_state
    from tests.conftest import write_config
    from tests.helpers import ADA, T0

    laws = Path(__file__).resolve().parents[1] / "tests" / "data" / "dalmuti-laws.txt"
    ruleset = rulebook.load(str(laws), "en")
    rules = ruleset.rules
    assert [r.label for r in rules[:3]] == ["§ -1", "-1.1", "§ 1"]
    assert all("Peliſäännöt" not in r.text for r in rules)  # the title is not a rule
    twins = [r for r in rules if r.label == "§ 2.2.2.10.1"]
    assert len(twins) == 2 and twins[0].text != twins[1].text  # both kept, told apart
    assert [t.path for t in twins] == ["§ 2.2.2.10.1", "§ 2.2.2.10.1#2"]
    assert all(r.mutable for r in rules) and len(rules) == 58
    assert any("♦" in r.text for r in rules)
    folder = Path(tempfile.mkdtemp())
    config = write_config(folder)
    text = config.read_text(encoding="utf-8").replace(
        'timezone = "Europe/Rome"', f'timezone = "Europe/Rome"\nruleset = "{laws}"'
    )
    config.write_text(text, encoding="utf-8")
    with pytest.raises(rulebook.RulesetError, match=r"max_mutable_rules = 58"):
        initial_state(load_settings(config), T0)
    config.write_text(text + "\n[parameters]\nmax_mutable_rules = 60\n", encoding="utf-8")
    state = engine.start_game(initial_state(load_settings(config), T0), T0).state
    assert state.next_proposal_number == 301
    amend = Propose(
        state.turn_player or "",
        ProposalKind.AMEND,
        ref="§ 2.2.2.10.1#2",
        text="Jokainen käyttämätön häpeäpaalu on -2 pisteen arvoinen.",
    )
    decision = engine.decide(state, amend, T0)
    accepted = decision.effects[0]
    assert isinstance(accepted, Outcome) and accepted.ok
    found = engine.decide(decision.state, Query(ADA, QueryKind.RULE, ref="2.2.2.10.1"), T0)
    answer = found.effects[0]
    assert isinstance(answer, Outcome) and answer.code == "ambiguous_rule"
    assert [r["number"] for r in answer.data["rules"]] == [twins[0].number, twins[1].number]
