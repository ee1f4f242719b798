"""Fixtures shared by the service and CLI tests."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from examples.make_examples import CONFIG as EXAMPLE_CONFIG
from referee.config import Settings, load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import T0
from tests.mailstack import PASSWORD, MailStack

# The README's example game, renamed, with its own database: the tests' standard game.
CONFIG = EXAMPLE_CONFIG.replace('name = "{name}"', 'name = "Test Nomic"') + (
    '\n[database]\nurl = "sqlite:///nomic.db"\n'
    # the burst tests load the referee with appeals from three players; the daily cap on
    # appeals is tested on the example game itself (test_screen_limits.py)
    "\n[limits]\nappeals_per_day = 1000\n"
)


def write_config(folder: Path, language: str = "en") -> Path:
    path = folder / "game.toml"
    path.write_text(CONFIG.format(language=language), encoding="utf-8")
    return path


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(write_config(tmp_path))


@pytest.fixture
def referee(settings: Settings) -> Iterator[Referee]:
    store = Store(settings.database_url)
    try:
        yield Referee.create(store, settings, T0)
    finally:
        store.close()


POSTGRES_ADMIN = os.environ.get(
    "NOMIC_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def _postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards."""
    name = f"nomic_test_{uuid.uuid4().hex[:10]}"
    try:
        admin = psycopg.connect(POSTGRES_ADMIN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL is not reachable: {exc}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = POSTGRES_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Each test that takes this runs twice: on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'nomic.db'}"
    else:
        yield from _postgres_database()


PLAYER_ADDRESSES = ("ada@example.org", "bob@example.org", "carla@example.org")
REFEREE = "referee@nomic.example"


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[MailStack]:
    """Dovecot and an SMTP server with the referee's and the players' mailboxes."""
    mail_stack = MailStack(tmp_path / "stack", [REFEREE, *PLAYER_ADDRESSES]).start()
    try:
        yield mail_stack
    finally:
        mail_stack.stop()


def live_config(
    folder: Path,
    stack: MailStack,
    database_url: str,
    security: str = "tls",
    language: str = "en",
    extra: str = "",
    auth: str = "required = false  # the test players sign nothing",
) -> Path:
    """A game that reads its mail from Dovecot and sends through the SMTP server.

    With [imap], sender authentication is on by default; the test players' mail carries no
    signature, so `auth` turns it off unless a test says otherwise ("" keeps the default).
    """
    port = {"tls": stack.imaps_port, "starttls": stack.imap_port, "none": stack.imap_port}
    if "[auth]" in extra:  # the caller's own [auth] section wins
        auth = ""
    text = CONFIG.format(language=language).replace(
        '[database]\nurl = "sqlite:///nomic.db"', f'[database]\nurl = "{database_url}"'
    )
    text += f"""
[imap]
host = "127.0.0.1"
port = {port[security]}
username = "{REFEREE}"
password = "{PASSWORD}"
security = "{security}"
ca_file = "{stack.ca_file}"
poll_seconds = 1
idle_seconds = 30

[smtp]
host = "127.0.0.1"
port = {stack.smtp_port}
security = "none"
{"[auth]" if auth else ""}
{auth}
{extra}"""
    path = folder / "live.toml"
    path.write_text(text, encoding="utf-8")
    return path
