"""SIGTERM at any moment ends `run` cleanly: exit 0, the mail in hand committed, nothing lost or
applied twice, no reply sent twice (docs/operations.md, "Stopping"; rule 213's record).

The signal comes at random moments of a bounded number of runs, from the moment the process
catches SIGTERM (its first line of Python): while the command line's imports load, while the
store opens, while the Maildir is read and while the replies are written out. The seed is
printed with any failure (NOMIC_STOP_SEED repeats a run).
"""

from __future__ import annotations

import mailbox
import os
import random
import signal
import subprocess
import sys
import time
from email.message import EmailMessage
from pathlib import Path

from referee.config import load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.mailstack import takes_signals

ROOT = Path(__file__).resolve().parent.parent
RUNS = 8
MAILS_PER_RUN = 6


def appeal(index: int) -> bytes:
    message = EmailMessage()
    message["From"] = ("ada@example.org", "bob@example.org", "carla@example.org")[index % 3]
    message["To"], message["Subject"] = "referee@nomic.example", f"Question {index}"
    message["Message-ID"] = f"<stop-{index}@example.org>"
    message.set_content(f"APPEAL\nQuestion #{index}: may I?\nEND")
    return message.as_bytes()


def drop(maildir: Path, index: int) -> None:
    """Delivered now, as an MTA would: written in tmp/, then moved into new/."""
    name = f"{int(time.time())}.M{index}P{os.getpid()}.test"
    (maildir / "tmp" / name).write_bytes(appeal(index))
    os.replace(maildir / "tmp" / name, maildir / "new" / name)


def start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "referee", "run", str(config)],
        cwd=ROOT,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
    )


def test_sigterm_at_random_moments_stops_cleanly_and_loses_nothing(tmp_path: Path) -> None:
    seed = int(os.environ.get("NOMIC_STOP_SEED", time.time_ns() % 100_000))
    chance = random.Random(seed)
    config = write_config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "referee", "init", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    maildir = tmp_path / "maildir"
    log = tmp_path / "service.log"
    for run in range(RUNS):
        for index in range(run * MAILS_PER_RUN, (run + 1) * MAILS_PER_RUN):
            drop(maildir, index)
        process = start(config, log)
        takes_signals(process.pid)
        time.sleep(chance.uniform(0.0, 3.0))
        process.send_signal(signal.SIGINT if run == RUNS - 1 else signal.SIGTERM)
        code = process.wait(120)
        assert code == 0, f"seed {seed}, run {run}: exit {code}\n{log.read_text()[-3000:]}"
    assert "Traceback" not in log.read_text(), f"seed {seed}\n{log.read_text()[-3000:]}"

    # What the stopped runs left waits in the inbox and the outbox: one more run takes it all.
    finish = subprocess.run(
        [sys.executable, "-m", "referee", "run", str(config), "--once"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finish.returncode == 0, finish.stderr
    total = RUNS * MAILS_PER_RUN
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        referee = Referee.open(store, settings)
        state, game = referee.state, referee.game_id
        questions = sorted(a.question for a in state.appeals)
        assert questions == sorted(f"Question #{i}: may I?" for i in range(total)), f"seed {seed}"
        assert store.inbound_count(game) == total
        counts = store.counts(game)
        assert counts.get("pending", 0) == 0 and counts.get("quarantined", 0) == 0
    finally:
        store.close()
    assert not list((maildir / "new").iterdir())
    sent = mailbox.Maildir(str(tmp_path / "sent"), create=False)
    ids = [str(m["Message-ID"]) for m in sent]
    assert len(ids) == len(set(ids)), f"seed {seed}: a mail was written out twice"
    answered = {str(m["In-Reply-To"]) for m in sent if m["In-Reply-To"]}
    missing = {f"<stop-{i}@example.org>" for i in range(total)} - answered
    assert not missing, f"seed {seed}: no reply to {sorted(missing)[:5]}"
