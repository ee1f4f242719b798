"""The command line as users drive it: init, status, replay of the README's games (213)."""

from __future__ import annotations

import json
import mailbox
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_config

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=120,
    )


def test_init_then_status(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    done = cli("init", config)
    assert done.returncode == 0, done.stderr
    assert "first turn: carla@example.org" in done.stdout
    status = cli("status", config, "--json")
    assert status.returncode == 0, status.stderr
    state = json.loads(status.stdout)
    assert state["turn"] == {
        "player": "carla@example.org",
        "phase": "propose",
        "proposal": None,
        "deadline": None,
    }
    assert state["king"] == "ada@example.org" and state["round"] == 1
    assert [r["number"] for r in state["rules"]][:2] == [101, 102] and len(state["rules"]) == 32
    assert state["parameters"]["winning_score"] == 100
    assert state["mail"] == {"pending": 6, "quarantined": 0}  # no [smtp]: the opening waits
    human = cli("status", config)
    assert "Carla De Santis" in human.stdout
    assert "outbox: 6 waiting, 0 sent, 0 undeliverable; 0 mail(s) in quarantine" in human.stdout
    again = cli("init", config)
    assert again.returncode != 0 and "already initialised" in again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("status", "missing.toml"), "config file not found"),
        (("replay", "missing.toml", "x.mbox"), "config file not found"),
        (("replay", EXAMPLES / "game-en.toml", "no.mbox"), "mbox not found"),
        (
            ("replay", EXAMPLES / "game-en.toml", EXAMPLES / "game-en.mbox", "--until", "soon"),
            "--until",
        ),
        (("status",), "Missing argument"),
        (("frobnicate",), "No such command"),
    ],
)
def test_errors_are_one_line_without_traceback(args: tuple[str, ...], message: str) -> None:
    done = cli(*args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_status_before_init_says_so(tmp_path: Path) -> None:
    done = cli("status", write_config(tmp_path))
    assert done.returncode != 0 and "nomic-referee init" in done.stderr


@pytest.mark.parametrize("language", ["en", "it"])
def test_replay_of_the_readme_game_reaches_a_winner(language: str, tmp_path: Path) -> None:
    out = tmp_path / "sent.mbox"
    done = cli(
        "replay",
        EXAMPLES / f"game-{language}.toml",
        EXAMPLES / f"game-{language}.mbox",
        "--json",
        "--out",
        out,
    )
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert state["over"] and state["winner"] == "bob@example.org"
    assert state["adoption"] == "majority"  # 204 switched after round two
    scores = {p["email"]: p["score"] for p in state["players"]}
    assert scores == {"carla@example.org": 19, "ada@example.org": 13, "bob@example.org": 27}
    statuses = [(p["number"], p["status"]) for p in state["proposals"]]
    assert statuses == [
        (301, "adopted"),
        (302, "rejected"),
        (303, "adopted"),
        (304, "adopted"),
        (305, "rejected"),
        (306, "adopted"),
        (307, "adopted"),
    ]
    rule = next(r for r in state["rules"] if r["number"] == 304)
    assert [h["number"] for h in rule["history"]] == [209, 301, 304]  # 109
    box = mailbox.mbox(str(out))
    subjects = [str(m["Subject"]) for m in box]
    winner = "Bob Rossi wins" if language == "en" else "Vince Bob Rossi"
    assert sum(winner in s for s in subjects) == 3  # to every player
    assert all(m["Auto-Submitted"] for m in box)


def test_replay_is_deterministic_and_until_stops_midway(tmp_path: Path) -> None:
    first, second = tmp_path / "a.mbox", tmp_path / "b.mbox"
    config, mbox = EXAMPLES / "game-en.toml", EXAMPLES / "game-en.mbox"
    cli("replay", config, mbox, "--out", first)
    cli("replay", config, mbox, "--out", second)
    assert first.read_bytes() == second.read_bytes()
    early = cli("replay", config, mbox, "--json", "--until", "2026-12-10T00:00:00+00:00")
    state = json.loads(early.stdout)
    assert not state["over"] and state["turn"]["player"] == "ada@example.org"
    assert state["now"] == "2026-12-10T00:00:00+00:00"


def test_the_shipped_examples_are_what_the_script_writes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, EXAMPLES / "make_examples.py", tmp_path],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.returncode == 0
    for name in ("game-en.toml", "game-en.mbox", "game-it.toml", "game-it.mbox"):
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes(), name
