"""SIGKILL the service at random points in a burst: nothing lost, nothing applied twice (212)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

from referee.config import load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import PLAYER_ADDRESSES, REFEREE, live_config
from tests.mailstack import MailStack, takes_signals

BURST = 200
KILLS = 5


def appeal(index: int) -> bytes:
    m = EmailMessage()
    m["From"] = PLAYER_ADDRESSES[index % 3]
    m["To"], m["Subject"] = REFEREE, f"question {index}"
    m["Message-ID"] = f"<burst-{index}@example.org>"
    m.set_content(f"APPEAL\nQuestion #{index}: is this legal?\nEND")
    return m.as_bytes()


def start(config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "referee", "run", str(config)],
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_sigkill_during_a_burst_loses_and_repeats_nothing(
    tmp_path: Path, stack: MailStack, database_url: str
) -> None:
    seed = int(os.environ.get("NOMIC_CRASH_SEED", time.time_ns() % 100_000))
    chance = random.Random(seed)
    # the burst carries no Authentication-Results: sender checks off, as a test of intake only
    config = live_config(tmp_path, stack, database_url, extra="[auth]\nrequired = false\n")
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        game_id = Referee.create(store, settings, datetime.now(UTC)).game_id
        for index in range(BURST):
            stack.deliver(REFEREE, appeal(index))
        log = tmp_path / "service.log"
        for _ in range(KILLS):
            process = start(config, log)
            time.sleep(chance.uniform(0.5, 2.5))
            os.killpg(process.pid, signal.SIGKILL)  # no chance to clean up
            process.wait(10)
        process = start(config, log)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            counts = store.counts(game_id)
            waiting = counts.get("pending", 0) + counts.get("sending", 0)
            if store.inbound_count(game_id) >= BURST and waiting == 0:
                break
            time.sleep(0.5)
        takes_signals(process.pid)  # the interpreter itself has started (tests/test_clean_stop.py)
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(30) == 0, log.read_text()[-3000:]

        state = Referee.open(store, settings).state
        questions = sorted(a.question for a in state.appeals)
        expected = sorted(f"Question #{i}: is this legal?" for i in range(BURST))
        assert questions == expected, f"seed {seed}"  # each applied exactly once
        assert store.inbound_count(game_id) == BURST
        counts = store.counts(game_id)
        assert counts.get("pending", 0) == 0 and counts.get("failed", 0) == 0
        assert counts["quarantined"] == 0
    finally:
        store.close()
    assert len(stack.read(REFEREE)) == 0
    assert len(stack.read(REFEREE, "Processed")) == BURST
    answered = set()
    for player in PLAYER_ADDRESSES:
        answered |= {str(m["In-Reply-To"]) for m in stack.read(player)}
    missing = {f"<burst-{i}@example.org>" for i in range(BURST)} - answered
    assert not missing, f"seed {seed}: no reply to {sorted(missing)[:5]}"
