"""A whole game played by mail through Dovecot and SMTP; the live state equals `replay` (213)."""

from __future__ import annotations

import mailbox
import re
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

from examples.make_examples import SCRIPT, START, build
from referee.config import load_settings
from referee.core import view
from referee.replay import replay
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import REFEREE, live_config
from tests.mailstack import MailStack


def subjects(messages: list[EmailMessage]) -> list[str]:
    return [str(m["Subject"]) for m in messages]


def test_a_whole_game_by_mail_reaches_the_same_state_as_replay(
    tmp_path: Path, stack: MailStack, database_url: str
) -> None:
    # The game is played on the test's clock, and each mail is delivered at that clock's time
    # (IMAP APPEND with an internal date). Dovecot takes no internal date more than two hours
    # ahead of the real time, so the game lies wholly in the past, far from today's date;
    # tests/test_one_clock.py plays it before, around and after the real date through a
    # Maildir, whose delivery times a test can set freely.
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=400)
    config = live_config(tmp_path, stack, database_url)
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(START.isoformat(), start.isoformat()), encoding="utf-8")
    settings = load_settings(config)
    assert settings.game.start == start
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, start)
        service = Service(settings, store)
        _, messages = build("en", start)
        archive = mailbox.mbox(str(tmp_path / "archive.mbox"))
        last = start
        for (raw, at, sender), _script in zip(messages, SCRIPT, strict=True):
            stack.append(REFEREE, raw, at)  # delivered at the game's time, not the real one
            summary = service.run_once(at)
            assert summary.processed == 1 and summary.failed == 0
            entry = mailbox.mboxMessage(raw)
            entry.set_from(sender, at.timetuple())
            archive.add(entry)
            last = at
        archive.flush()
        live = service.referee.state
        assert live.over and live.winner == "bob@example.org"
        assert store.counts(service.referee.game_id).get("pending", 0) == 0
    finally:
        store.close()

    # Every player read the game in their own mailbox (107, 203, 205, 209).
    bob = subjects(stack.read("bob@example.org"))
    assert sum(re.fullmatch(r"\[Test Nomic\] Proposal 30\d", s) is not None for s in bob) == 7
    assert "[Test Nomic] Bob Rossi wins" in bob
    assert any(re.fullmatch(r"\[Test Nomic\] Proposal 30\d adopted: rule .+", s) for s in bob)
    ada = subjects(stack.read("ada@example.org"))
    assert sum("King: points for" in s for s in ada) == 7  # the award prompts
    assert len(stack.read(REFEREE)) == 0  # the INBOX is empty...
    assert len(stack.read(REFEREE, "Processed")) == len(SCRIPT)  # ...everything processed

    # The same mail replayed from the archive gives the same state (213).
    replayed = replay(load_settings(config), tmp_path / "archive.mbox")
    moment = last + timedelta(seconds=1)
    assert view.public_state(replayed.state, moment) == view.public_state(live, moment)
    assert replayed.state == live


def test_run_once_from_the_command_line_with_starttls(tmp_path: Path, stack: MailStack) -> None:
    import subprocess
    import sys

    config = live_config(tmp_path, stack, f"sqlite:///{tmp_path / 'cli.db'}", "starttls")
    cli = [sys.executable, "-c", "from referee.cli import main; main()"]
    done = subprocess.run([*cli, "init", config], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    vote = EmailMessage()
    vote["From"], vote["To"], vote["Subject"] = "carla@example.org", REFEREE, "x"
    vote["Message-ID"] = "<cli-1@example.org>"
    vote.set_content("PROPOSE ENACT\nBe kind.\nEND")
    # `init` starts the game at the real time: the mail comes a minute later, the run an hour
    delivered = datetime.now(UTC) + timedelta(minutes=1)
    stack.append(REFEREE, vote.as_bytes(), delivered)
    now = (delivered + timedelta(hours=1)).isoformat()
    done = subprocess.run(
        [*cli, "run", config, "--once", "--now", now], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "processed 1 mail," in done.stdout
    carla = subjects(stack.read("carla@example.org"))
    assert "Re: x" in carla and "[Test Nomic] Proposal 301" in carla
    status = subprocess.run([*cli, "status", config, "--json"], capture_output=True, text=True)
    assert '"proposal": 301' in status.stdout
