"""`nomic-referee prune`: Processed mail and backups kept as long as [retention] says (issue 29).

Years of play grow the Processed folder and the backups without end. `prune` deletes the
Processed mail older than `processed_days` (default 90), in the local Maildir or on the IMAP
server, and all backups but the newest `backups` (default 14); never quarantined mail, never
the inbox, never a file that is no backup. `--dry-run` deletes nothing.
"""

from __future__ import annotations

import contextlib
import imaplib
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

from referee.config import load_settings
from referee.operations.pruning import prune
from tests.conftest import REFEREE, live_config, write_config
from tests.mailstack import PASSWORD, MailStack

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2027, 6, 1, 12, 0, tzinfo=UTC)


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def letter(days_ago: int) -> bytes:
    message = EmailMessage()
    message["From"], message["To"] = "ada@example.org", REFEREE
    message["Subject"], message["Message-ID"] = "STATUS", f"<{days_ago}@example.org>"
    message.set_content("STATUS")
    return message.as_bytes()


def put(folder: Path, days_ago: int, sub: str = "cur") -> Path:
    """A mail delivered `days_ago` days before NOW, named as Dovecot and Postfix name it."""
    (folder / sub).mkdir(parents=True, exist_ok=True)
    at = int((NOW - timedelta(days=days_ago)).timestamp())
    path = folder / sub / (f"{at}.M1P{days_ago}.host" + (":2,S" if sub == "cur" else ""))
    path.write_bytes(letter(days_ago))
    return path


def test_prune_keeps_the_recent_processed_mail_and_the_newest_backups(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with config.open("a", encoding="utf-8") as out:
        out.write('\n[retention]\nbackups_folder = "backups"\n')  # the rest: the defaults
    cli("init", config)
    maildir = tmp_path / "maildir"
    old = [put(maildir / ".Processed", days) for days in (91, 200, 400)]
    kept = [put(maildir / ".Processed", days) for days in (1, 89)]
    kept += [put(maildir / ".Quarantine", 400), put(maildir, 400, "new")]
    backups = tmp_path / "backups"
    backups.mkdir()
    for day in range(1, 17):  # one a day, named as the docs' cron line names them
        path = backups / f"2027-05-{day:02d}.db"
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE games (id INTEGER)")
        os.utime(path, (NOW.timestamp() - (17 - day) * 86400,) * 2)
    (backups / "notes.txt").write_text("not a backup", encoding="utf-8")

    dry = cli("prune", config, "--dry-run", "--now", NOW.isoformat())
    assert "would delete 3 mails from" in dry.stdout and "would delete 2 backups" in dry.stdout
    assert all(path.exists() for path in old) and len(list(backups.iterdir())) == 17

    done = cli("prune", config, "--now", NOW.isoformat())
    assert "deleted 3 mails" in done.stdout, done.stdout
    assert "deleted backup" in done.stdout and "2027-05-01.db" in done.stdout
    assert not any(path.exists() for path in old) and all(path.exists() for path in kept)
    left = sorted(path.name for path in backups.iterdir())
    assert left == [f"2027-05-{day:02d}.db" for day in range(3, 17)] + ["notes.txt"]
    again = cli("prune", config, "--now", NOW.isoformat())
    assert "deleted 0 mails" in again.stdout and "deleted 0 backups" in again.stdout


def test_prune_deletes_old_mail_from_the_imap_processed_folder(
    tmp_path: Path, stack: MailStack
) -> None:
    config = live_config(tmp_path, stack, f"sqlite:///{tmp_path / 'nomic.db'}")
    with config.open("a", encoding="utf-8") as out:
        out.write("\n[retention]\nprocessed_days = 30\n")
    now = datetime.now(UTC)  # Dovecot takes no INTERNALDATE in its future: the real clock
    client = imaplib.IMAP4("127.0.0.1", stack.imap_port)
    try:
        client.login(REFEREE, PASSWORD)
        client.create("Processed")
        for days in (31, 100, 29, 1):
            at = imaplib.Time2Internaldate(now - timedelta(days=days))
            assert client.append("Processed", "", at, letter(days))[0] == "OK"
    finally:
        client.logout()
    settings = load_settings(config)
    assert prune(settings, now, dry_run=True).processed == 2
    assert len(stack.read(REFEREE, "Processed")) == 4
    pruned = prune(settings, now)
    assert pruned.processed == 2 and pruned.where == "IMAP Processed" and not pruned.backups
    left = sorted(str(m["Message-ID"]) for m in stack.read(REFEREE, "Processed"))
    assert left == ["<1@example.org>", "<29@example.org>"]
