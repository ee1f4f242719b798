"""Players' mail readable by no other local user, whatever the umask (issue 29, item 5).

The operator's path with a careless umask (000): `init`, a mail read by `run --once`, the
replies written to the sent Maildir, `dkim-key`, `backup`. Every file the referee made is 0600
and every folder 0700. Beside it: the database password from the environment
(`[database] password_env`), and NOMIC_REFEREE_DATA, which sends what the referee writes out
of a read-only config folder (the container's /config).
"""

from __future__ import annotations

import mailbox
import os
import stat
import subprocess
import sys
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import ConfigError, load_settings
from referee.doctor import examine
from referee.private import private_database
from tests.conftest import write_config

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-12-01T10:00:00+00:00"


def cli(*args: str | Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        umask=0,  # the worst an operator's shell may have
        env=env,
    )
    assert done.returncode == 0, done.stderr


def drop(maildir: Path, body: str) -> None:
    message = EmailMessage()
    message["From"], message["To"] = "carla@example.org", "referee@nomic.example"
    message["Subject"], message["Message-ID"] = "Nomic", "<hygiene@example.org>"
    message.set_content(body)
    mailbox.Maildir(str(maildir), create=False).add(message)


def modes(folder: Path) -> dict[Path, int]:
    """Each path under `folder` (itself included) with its permission bits."""
    return {p: stat.S_IMODE(p.stat().st_mode) for p in (folder, *folder.rglob("*"))}


def test_what_the_referee_writes_is_private_whatever_the_umask(tmp_path: Path) -> None:
    game = tmp_path / "game"
    game.mkdir()
    config = write_config(game)
    with config.open("a", encoding="utf-8") as out:
        out.write('\n[dkim]\nselector = "nomic2026"\nkey_file = "keys/dkim.pem"\n')
    cli("dkim-key", config)
    cli("init", config)
    drop(game / "maildir", "PROPOSE ENACT\nBe kind.\nEND")
    cli("run", config, "--once", "--now", NOW)
    cli("backup", config, tmp_path / "backups" / "first.db")
    cli("export-mail", config, "--out", tmp_path / "backups" / "record.mbox")
    cli("outbox", config, "--export", tmp_path / "backups" / "outbox.mbox")
    made = {**modes(game / "maildir"), **modes(game / "sent"), **modes(game / "keys")}
    made |= {p: stat.S_IMODE(p.stat().st_mode) for p in game.glob("nomic.db*")}
    made |= modes(tmp_path / "backups")
    # the mail the MTA delivered keeps the MTA's mode; the rest is the referee's
    processed = game / "maildir" / ".Processed" / "cur"
    made = {path: mode for path, mode in made.items() if path.parent != processed}
    assert len(list((game / "sent" / "new").iterdir())) == 10  # the opening, reply, proposal
    assert {"nomic.db", "dkim.pem", "first.db", "record.mbox", "outbox.mbox", ".Processed"} <= {
        path.name for path in made
    }
    loose = {
        str(path.relative_to(tmp_path)): oct(mode)
        for path, mode in made.items()
        if mode != (0o700 if path.is_dir() else 0o600)
    }
    assert not loose


def test_a_folder_made_for_the_database_is_private_and_an_existing_one_keeps_its_mode(
    tmp_path: Path,
) -> None:
    tmp_path.chmod(0o755)
    old = os.umask(0)
    try:
        private_database(f"sqlite:///{tmp_path / 'data' / 'deeper' / 'nomic.db'}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "data" / "deeper").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "data" / "deeper" / "nomic.db").stat().st_mode) == 0o600


POSTGRES = '\n[database]\nurl = "postgresql+psycopg://nomic@db.example/nomic"\n'


def postgres_config(tmp_path: Path, database: str) -> Path:
    config = write_config(tmp_path)
    text = config.read_text(encoding="utf-8").replace(
        '\n[database]\nurl = "sqlite:///nomic.db"\n', ""
    )
    config.write_text(text + database, encoding="utf-8")
    return config


def test_the_database_password_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = postgres_config(tmp_path, POSTGRES + 'password_env = "NOMIC_TEST_DB_PASSWORD"\n')
    monkeypatch.setenv("NOMIC_TEST_DB_PASSWORD", "s3cret/@:x")
    settings = load_settings(config, secrets=False)  # every command opens the database
    assert settings.database_url == "postgresql+psycopg://nomic:s3cret%2F%40%3Ax@db.example/nomic"
    monkeypatch.delenv("NOMIC_TEST_DB_PASSWORD")
    with pytest.raises(ConfigError, match="NOMIC_TEST_DB_PASSWORD is not set"):
        load_settings(config, secrets=False)


@pytest.mark.parametrize(
    ("database", "message"),
    [
        (
            POSTGRES.replace("nomic@", "nomic:inline@") + 'password_env = "HOME"\n',
            "not both",
        ),
        ('\n[database]\nurl = "sqlite:///nomic.db"\npassword_env = "HOME"\n', "SQLite"),
        ('\n[database]\npassword = "inline"\n', "unknown key 'password'"),
    ],
)
def test_database_password_mistakes_are_named(tmp_path: Path, database: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(postgres_config(tmp_path, database))


def test_a_read_only_config_folder_and_the_data_elsewhere(tmp_path: Path) -> None:
    config_folder, data = tmp_path / "config", tmp_path / "data"
    config_folder.mkdir()
    config = write_config(config_folder)
    with config.open("a", encoding="utf-8") as out:
        out.write('\n[dkim]\nselector = "nomic2026"\nkey_file = "dkim.pem"\n')
    config_folder.chmod(0o555)
    env = {**os.environ, "NOMIC_REFEREE_DATA": str(data)}
    try:
        cli("dkim-key", config, env=env)
        cli("init", config, env=env)
        drop(data / "maildir", "STATUS")
        cli("run", config, "--once", "--now", NOW, env=env)
    finally:
        config_folder.chmod(0o755)
    assert sorted(p.name for p in config_folder.iterdir()) == ["game.toml"]
    assert {"nomic.db", "maildir", "sent", "dkim.pem"} <= {p.name for p in data.iterdir()}
    assert len(list((data / "sent" / "new").iterdir())) == 7  # the opening (6), the answer


def test_doctor_names_what_other_users_may_read(tmp_path: Path) -> None:
    game = tmp_path / "game"
    game.mkdir(mode=0o700)
    config = write_config(game)
    cli("init", config)
    settings = load_settings(config)
    privacy = {c.name: c for c in examine(config, settings)}["privacy"]
    assert privacy.status == "OK", privacy
    (game / "nomic.db").chmod(0o644)
    (game / "sent").chmod(0o755)
    privacy = {c.name: c for c in examine(config, settings)}["privacy"]
    assert privacy.status == "WARN" and "nomic.db (0644)" in privacy.detail
    assert f"chmod 600 {game / 'nomic.db'}" in privacy.fix
    assert f"chmod 700 {game / 'sent'}" in privacy.fix
