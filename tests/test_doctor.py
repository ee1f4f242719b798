"""`nomic-referee doctor` against the test stack's real Dovecot and SMTP servers (205, 213):
a good config, a wrong password, a wrong port, a self-signed certificate, missing folders,
pending migrations, and the [auth] lines read from the latest mail's headers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from referee.config import load_settings
from referee.doctor import Check, examine
from referee.starter import initialise
from tests.conftest import REFEREE, live_config
from tests.helpers import ADA, mail
from tests.mailstack import PASSWORD, MailStack, free_port

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime.now(UTC)


@pytest.fixture(scope="module")
def mailstack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MailStack]:
    root = tmp_path_factory.mktemp("doctor")
    stack = MailStack(root / "stack", [REFEREE, ADA]).start()
    try:
        yield stack
    finally:
        stack.stop()


class _Accept:
    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        return "250 OK"


def _only_secret(
    server: object, session: object, envelope: object, mechanism: str, data: object
) -> AuthResult:
    good = isinstance(data, LoginPassword) and data.password == PASSWORD.encode()
    return AuthResult(success=good)


@pytest.fixture(scope="module")
def smtp_auth() -> Iterator[int]:
    """An SMTP server that wants a login (plain text on loopback, as tests may)."""
    port = free_port()
    controller = Controller(
        _Accept(),
        hostname="127.0.0.1",
        port=port,
        authenticator=_only_secret,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


def game(folder: Path, stack: MailStack, **changes: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = live_config(folder, stack, f"sqlite:///{folder / 'nomic.db'}")
    text = path.read_text()
    for old, new in changes.items():
        text = text.replace(old.replace("_", " "), new)
    path.write_text(text)
    return path


def test_a_sound_game_and_what_its_inbox_says_about_authentication(
    mailstack: MailStack, smtp_auth: int, tmp_path: Path
) -> None:
    config = game(tmp_path, mailstack)
    config.write_text(
        config.read_text().replace(
            f'port = {mailstack.smtp_port}\nsecurity = "none"',
            f'port = {smtp_auth}\nsecurity = "none"\nusername = "referee"\npassword = "{PASSWORD}"',
        )
    )
    settings = load_settings(config)
    initialise(settings, NOW)
    # A player's mail as the operator's MX took it in: its own verdict above its Received
    # line, and a forged verdict that came with the mail below it.
    raw = mail(
        ADA,
        "STATUS",
        headers={},
    )
    head = (
        b"Authentication-Results: mx.club.example; dkim=pass header.d=example.org;"
        b" dmarc=pass header.from=example.org\r\n"
        b"Received: from mail.example.org (mail.example.org [203.0.113.9])\r\n"
        b"\tby mx.club.example (Postfix) with ESMTPS id 4Abc; Tue, 1 Dec 2026 09:00:00 +0000\r\n"
        b"Authentication-Results: evil.example; dkim=pass header.d=example.org\r\n"
    )
    mailstack.deliver(REFEREE, head + raw.replace(b"\n", b"\r\n"))
    first = by_name(examine(config, settings, create_folders=False, now=NOW))
    assert first["config"].status == "OK" and first["database"].status == "OK"
    assert first["migrations"].status == "OK" and first["game"].status == "OK"
    assert first["clock"].status == "OK"
    assert first["imap"].status == "OK" and "TLS" in first["imap"].detail
    assert first["folders"].status == "FAIL" and "Processed" in first["folders"].detail
    assert "--create-folders" in first["folders"].fix
    assert first["idle"].status == "OK" and first["move"].status == "OK"
    assert first["smtp login"].status == "OK"
    auth = first["auth"]
    assert auth.status == "WARN"  # the config trusts no one yet: the lines to put in
    assert 'trusted_authserv_id = ["mx.club.example"]' in auth.notes
    assert "received by mx.club.example" in auth.detail
    assert "ignored (below the entry line, came with the mail): evil.example" in auth.detail
    assert "1 of 1 pass with these lines" in auth.detail
    done = subprocess.run(  # the CLI: consent given, the folders are made; one line a check
        [sys.executable, "-m", "referee", "doctor", "--create-folders", str(config)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert any(line.startswith("OK   folders:") and "created now" in line for line in lines)
    assert '       trusted_authserv_id = ["mx.club.example"]' in lines
    assert done.returncode == 0, done.stdout + done.stderr  # a WARN is no failure
    again = by_name(examine(config, settings, now=NOW))
    assert again["folders"].status == "OK"


def test_a_wrong_password_a_wrong_port_and_an_untrusted_certificate(
    mailstack: MailStack, smtp_auth: int, tmp_path: Path
) -> None:
    wrong = game(tmp_path / "password", mailstack)
    wrong.write_text(
        wrong.read_text()
        .replace(f'password = "{PASSWORD}"', 'password = "wrong"')
        .replace(
            f'port = {mailstack.smtp_port}\nsecurity = "none"',
            f'port = {smtp_auth}\nsecurity = "none"\nusername = "referee"\npassword = "wrong"',
        )
    )
    checks = by_name(examine(wrong, load_settings(wrong), now=NOW))
    assert checks["imap"].status == "FAIL"
    assert checks["imap"].detail.startswith(f"IMAP server 127.0.0.1:{mailstack.imaps_port}")
    assert "LOGIN" in checks["imap"].detail and "password" in checks["imap"].fix
    assert checks["smtp login"].status == "FAIL" and "password" in checks["smtp login"].fix

    closed = free_port()
    port = game(tmp_path / "port", mailstack)
    port.write_text(
        port.read_text()
        .replace(f"port = {mailstack.imaps_port}", f"port = {closed}")
        .replace(f"port = {mailstack.smtp_port}", f"port = {closed}")
    )
    checks = by_name(examine(port, load_settings(port), now=NOW))
    assert checks["imap"].status == "FAIL" and "connection refused" in checks["imap"].detail
    assert f"127.0.0.1:{closed}" in checks["imap"].detail
    assert checks["smtp"].status == "FAIL" and "connection refused" in checks["smtp"].detail

    untrusted = game(tmp_path / "cert", mailstack)
    untrusted.write_text(untrusted.read_text().replace(f'ca_file = "{mailstack.ca_file}"\n', ""))
    checks = by_name(examine(untrusted, load_settings(untrusted), now=NOW))
    assert checks["imap"].status == "FAIL"
    assert "certificate is not trusted" in checks["imap"].detail
    assert "set [imap] ca_file" in checks["imap"].detail
    done = subprocess.run(
        [sys.executable, "-m", "referee", "doctor", str(untrusted)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 1 and "failed" in done.stderr
    assert any(
        line.startswith("FAIL imap: IMAP server 127.0.0.1:") for line in done.stdout.splitlines()
    )


def test_doctor_says_when_migrations_are_pending(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    from referee.store.store import MIGRATIONS, Store
    from tests.conftest import write_config

    config = write_config(tmp_path)
    store = Store(load_settings(config).database_url)
    try:
        alembic = Config()
        alembic.set_main_option("script_location", str(MIGRATIONS))
        with store.engine.begin() as connection:
            alembic.attributes["connection"] = connection
            command.upgrade(alembic, "0003")
        assert store.pending_migrations()[0] == "0004"
    finally:
        store.close()
    for sub in ("maildir", "sent"):
        for leaf in ("new", "cur", "tmp"):
            (tmp_path / sub / leaf).mkdir(parents=True, exist_ok=True)
    checks = by_name(examine(config, load_settings(config), now=NOW))
    assert checks["migrations"].status == "FAIL"
    assert "pending (0004" in checks["migrations"].detail
    # the test config's players are the starter's example.org ones: said, as init says it
    assert checks["addresses"].status == "WARN" and "ada@example.org" in checks["addresses"].detail
    assert "nomic-referee migrate" in checks["migrations"].fix
    done = subprocess.run(
        [sys.executable, "-m", "referee", "migrate", str(config)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0 and "0004" in done.stdout, done.stderr
    assert by_name(examine(config, load_settings(config), now=NOW))["migrations"].status == "OK"
