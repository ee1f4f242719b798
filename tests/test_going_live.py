"""An operator's rough edges (issue 17, item 7): pipes, read-only commands, errors that name
the file and the server, a game renamed, example addresses, the starter's [auth] (105, 205)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from referee.config import load_settings
from referee.starter import starter_config
from referee.store.store import MIGRATIONS, Store
from tests.conftest import write_config
from tests.helpers import BOB, T0, mail

ROOT = Path(__file__).resolve().parents[1]


def cli(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_a_closed_pipe_ends_the_listing_quietly(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "referee", "outbox", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # `| head -0`: the reader is gone before the first line
    errors = process.stderr.read().decode()
    assert process.wait(60) == 0, errors
    assert errors == ""
    shell = subprocess.run(  # and as written in a shell, with the pipeline's own status
        [
            "bash",
            "-c",
            f'"{sys.executable}" -m referee outbox "{config}" | head -n 1; '
            'exit "${PIPESTATUS[0]}"',
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert shell.returncode == 0 and shell.stderr == ""
    assert len(shell.stdout.splitlines()) == 1


SERVERS = """
[imap]
host = "imap.invalid"
username = "referee"
password_env = "NOMIC_TEST_UNSET_IMAP"

[smtp]
host = "smtp.invalid"
username = "referee"
password_env = "NOMIC_TEST_UNSET_SMTP"
"""


def test_reading_commands_never_create_a_database_nor_ask_for_secrets(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text() + SERVERS, encoding="utf-8")
    env = {"NOMIC_TEST_UNSET_IMAP": "", "NOMIC_TEST_UNSET_SMTP": ""}
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NOMIC_TEST_UNSET")}
    commands = [
        ("status", config),
        ("outbox", config),
        ("site", config, "--out", tmp_path / "site"),
        ("archive", config, tmp_path / "archive"),
    ]
    for args in commands:  # before init: said plainly, and no empty nomic.db left behind
        done = subprocess.run(
            [sys.executable, "-m", "referee", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=clean,
        )
        assert done.returncode != 0
        assert "not initialised" in done.stderr and "environment variable" not in done.stderr
        assert not (tmp_path / "nomic.db").exists(), args
    assert cli("init", config, env=env).returncode == 0  # init never logs in either
    for args in commands:
        done = subprocess.run(
            [sys.executable, "-m", "referee", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=clean,
        )
        assert done.returncode == 0, (args, done.stderr)
    run = subprocess.run(  # `run` logs in: it does need them
        [sys.executable, "-m", "referee", "run", "--once", str(config)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=clean,
    )
    assert run.returncode != 0 and "NOMIC_TEST_UNSET_IMAP is not set" in run.stderr


def test_config_errors_name_the_file(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace("[game]\n", "[game]\nfoo = 1\n", 1))
    done = cli("status", config)
    assert done.returncode == 2
    assert done.stderr.strip() == f"nomic-referee: error: {config}: [game]: unknown key 'foo'"


def test_a_game_keeps_its_identity_when_its_name_is_corrected(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    text = config.read_text()
    assert 'name = "Test Nomic"' in text and "\nid =" not in text
    assert cli("init", config).returncode == 0
    config.write_text(text.replace('name = "Test Nomic"', 'name = "Test Nomic League"'))
    lost = cli("status", config)  # the default id follows the name: the game is not found ...
    assert lost.returncode != 0
    assert "id 'test-nomic' ('Test Nomic')" in lost.stderr  # ... and the message says which
    assert 'id = "test-nomic"' in lost.stderr
    config.write_text(
        text.replace('name = "Test Nomic"', 'name = "Test Nomic League"\nid = "test-nomic"')
    )
    found = cli("status", config)
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("Test Nomic League at ")
    store = Store(load_settings(config).database_url)
    try:
        assert store.games() == [("test-nomic", "Test Nomic League")]
    finally:
        store.close()
    (tmp_path / "maildir" / "new" / "1.mail").write_bytes(mail(BOB, "STATUS"))
    ran = cli("run", "--once", config)  # a reply decided now carries the new name
    assert ran.returncode == 0, ran.stderr
    replies = [
        path.read_bytes()
        for path in (tmp_path / "sent" / "new").iterdir()
        if b"Auto-Submitted: auto-replied" in path.read_bytes()  # the answers, not the notices
    ]
    assert len(replies) == 1
    head = replies[0].split(b"\r\n\r\n")[0]
    assert b"From: Test Nomic League <referee@nomic.example>" in head
    assert b"Message-ID: <test-nomic." in head


def test_the_migration_gives_each_old_game_its_key(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config

    store = Store(f"sqlite:///{tmp_path / 'old.db'}")
    try:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with store.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "0003")
            for name in ("Nomic of the King", "Nomic of the King!"):  # the same slug twice
                connection.execute(
                    sa.text(
                        "INSERT INTO games (name, address, language, created_at, initial_state,"
                        " state, snapshot_seq, events) VALUES (:n, 'a@b.cd', 'en', :t, '{}',"
                        " '{}', 0, 0)"
                    ),
                    {"n": name, "t": T0},
                )
        store.create_schema()
        assert store.games() == [
            ("nomic-of-the-king", "Nomic of the King"),
            ("nomic-of-the-king-2", "Nomic of the King!"),
        ]
        assert store.game_id("nomic-of-the-king-2") == 2
    finally:
        store.close()


def test_init_warns_about_example_addresses(tmp_path: Path) -> None:
    config = tmp_path / "game.toml"
    assert cli("init", "--write-config", config).returncode == 0
    done = cli("init", config)
    assert done.returncode == 0, done.stderr
    assert "warning" in done.stderr and "ada@example.org" in done.stderr
    assert "referee@nomic.example" in done.stderr
    real = tmp_path / "real"
    real.mkdir()
    text = config.read_text()
    for old, new in (
        ("referee@nomic.example", "referee@club.it"),
        ("@example.org", "@club.it"),
    ):
        text = text.replace(old, new)
    (real / "game.toml").write_text(text)
    done = cli("init", real / "game.toml")
    assert done.returncode == 0 and done.stderr == ""


def test_the_starter_config_carries_auth_and_a_stable_id(tmp_path: Path) -> None:
    text = starter_config("Nomic of the King")
    assert 'id = "nomic-of-the-king"' in text
    assert "# [auth]" in text and "doctor" in text
    lines = []  # the operator uncomments the [auth] lines: a valid config that uses them
    in_auth = False
    for line in text.splitlines():
        if line.startswith("# [auth]"):
            in_auth = True
        lines.append(line[2:] if in_auth and line.startswith("# ") else line)
    path = tmp_path / "game.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    settings = load_settings(path)
    assert settings.auth.trusted_authserv_id == ("mx.example.org",)
    assert settings.auth.required and settings.game.key == "nomic-of-the-king"


def test_no_library_chatter_at_start(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    done = cli("run", "--once", "-v", config)
    assert done.returncode == 0, done.stderr
    assert "referee" in done.stderr  # -v: the referee's own INFO lines are there ...
    assert "alembic" not in done.stderr and "Context impl" not in done.stderr  # ... no others


def test_status_check_for_monitors(tmp_path: Path) -> None:
    from tests.test_hostile import nested

    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    start = "2026-12-01T09:00:00+00:00"
    later = "2026-12-01T11:00:00+00:00"
    stuck = cli("status", "--check", "--unread-minutes", "0", "--now", later, config)
    assert stuck.returncode == 1 and stuck.stdout.startswith("FAIL outbox stuck")
    assert "6 waiting" in stuck.stdout
    assert cli("run", "--once", "--now", start, config).returncode == 0
    healthy = cli("status", "--check", "--unread-minutes", "0", "--now", later, config)
    assert healthy.returncode == 0 and healthy.stdout.startswith("OK"), healthy.stdout
    unread = cli("status", "--check", "--now", later, config)  # no `run` process holds it
    assert unread.returncode == 1 and "the inbox is not read" in unread.stdout
    (tmp_path / "maildir" / "new" / "1.deep").write_bytes(nested(2000))
    # set aside unread, its sender told: handled, so cron hears nothing; the check says so
    assert cli("run", "--once", "--now", later, config).returncode == 0
    quarantined = cli("status", "--check", "--unread-minutes", "0", "--now", later, config)
    assert quarantined.returncode == 1
    assert quarantined.stdout.startswith(
        "FAIL 1 mail(s) set aside in quarantine in the last 1 day (1 unreadable, the sender told)"
    )
    # a day on, it has been reported: the operator is not paged for it forever
    days_on = "2026-12-02T11:00:01+00:00"
    seen = cli("status", "--check", "--unread-minutes", "0", "--now", days_on, config)
    assert seen.returncode == 0, seen.stdout
    assert seen.stdout.startswith("OK") and "1 older mail(s) in quarantine" in seen.stdout
    week = ("--quarantine-days", "7")
    kept = cli("status", "--check", *week, "--unread-minutes", "0", "--now", days_on, config)
    assert kept.returncode == 1 and "in the last 7 days" in kept.stdout
    always = ("--quarantine-days", "0")
    kept = cli("status", "--check", *always, "--unread-minutes", "0", "--now", days_on, config)
    assert kept.returncode == 1 and kept.stdout.startswith("FAIL 1 mail(s) set aside")


def test_json_log_lines_at_the_configured_level(tmp_path: Path) -> None:
    import json

    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    config.write_text(config.read_text() + '\n[log]\nlevel = "info"\nformat = "json"\n')
    (tmp_path / "maildir" / "new" / "1.mail").write_bytes(mail(BOB, "STATUS"))
    done = cli("run", "--once", "-v", config)
    assert done.returncode == 0, done.stderr
    items = [json.loads(line) for line in done.stderr.splitlines()]  # each line is JSON
    assert items and {"time", "level", "logger", "message"} <= set(items[0])
    assert any(i["logger"].startswith("referee") and i["level"] == "info" for i in items)
    assert not [i for i in items if not i["logger"].startswith("referee")]
    config.write_text(config.read_text().replace('format = "json"', 'format = "yaml"'))
    bad = cli("status", config)
    assert bad.returncode == 2 and "[log] format must be 'text' or 'json'" in bad.stderr


def test_metrics_on_their_port(tmp_path: Path) -> None:
    import signal
    import time
    import urllib.request

    from tests.mailstack import free_port

    config = write_config(tmp_path)
    port = free_port()
    config.write_text(config.read_text() + f"\n[metrics]\nport = {port}\n")
    assert cli("init", config).returncode == 0
    (tmp_path / "maildir" / "new" / "1.mail").write_bytes(mail(BOB, "STATUS\nFROB 7"))
    service = subprocess.Popen(
        [sys.executable, "-m", "referee", "run", str(config)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    page = ""
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    page = r.read().decode()
            except OSError:
                page = ""
            if 'nomic_mails_in_total{game="test-nomic",status="processed"} 1.0' in page and (
                'nomic_mails_out_total{game="test-nomic",result="sent"}' in page
            ):
                break
            time.sleep(0.5)
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(60)
    assert 'nomic_mails_in_total{game="test-nomic",status="processed"} 1.0' in page, page
    assert 'nomic_commands_total{game="test-nomic",outcome="obeyed"}' in page
    assert 'nomic_mails_out_total{game="test-nomic",result="sent"}' in page
    assert 'nomic_outbox_depth{game="test-nomic"}' in page
    assert 'nomic_quarantined_mails{game="test-nomic"} 0.0' in page
    assert 'nomic_deadline_lag_seconds{game="test-nomic"}' in page
    assert "nomic_outbox_oldest_seconds" in page


def test_cron_and_doctor_say_when_sender_authentication_is_off(tmp_path: Path) -> None:
    """`run --once` warns on stderr once a run, as `run` logs at start, and `doctor` gives a
    Maildir game an auth line: WARN with what to set while it is off, OK once it is on."""
    config = write_config(tmp_path)
    for sub in ("maildir", "sent"):
        for leaf in ("new", "cur", "tmp"):
            (tmp_path / sub / leaf).mkdir(parents=True, exist_ok=True)
    assert cli("init", config).returncode == 0
    for _run in range(2):
        done = cli("run", "--once", config)
        assert done.returncode == 0, done.stderr
        assert done.stderr.count("SENDER AUTHENTICATION IS OFF") == 1, done.stderr
    doctor = cli("doctor", config)
    auth = [line for line in doctor.stdout.splitlines() if line.split()[1:2] == ["auth:"]]
    assert len(auth) == 1, doctor.stdout
    assert auth[0].startswith("WARN auth: SENDER AUTHENTICATION IS OFF"), auth[0]
    assert "fix: set [auth] required = true" in auth[0]
    config.write_text(config.read_text() + "\n[auth]\nrequired = true\n", encoding="utf-8")
    done = cli("run", "--once", config)
    assert done.returncode == 0 and "SENDER AUTHENTICATION" not in done.stderr, done.stderr
    doctor = cli("doctor", config)
    assert "OK   auth: sender authentication is on" in doctor.stdout, doctor.stdout
