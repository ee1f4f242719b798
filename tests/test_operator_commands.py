"""What the operator's commands ask for and how they end (issue 29, item 7).

A config `run` cannot use exits 78 (EX_CONFIG), which the systemd unit names in
RestartPreventExitStatus=, so a typo is not retried every five seconds forever; a database
that is down still exits 2 and is retried. `verify`, `replay` and `players list` read mail and
the database and send nothing: they no longer demand the SMTP password.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

from referee.config import EXIT_CONFIG
from tests.conftest import write_config

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "nomic-referee.service"
UNSET = "NOMIC_TEST_UNSET_SMTP_PASSWORD"


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != UNSET}
    return subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env=env,
    )


def test_a_config_error_ends_run_with_the_code_the_unit_does_not_restart_on(
    tmp_path: Path,
) -> None:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(UNIT)
    assert parser["Service"]["Restart"] == "on-failure"
    assert parser["Service"]["RestartPreventExitStatus"].split() == [str(EXIT_CONFIG)]
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    config.write_text(config.read_text().replace("[game]\n", "[game]\nfoo = 1\n", 1))
    for args in (("run", config), ("run", "--once", config)):
        done = cli(*args)
        assert done.returncode == EXIT_CONFIG, done.stderr
        assert done.stderr.strip().endswith("[game]: unknown key 'foo'")
    assert cli("run", tmp_path / "missing.toml").returncode == EXIT_CONFIG
    assert cli("status", config).returncode == 2  # the other commands keep their code


def test_verify_replay_and_players_list_do_not_ask_for_the_smtp_password(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with config.open("a", encoding="utf-8") as out:
        out.write(f'\n[smtp]\nhost = "127.0.0.1"\npassword_env = "{UNSET}"\n')
    assert cli("init", config).returncode == 0
    mbox = ROOT / "examples" / "game-en.mbox"
    asked = f"environment variable {UNSET} is not set"
    listed = cli("players", config, "list")
    assert listed.returncode == 0 and "Ada Lovelace" in listed.stdout, listed.stderr
    replayed = cli("replay", config, mbox, "--json")
    assert replayed.returncode == 0, replayed.stderr
    verified = cli("verify", config, mbox, "--no-database")
    assert asked not in verified.stderr and verified.returncode in (0, 1), verified.stderr
    added = cli("players", config, "add", "Dan Brown", "dan@example.org")  # this one sends mail
    assert added.returncode == 2 and asked in added.stderr
