"""Benchmarks of the live service on a real Dovecot and SMTP server (rules 107, 203: replies).

Each figure is printed next to a raw baseline measured in the same run on the same servers:

  latency   SMTP submission of a vote -> the reply in the player's IMAP mailbox, with IDLE.
            Baseline: an echo that IDLEs on the same mailbox, fetches the mail and sends one
            reply with aiosmtplib. Target: p50 <= 0.8 s (Dovecot adds ~0.5 s before it pushes).
  burst     1,000 mails waiting, from as many players as a real game's limits let send them in
            one day (the default [limits]: 100 mails a player a day, so ten players for 1,000):
            the referee's throughput / the raw rate of fetching those mails and sending one
            reply each with aiosmtplib. Target >= 0.8.
  memory    peak resident memory of `run --once` on a 10,000-mail backlog. Target <= 150 MB.

    python bench/service_bench.py [latency|burst|memory|all] [--votes 30] [--burst 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import imaplib
import json
import resource
import smtplib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.utils import parseaddr
from pathlib import Path

import aiosmtplib
from aioimaplib import aioimaplib
from sqlalchemy import func
from sqlmodel import Session, select

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.config import load_settings  # noqa: E402
from referee.runner import Service  # noqa: E402
from referee.service import Referee  # noqa: E402
from referee.store.store import Store  # noqa: E402
from referee.store.tables import InboundRow, InboundStatus  # noqa: E402
from tests.conftest import CONFIG, PLAYER_ADDRESSES, REFEREE, live_config  # noqa: E402
from tests.mailstack import PASSWORD, MailStack, running  # noqa: E402

PLAYER = PLAYER_ADDRESSES[1]
PER_DAY = 100  # the default [limits] mails_per_day: what one player may send in a day


def mail(sender: str, body: str, mid: str) -> bytes:
    m = EmailMessage()
    m["From"], m["To"], m["Subject"], m["Message-ID"] = sender, REFEREE, "bench", mid
    m.set_content(body)
    return m.as_bytes()


def inbox_size(user: str, stack: MailStack) -> int:
    client = imaplib.IMAP4("127.0.0.1", stack.imap_port)
    client.login(user, PASSWORD)
    status, data = client.select("INBOX", readonly=True)
    client.logout()
    return int(data[0] or 0) if status == "OK" else 0


def wait_for_count(user: str, stack: MailStack, count: int, timeout: float = 30) -> float:
    """Poll the player's INBOX every 10 ms (no IDLE: Dovecot's push delay would be counted)."""
    client = imaplib.IMAP4("127.0.0.1", stack.imap_port)
    client.login(user, PASSWORD)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            _, data = client.select("INBOX", readonly=True)
            if int(data[0] or 0) >= count:
                return time.monotonic()
            time.sleep(0.01)
    finally:
        client.logout()
    raise TimeoutError(f"{user} never had {count} messages")


def submit(stack: MailStack, raw: bytes) -> float:
    started = time.monotonic()
    with smtplib.SMTP("127.0.0.1", stack.smtp_port) as client:
        client.sendmail(PLAYER, [REFEREE], raw)
    return started


def round_trips(stack: MailStack, votes: int, prefix: str) -> list[float]:
    times = []
    for index in range(votes):
        before = inbox_size(PLAYER, stack)
        started = submit(
            stack,
            mail(PLAYER, f"VOTE 301 {'YES' if index % 2 else 'NO'}", f"<{prefix}-{index}@bench>"),
        )
        times.append(wait_for_count(PLAYER, stack, before + 1) - started)
    return times


class Echo:
    """The raw baseline: IDLE on the referee's mailbox, fetch, one reply with aiosmtplib."""

    def __init__(self, stack: MailStack) -> None:
        self.stack = stack
        self.stop = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self.main()), daemon=True)

    async def main(self) -> None:
        parser = BytesHeaderParser()
        imap = aioimaplib.IMAP4(host="127.0.0.1", port=self.stack.imap_port)
        await imap.wait_hello_from_server()
        await imap.login(REFEREE, PASSWORD)
        await imap.select("INBOX")
        smtp = aiosmtplib.SMTP(hostname="127.0.0.1", port=self.stack.smtp_port)
        await smtp.connect()
        while not self.stop.is_set():
            response = await imap.uid_search("ALL", charset=None)
            uids = [
                u for line in response.lines for u in bytes(line).decode().split() if u.isdigit()
            ]
            for uid in uids:
                fetched = await imap.uid("fetch", uid, "(BODY.PEEK[])")
                raw = next(bytes(x) for x in fetched.lines if isinstance(x, bytearray))
                sender = parseaddr(str(parser.parsebytes(raw)["From"]))[1]
                reply = EmailMessage()
                reply["From"], reply["To"], reply["Subject"] = REFEREE, sender, "Re: bench"
                reply.set_content("echo")
                await smtp.sendmail(REFEREE, [sender], reply.as_bytes())
                await imap.uid("store", uid, "+FLAGS", r"(\Deleted)")
                await imap.expunge()
            if uids:
                continue
            idle = await imap.idle_start(timeout=1)
            with contextlib.suppress(TimeoutError):
                await imap.wait_server_push(timeout=1)
            imap.idle_done()
            await asyncio.wait_for(idle, 5)
        await smtp.quit()
        await imap.logout()


def referee_for(stack: MailStack, folder: Path) -> tuple[Service, Store]:
    settings = load_settings(live_config(folder, stack, f"sqlite:///{folder / 'bench.db'}"))
    store = Store(settings.database_url)
    Referee.create(store, settings, datetime.now(UTC))
    service = Service(settings, store)
    service.referee.receive(
        mail("carla@example.org", "PROPOSE ENACT\nBe kind.\nEND", "<p@b>"), datetime.now(UTC)
    )
    return service, store


def latency(votes: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        stack = MailStack(Path(folder) / "stack", [REFEREE, *PLAYER_ADDRESSES]).start()
        try:
            echo = Echo(stack)
            echo.thread.start()
            time.sleep(1.0)
            raw = round_trips(stack, votes, "echo")
            echo.stop.set()
            echo.thread.join(10)
            service, store = referee_for(stack, Path(folder))
            with running(service):
                time.sleep(2.0)  # let it send the circulation and settle into IDLE
                referee = round_trips(stack, votes, "vote")
            store.close()
        finally:
            stack.stop()
    for label, times in (("raw echo (baseline)", raw), ("referee", referee)):
        q = statistics.quantiles(times, n=20)
        print(
            f"latency {label:20s}: p50 {statistics.median(times):.3f} s  p95 {q[18]:.3f} s  "
            f"({len(times)} votes)"
        )
    verdict = "meets" if statistics.median(referee) <= 0.8 else "misses"
    print(f"latency target p50 <= 0.8 s: {verdict}")


def burst_players(count: int) -> list[str]:
    """The game's players plus as many more as the burst needs to stay within the daily limit."""
    needed = max(len(PLAYER_ADDRESSES), -(-count // PER_DAY))
    return [*PLAYER_ADDRESSES, *(f"p{i}@example.org" for i in range(needed - 3))]


def burst_config(folder: Path, stack: MailStack, players: list[str]) -> Path:
    """The live test game with the burst's extra players (plain players, not the King)."""
    extra = "".join(
        f'\n[[players]]\nname = "Player {i}"\nemail = "{address}"\n'
        for i, address in enumerate(players[3:])
    )
    return live_config(folder, stack, f"sqlite:///{folder / 'b.db'}", extra=extra)


def delivered(stack: MailStack, players: list[str], count: int, timeout: float) -> float:
    """Wait until the players' INBOXes hold `count` messages together; the time it happened."""
    clients = []
    for user in players:
        client = imaplib.IMAP4("127.0.0.1", stack.imap_port)
        client.login(user, PASSWORD)
        clients.append(client)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            total = sum(int(c.select("INBOX", readonly=True)[1][0] or 0) for c in clients)
            if total >= count:
                return time.monotonic()
            time.sleep(0.02)
    finally:
        for client in clients:
            client.logout()
    raise TimeoutError(f"the players never had {count} messages")


def burst(count: int) -> None:
    players = burst_players(count)
    senders = [players[i % len(players)] for i in range(count)]
    with tempfile.TemporaryDirectory() as folder:
        stack = MailStack(Path(folder) / "stack", [REFEREE, *players]).start()
        try:
            for index, sender in enumerate(senders):
                stack.deliver(REFEREE, mail(sender, "STATUS", f"<raw-{index}@bench>"))
            echo = Echo(stack)
            started = time.monotonic()
            echo.thread.start()
            delivered(stack, players, count, timeout=600)
            raw_rate = count / (time.monotonic() - started)
            echo.stop.set()
            echo.thread.join(10)
            settings = load_settings(burst_config(Path(folder), stack, players))
            store = Store(settings.database_url)
            referee = Referee.create(store, settings, datetime.now(UTC))
            opening = len(store.outbox(referee.game_id))  # the opening mail goes out too
            service = Service(settings, store)
            for index, sender in enumerate(senders):
                stack.deliver(REFEREE, mail(sender, "STATUS", f"<ref-{index}@bench>"))
            before = sum(inbox_size(user, stack) for user in players)
            started = time.monotonic()
            summary = service.run_once(datetime.now(UTC))
            delivered(stack, players, before + opening + count, timeout=600)
            referee_rate = count / (time.monotonic() - started)
            with Session(store.engine) as session:  # within the limits: every mail obeyed
                refused = session.exec(
                    select(func.count()).where(InboundRow.status != InboundStatus.PROCESSED)
                ).one()
            store.close()
            assert summary.processed == count, summary
            assert refused == 0, f"{refused} mails refused: the burst broke the daily limits"
        finally:
            stack.stop()
    print(
        f"burst raw fetch+reply (baseline): {raw_rate:8.1f} mail/s  ({count} mails from "
        f"{len(players)} players, at most {-(-count // len(players))} each)"
    )
    print(f"burst referee                   : {referee_rate:8.1f} mail/s  (every mail obeyed)")
    ratio = referee_rate / raw_rate
    print(f"burst ratio {ratio:.2f} ({'meets' if ratio >= 0.8 else 'misses'} the target >= 0.8)")


MEMORY_CHILD = """
import json, resource, sys
from datetime import datetime, UTC
from pathlib import Path
from referee.config import load_settings
from referee.runner import Service
from referee.store.store import Store
settings = load_settings(Path(sys.argv[1]))
store = Store(settings.database_url)
summary = Service(settings, store).run_once(datetime.now(UTC))
print(json.dumps({"processed": summary.processed,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def memory(count: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        config = base / "game.toml"
        config.write_text(CONFIG.format(language="en"), encoding="utf-8")
        settings = load_settings(config)
        store = Store(settings.database_url)
        Referee.create(store, settings, datetime.now(UTC))
        store.close()
        new = settings.maildir / "new"
        new.mkdir(parents=True, exist_ok=True)
        for index in range(count):
            body = "VOTE 301 YES\nSTATUS" if index % 3 else "RULES"
            (new / f"{index:06d}.bench").write_bytes(
                mail(PLAYER_ADDRESSES[index % 3], body, f"<m-{index}@bench>")
            )
        baseline = subprocess.run(
            [
                sys.executable,
                "-c",
                "import resource, referee.runner, referee.cli; "
                "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", MEMORY_CHILD, str(config)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        seconds = time.monotonic() - started
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    peak = figures["peak_kb"] / 1024
    print(f"memory baseline (interpreter + imports): {int(baseline.stdout) / 1024:6.1f} MB")
    print(
        f"memory peak on a {count}-mail backlog : {peak:6.1f} MB  ({figures['processed']} "
        f"processed in {seconds:.0f} s; {'meets' if peak <= 150 else 'misses'} <= 150 MB)"
    )
    _ = resource


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "which", nargs="?", default="all", choices=["latency", "burst", "memory", "all"]
    )
    parser.add_argument("--votes", type=int, default=30)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--backlog", type=int, default=10000)
    args = parser.parse_args()
    if args.which in ("latency", "all"):
        latency(args.votes)
    if args.which in ("burst", "all"):
        burst(args.burst)
    if args.which in ("memory", "all"):
        memory(args.backlog)


if __name__ == "__main__":
    main()
