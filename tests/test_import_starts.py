"""Any imported ruleset starts a game with `import` and `init` alone (111, 211; issue 30).

A value a rule sets plainly (its subject the mechanic, its verb setting it) is carried by that
rule, listed with its sentence by `import` and shown under the rule in the opening mail; any
value a rule merely mentions (a deadline, a bound, a trial's majority) stays prose, and the
parameter keeps its house value, which the ruleset mail names. `init --strict` refuses until
the group has carried or dismissed each, as before.
"""

from __future__ import annotations

from pathlib import Path

from referee import rulebook
from tests.helpers import BOB
from tests.imported import bodies, config, message, replay_game
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
