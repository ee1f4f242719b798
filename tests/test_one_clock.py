"""One clock per run: a mail takes effect at its delivery time, never later than the run's clock
and never before the last event in the log (docs/operations.md; rules 203, 213).

The game is played before, around and after today's date (relative to the real clock), each
mail delivered at the game's own time through a Maildir, so a game clock that meets the real
one fails here on any day, not in a given month.
"""

from __future__ import annotations

import mailbox
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from examples.make_examples import CONFIG, build
from referee.config import load_settings
from referee.inboxes import delivery_time
from referee.replay import replay
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime.now(UTC).replace(microsecond=0)
STARTS = {
    "before": NOW - timedelta(days=400),  # the whole game in the past
    "around": NOW - timedelta(days=10),  # today falls inside the game
    "after": NOW + timedelta(days=400),  # the whole game ahead of today
}


def write_config(folder: Path, start: datetime) -> Path:
    text = CONFIG.format(language="en", name="Nomic of the King")
    text = "\n".join(
        f'start = "{start.isoformat()}"' if line.startswith("start =") else line
        for line in text.splitlines()
    )
    path = folder / "game.toml"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def drop(maildir: Path, raw: bytes, at: datetime, index: int) -> None:
    """Deliver into `new/` as an MTA would at `at`: the time in the name, and the mtime."""
    for sub in ("new", "cur", "tmp"):
        (maildir / sub).mkdir(parents=True, exist_ok=True)
    path = maildir / "new" / f"{int(at.timestamp())}.M{index}P1.test"
    path.write_bytes(raw)
    os.utime(path, (at.timestamp(), at.timestamp()))


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.parametrize("where", list(STARTS))
def test_the_example_game_reaches_the_same_end_at_any_date(tmp_path: Path, where: str) -> None:
    start = STARTS[where]
    settings = load_settings(write_config(tmp_path, start))
    store = Store(settings.database_url)
    archive = mailbox.mbox(str(tmp_path / "game.mbox"))
    try:
        Referee.create(store, settings, start)
        service = Service(settings, store)
        _, messages = build("en", start)
        for index, (raw, at, sender) in enumerate(messages):
            drop(settings.maildir, raw, at, index)
            summary = service.run_once(at)
            assert summary.processed == 1 and summary.failed == 0, (where, index)
            entry = mailbox.mboxMessage(raw)
            entry.set_from(sender, at.timetuple())
            archive.add(entry)
        archive.flush()
        live = service.referee.state
        assert live.over and live.winner == "bob@example.org", where
        times = [at for _, at, _, _ in store.event_log(service.referee.game_id)]
        assert times == sorted(times)  # the log's times never go back
    finally:
        store.close()
    replayed = replay(load_settings(write_config(tmp_path, start)), tmp_path / "game.mbox")
    assert replayed.state == live


def appeal(sender: str, mid: str, question: str) -> bytes:
    message = EmailMessage()
    message["From"], message["To"] = sender, "referee@nomic.example"
    message["Subject"], message["Message-ID"] = "A question", mid
    message.set_content(f"APPEAL\n{question}\nEND")
    return message.as_bytes()


def applied(log: Sequence[tuple[int, datetime, str | None, object]], mid: str) -> datetime:
    """When the mail with Message-ID `mid` took effect, read from the event log."""
    [at] = {at for _, at, message_id, _ in log if message_id == mid}
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at


def test_mail_delivered_before_inside_and_after_the_log_in_fresh_processes(
    tmp_path: Path,
) -> None:
    start = NOW - timedelta(days=400)
    config = write_config(tmp_path, start)
    assert cli("init", config).returncode == 0
    maildir = tmp_path / "maildir"

    def run(now: datetime) -> None:
        done = cli("run", config, "--once", "--now", now.isoformat())
        assert done.returncode == 0, done.stderr

    # Inside: delivered before the run's clock and after the last event: at its delivery time.
    propose = EmailMessage()
    propose["From"], propose["To"] = "carla@example.org", "referee@nomic.example"
    propose["Subject"], propose["Message-ID"] = "Proposal", "<inside@x>"
    propose.set_content("PROPOSE ENACT\nBe kind to one another.\nEND")
    drop(maildir, propose.as_bytes(), start + timedelta(hours=1), 1)
    run(start + timedelta(hours=2))
    # After: delivered later than the run's clock (`--now` behind the name): at the clock.
    drop(
        maildir,
        appeal("bob@example.org", "<after@x>", "Is it late?"),
        start + timedelta(days=30),
        2,
    )
    run(start + timedelta(hours=3))
    # The debate ends (112) a week after the proposal: a deadline in the log.
    run(start + timedelta(days=8))
    # Before: delivered before that deadline but read after it: at the deadline's time.
    drop(
        maildir, appeal("ada@example.org", "<before@x>", "Am I late?"), start + timedelta(days=5), 3
    )
    run(start + timedelta(days=9))

    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        log = store.event_log(Referee.open(store, settings).game_id)
        times = [at for _, at, _, _ in log]
        assert times == sorted(times)  # never back, in a fresh process each time
        assert applied(log, "<inside@x>") == start + timedelta(hours=1)
        assert applied(log, "<after@x>") == start + timedelta(hours=3)
        deadline = max(at for _, at, mid, _ in log if mid is None)
        assert start + timedelta(days=7) <= deadline.replace(tzinfo=UTC) < start + timedelta(days=8)
        assert applied(log, "<before@x>") == deadline.replace(tzinfo=UTC)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("delivered", "now", "expected"),
    [
        (None, 5, 5),  # no delivery time: the run's clock
        (3, 5, 3),  # before the clock: its delivery time
        (9, 5, 5),  # ahead of the clock: the clock
    ],
)
def test_a_run_takes_a_mail_at_its_delivery_time_never_later_than_its_clock(
    delivered: int | None, now: int, expected: int
) -> None:
    """The run's side of the rule; the log's side (never before its last event, a clock behind
    the log included) is `Referee.receive`'s, tested with the mail read late
    (tests/test_read_late.py)."""
    base = datetime(2000, 1, 1, tzinfo=UTC)

    def at(hours: int) -> datetime:
        return base + timedelta(hours=hours)

    moment = delivery_time(None if delivered is None else at(delivered), at(now))
    assert moment == at(expected)
