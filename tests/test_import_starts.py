"""Any imported ruleset starts a game with `import` and `init` alone (111, 211; issue 30).

A value a rule sets plainly (its subject the mechanic, its verb setting it) is carried by that
rule, listed with its sentence by `import` and shown under the rule in the opening mail; any
value a rule merely mentions (a deadline, a bound, a trial's majority) stays prose, and the
parameter keeps its house value, which the ruleset mail names. `init --strict` refuses until
the group has carried or dismissed each, as before.
"""

from __future__ import annotations

import email.utils
from datetime import timedelta
from pathlib import Path

from referee import importer, rulebook
from referee.config import load_settings
from referee.core import numbering
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import BOB, CARLA, T0
from tests.imported import bodies, config, message, replay_game, ruleset_order, turn
from tests.test_cli import cli

MOSSBANK = """# Mossbank Nomic

## 1. Winning

The first player to reach 60 points wins the game.

## 2. Debate

Each proposal is debated for 3 days.

## 3. Reminders

Within four days of a missed vote, the vote collector SHALL issue a public reminder to the
player who did not vote.

## 4. The voting period

The voting period CANNOT be set to be less than 2 days or to more than 14 days.

## 5. Trials

A player accused of cheating is found guilty when a simple majority of the other players
vote for the accusation; the trial is adopted into the record within 2 days.

## 6. Judges

The Judge's judgment may be overruled only by a unanimous vote of the other players.
"""


def test_a_document_starts_a_game_carrying_only_what_it_sets_plainly(tmp_path: Path) -> None:
    document = tmp_path / "mossbank.md"
    document.write_text(MOSSBANK, encoding="utf-8")
    folder = tmp_path / "mossbank"
    done = cli("import", document, "--out", folder)
    assert done.returncode == 0, done.stderr
    assert (
        "rule 1 says winning_score = 60: “The first player to reach 60 points wins the game.” "
        "(carried by rule 1: the rule sets it plainly)"
    ) in done.stdout
    assert "rule 2 says debate_days = 3: “Each proposal is debated for 3 days.” (carried by" in (
        done.stdout
    )
    assert "these stay prose, on house values that the ruleset mail names" in done.stdout
    assert "init --strict refuses" in done.stdout
    for line in done.stdout.splitlines():  # no deadline, bound or judge's vote is carried
        if "rule 3 says" in line or "rule 4 says" in line or "rule 6 says" in line:
            assert "carried" not in line, line
    rules = {r.label: dict(r.parameters) for r in rulebook.load_folder(folder).rules}
    assert rules["1"] == {"winning_score": "60"}
    assert rules["2"] == {"debate_days": "3", "debate_days_min": "3"}
    assert not any(rules[label] for label in ("3", "4", "5", "6"))
    # init alone starts the game; --strict refuses until each value is carried or dismissed
    strict = tmp_path / "strict"
    strict.mkdir()
    refused = cli("init", "--strict", config(strict, folder))
    assert refused.returncode == 2 and "--dismiss" in refused.stderr
    settings = config(tmp_path, folder)
    started = cli("init", settings)
    assert started.returncode == 0, started.stderr
    state, sent = replay_game(settings, [message(BOB, "STATUS", 1)], tmp_path)
    assert state["parameters"]["winning_score"] == 60
    assert state["parameters"]["debate_days"] == 3
    assert state["parameters"]["voting_days"] == 7  # the house value: no rule sets it plainly
    opening = next(text for subject, text in bodies(sent) if "The game begins" in subject)
    assert "The first player to reach 60 points wins the game." in opening
    assert "winning_score) = 60" in opening and "debate_days) = 3" in opening
    assert "House values" in opening and "voting_days = 7" in opening


def test_a_document_named_directly_starts_a_game_too(tmp_path: Path) -> None:
    """Named as `[game] ruleset` with no folder to edit, the document starts its game: what it
    sets plainly is carried, the rest stays prose; `init --strict` refuses it, with the fix."""
    document = tmp_path / "mossbank.md"
    document.write_text(MOSSBANK, encoding="utf-8")
    strict = tmp_path / "strict"
    strict.mkdir()
    refused = cli("init", "--strict", config(strict, document))
    assert refused.returncode == 2 and "import it into a folder first" in refused.stderr
    settings = config(tmp_path, document)
    assert cli("init", settings).returncode == 0
    state, _ = replay_game(settings, [message(BOB, "STATUS", 1)], tmp_path)
    assert state["parameters"]["winning_score"] == 60
    assert state["parameters"]["voting_days"] == 7


CLUB = Path(__file__).resolve().parent / "data" / "rulesets" / "green-door-club.txt"


def test_one_line_rules_under_headings_round_trip_through_a_game(tmp_path: Path) -> None:
    """A club rulebook: a heading, then one line per rule (a Roman numeral, a short title, a
    dash, the text), numbered afresh under each heading, `-` separators and a sub-list. Each
    numbered line is a rule labelled by its numeral and named by its path (`Scoring/I`);
    import, init, a rule amended by its own label by mail, and export give it all back."""
    text = CLUB.read_text(encoding="utf-8")
    doc = importer.read_document(text)
    assert [s.path for s in doc.sections] == [
        "Table/I", "Table/II", "Table/III", "Scoring/I", "Scoring/II",
        "Changing these rules/I", "Changing these rules/II", "Changing these rules/III",
        "Changing these rules/IV",
    ]  # fmt: skip
    assert [s.label for s in doc.sections][:4] == ["I", "II", "III", "I"]
    phones = doc.sections[2].text
    assert phones.startswith("Phones — Phones stay") and phones.endswith("may use a timer.")
    assert all("----" not in s.text for s in doc.sections)  # separators stay outside rules
    assert not importer.warnings(doc)
    folder = tmp_path / "club"
    done = cli("import", CLUB, "--out", folder, "--strict")
    assert done.returncode == 0, done.stderr
    assert "found 9 rules by their numbers" in done.stdout
    assert "(carried by rule Scoring/II: the rule sets it plainly)" in done.stdout
    exported = cli("export", folder)
    assert exported.returncode == 0 and exported.stdout.split() == text.split()
    settings = config(tmp_path, folder, "max_mutable_rules = 20")
    assert cli("init", settings).returncode == 0
    before = rulebook.load_folder(folder).rules
    first = numbering.first_proposal_number(before)
    new_text = "Guests — A guest may play two evenings a month without joining the club."
    script = [
        *turn(CARLA, f"PROPOSE AMEND IV\n{new_text}\nEND", first, 0),
        message(BOB, "RULE Scoring/I", 8 * 24 + 20),
    ]
    state, sent = replay_game(settings, script, tmp_path)
    assert {p["number"]: p["status"] for p in state["proposals"]} == {first: "adopted"}
    rules = {r["number"]: r for r in state["rules"]}
    assert rules[first]["text"] == new_text and rules[first]["label"] == "IV"
    assert state["parameters"]["winning_score"] == 100
    answer = next(t for _, t in bodies(sent) if "> RULE Scoring/I" in t)
    assert "Each hand won scores 5 points." in answer
    order = [r.number for r in before]
    assert ruleset_order(sent) == [first if n == order[-1] else n for n in order]
    # export: the game's rules in force, written by the archive, in the club's order
    archive = tmp_path / "archive"
    game = tmp_path / "game"
    game.mkdir()
    live = config(game, folder, "max_mutable_rules = 20")
    store = Store(load_settings(live).database_url)
    try:
        referee = Referee.create(store, load_settings(live), T0, render=False)
        for item in script[:-1]:
            referee.receive(item.as_bytes(), email.utils.parsedate_to_datetime(str(item["Date"])))
        referee.advance(T0 + timedelta(days=9))
    finally:
        store.close()
    assert cli("archive", "write", live, archive).returncode == 0
    full = (archive / "ruleset-full.md").read_text(encoding="utf-8")
    assert (
        new_text in full
        and "A guest may play one evening a month"
        not in full.split("## Rule")[-1].split("History")[0]
    )
