"""The rule archive on disk: every rule's history through all its numbers (109, 205, 213)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from referee.archive import write_archive
from referee.config import load_settings
from referee.replay import replay
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import CARLA, DAY, T0, mail

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def front(path: Path) -> dict[str, Any]:
    found = re.match(r"\+\+\+\n(.*?)\n\+\+\+\n", path.read_text(encoding="utf-8"), re.S)
    assert found is not None
    return tomllib.loads(found.group(1))


def test_the_archive_follows_each_rule_through_its_numbers(tmp_path: Path) -> None:
    result = replay(load_settings(EXAMPLES / "game-en.toml"), EXAMPLES / "game-en.mbox")
    changed = write_archive(result.state, tmp_path)
    assert len(changed) == len(result.state.rules) + 2
    winning = front(tmp_path / "rules" / "209.md")
    assert winning["number"] == 304 and winning["in_force"] is True
    history = winning["history"]
    assert isinstance(history, list)
    assert [h["number"] for h in history] == [209, 301, 304]
    assert [h.get("proposal") for h in history] == [None, 301, 304]
    assert winning["parameters"] == {"winning_score": "25"}
    transmuted = front(tmp_path / "rules" / "116.md")
    assert transmuted["mutable"] is True and transmuted["number"] == 303
    assert "## Rule 304 (mutable)" in (tmp_path / "ruleset.md").read_text(encoding="utf-8")
    assert "| Bob Rossi | 27 |" in (tmp_path / "scores.md").read_text(encoding="utf-8")
    assert write_archive(result.state, tmp_path) == []  # nothing changed: nothing written


def test_run_keeps_the_archive_and_the_cli_writes_one(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(
        config.read_text().replace(
            'start = "2026-12-01T09:00:00+00:00"',
            'start = "2026-12-01T09:00:00+00:00"\narchive = "rules-archive"',
        ),
        encoding="utf-8",
    )
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        service.run_once(T0)
        (settings.maildir / "new" / "1.mail").write_bytes(
            mail(CARLA, "PROPOSE REPEAL 208", at=T0 + DAY / 24)
        )
        for who in ("ada@example.org", "bob@example.org", CARLA):
            (settings.maildir / "new" / f"{who}.mail").write_bytes(
                mail(who, "VOTE 301 YES", at=T0 + DAY / 12)
            )
        service.run_once(T0 + DAY / 24)
        service.run_once(T0 + 9 * DAY)
    finally:
        store.close()
    repealed = front(tmp_path / "rules-archive" / "rules" / "208.md")
    assert repealed["in_force"] is False
    assert [h["event"] for h in repealed["history"]] == ["initial", "repealed"]
    cli = [sys.executable, "-c", "from referee.cli import main; main()"]
    done = subprocess.run(
        [*cli, "archive", str(config), str(tmp_path / "elsewhere")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "elsewhere" / "rules" / "208.md").is_file()
