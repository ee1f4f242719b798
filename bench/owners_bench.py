"""Benchmark of `run` processes sharing games on PostgreSQL (rule 212: one owner per game).

Six games share one PostgreSQL database, each with its own Maildir; 1, 2 and then 3 `run`
processes are started on all six configs, left to share the games out, and then a burst of
mails (APPEALs, each answered and announced) is delivered. The figure is the aggregate rate
from delivery until every mail is processed and every answer accepted by the SMTP server.

Baseline, measured in the same run on the same database: one process applying the same kind
of mail with `Referee.receive` in a loop (no inbox, no SMTP): the processing rate of a single
worker with nothing around it.

    python bench/owners_bench.py [--mails 600] [--games 6] [--workers 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPATH", str(ROOT))

from referee.config import Settings, load_settings  # noqa: E402
from referee.ownership import lease_now  # noqa: E402
from referee.service import Referee  # noqa: E402
from referee.store.store import Store  # noqa: E402
from tests.conftest import _postgres_database  # noqa: E402
from tests.sink import game_config, recording_sink, start_run  # noqa: E402
from tests.test_owners import appeal, into_maildir  # noqa: E402


def make_games(folder: Path, url: str, games: int, smtp_port: int) -> list[Settings]:
    store = Store(url)
    every = []
    try:
        for index in range(games):
            config = game_config(
                folder / f"game{index}", url, name=f"Nomic {index}", smtp_port=smtp_port
            )
            settings = load_settings(config)
            Referee.create(store, settings, datetime.now(UTC))
            for sub in ("tmp", "new"):
                (settings.maildir / sub).mkdir(parents=True, exist_ok=True)
            every.append(settings)
    finally:
        store.close()
    return every


def baseline(mails: int) -> float:
    """One process, `receive` in a loop, on a fresh PostgreSQL database."""
    generator = _postgres_database()
    url = next(generator)
    try:
        with tempfile.TemporaryDirectory() as folder:
            settings = make_games(Path(folder), url, 1, 1)[0]
            store = Store(url)
            referee = Referee.open(store, settings)
            raws = [appeal(settings.game.name, i)[1] for i in range(mails)]
            started = time.monotonic()
            for raw in raws:
                referee.receive(raw, datetime.now(UTC))
            seconds = time.monotonic() - started
            store.close()
    finally:
        for _ in generator:
            pass
    return mails / seconds


def workers(count: int, mails: int, games: int) -> tuple[float, int]:
    """Aggregate mails per second with `count` run processes; and how many answers were sent."""
    generator = _postgres_database()
    url = next(generator)
    try:
        with tempfile.TemporaryDirectory() as folder, recording_sink() as sink:
            base = Path(folder)
            every = make_games(base, url, games, sink.port)
            configs = [base / f"game{i}" / "game.toml" for i in range(games)]
            store = Store(url)
            ids = [store.game_id(s.game.key) or 0 for s in every]
            log = base / "run.log"
            processes = [start_run(configs, log) for _ in range(count)]
            try:
                share = -(-games // count)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:  # until the games are shared out
                    owners = [store.holder(g, lease_now()) for g in ids]
                    spread = [owners.count(o) for o in set(owners)]
                    if None not in owners and len(set(owners)) == count and max(spread) <= share:
                        break
                    time.sleep(0.2)
                time.sleep(2.0)
                opening = len(sink.mails)
                per_game = mails // games
                burst = [
                    (settings, appeal(settings.game.name, i)[1])
                    for i in range(per_game)
                    for settings in every
                ]
                started = time.monotonic()
                for settings, raw in burst:
                    into_maildir(settings, raw)
                while True:
                    done = sum(store.inbound_count(g) for g in ids)
                    counts = [store.counts(g) for g in ids]
                    waiting = sum(c.get("pending", 0) + c.get("sending", 0) for c in counts)
                    if done == len(burst) and waiting == 0:
                        break
                    if time.monotonic() - started > 600:
                        raise TimeoutError(log.read_text()[-2000:])
                    time.sleep(0.05)
                seconds = time.monotonic() - started
                answers = len(sink.mails) - opening
            finally:
                for process in processes:
                    if process.poll() is None:
                        os.killpg(process.pid, signal.SIGTERM)
                        process.wait(60)
                store.close()
    finally:
        for _ in generator:
            pass
    return len(burst) / seconds, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mails", type=int, default=600)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--workers", type=int, default=3, help="up to this many processes")
    args = parser.parse_args()
    raw = baseline(args.mails // args.games)
    print(f"baseline: one process, receive() only, no mail I/O : {raw:7.1f} mail/s")
    one = 0.0
    for count in range(1, args.workers + 1):
        rate, answers = workers(count, args.mails, args.games)
        one = one or rate
        print(
            f"{count} worker(s), {args.games} games, {args.mails} mails      : {rate:7.1f} mail/s"
            f"  ({rate / one:.2f}x one worker, {rate / raw:.2f}x baseline; {answers} mails sent)"
        )


if __name__ == "__main__":
    main()
