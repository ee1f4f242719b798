"""Benchmark of direct delivery over LMTP (issue 17 item 6; rules 107, 203: replies).

The figure: the time from the LMTP hand-over of a player's mail (the client's connection
opened) to the reply's acceptance by the SMTP server (its 250), with a real `run` process
listening on `[lmtp]` and sending through `[smtp]`. Target: p50 <= 0.1 s.

Baseline, measured in the same run against the same SMTP server: a raw LMTP echo server
(aiosmtpd's LMTP, no database, no referee) that sends one reply with aiosmtplib for each mail
and then answers 250: the cost of the two hops alone. Then, in the same run, the IMAP IDLE
path for comparison (`--idle N` votes; bench/service_bench.py's latency on a real Dovecot:
SMTP submission of a vote to the reply in the player's mailbox, next to its raw IDLE echo).

    python bench/lmtp_bench.py [--mails 30] [--idle 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.utils import parseaddr
from pathlib import Path
from typing import Any

import aiosmtplib
from aiosmtpd.controller import Controller
from aiosmtpd.lmtp import LMTP

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPATH", str(ROOT))

from referee.config import load_settings  # noqa: E402
from referee.service import Referee  # noqa: E402
from referee.store.store import Store  # noqa: E402
from tests.conftest import PLAYER_ADDRESSES, REFEREE  # noqa: E402
from tests.mailstack import free_port  # noqa: E402
from tests.sink import eventually, game_config, lmtp_deliver, start_run  # noqa: E402


class Clocked:
    """An SMTP server that notes when it accepted each reply, by the mail it answers."""

    def __init__(self) -> None:
        self.accepted: dict[str, float] = {}
        self.port = free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        head = BytesHeaderParser().parsebytes(bytes(envelope.original_content or b""))
        answered = str(head.get("In-Reply-To", "")).strip()
        if answered:
            self.accepted.setdefault(answered, time.monotonic())
        return "250 OK"


def mail(index: int, prefix: str) -> tuple[str, bytes]:
    sender = PLAYER_ADDRESSES[index % len(PLAYER_ADDRESSES)]
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, REFEREE, "status"
    message["Message-ID"] = mid = f"<{prefix}-{index}@bench.example>"
    message.set_content("STATUS")
    return mid, message.as_bytes()


def measure(port: int, sink: Clocked, mails: int, prefix: str) -> list[float]:
    """Hand each mail over and wait for its reply at the SMTP server, one at a time."""
    times = []
    for index in range(mails):
        mid, raw = mail(index, prefix)
        started = time.monotonic()
        answer = lmtp_deliver(port, raw, [REFEREE], sender=parseaddr(raw.decode())[1])
        if answer[0][0] != 250:
            raise RuntimeError(f"LMTP refused the mail: {answer}")
        eventually(lambda m=mid: m in sink.accepted, 30, "the reply accepted")  # type: ignore[misc]
        times.append(sink.accepted[mid] - started)
    return times


class Echo:
    """The raw baseline: an LMTP server that sends one reply per mail, then answers 250."""

    def __init__(self, smtp_port: int) -> None:
        self.smtp_port = smtp_port
        self.port = free_port()
        self.ready = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        raw = bytes(envelope.original_content or b"")
        head = BytesHeaderParser().parsebytes(raw)
        sender = parseaddr(str(head["From"]))[1]
        reply = EmailMessage()
        reply["From"], reply["To"], reply["Subject"] = REFEREE, sender, "Re: status"
        reply["In-Reply-To"] = str(head["Message-ID"])
        reply.set_content("echo")
        await aiosmtplib.send(reply, hostname="127.0.0.1", port=self.smtp_port)
        return "\r\n".join("250 OK" for _ in envelope.rcpt_tos)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def start() -> None:
            await self.loop.create_server(lambda: LMTP(self), "127.0.0.1", self.port)
            self.ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    def __enter__(self) -> Echo:
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def figures(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return (
        f"{name:<42} p50 {statistics.median(times):6.3f} s   p90 {p90:6.3f} s   "
        f"max {ordered[-1]:6.3f} s   ({len(times)} mails)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mails", type=int, default=30)
    parser.add_argument("--idle", type=int, default=10, help="IMAP IDLE path votes; 0: none")
    args = parser.parse_args()
    sink = Clocked()
    sink.controller.start()
    try:
        with tempfile.TemporaryDirectory() as temp:
            folder = Path(temp)
            lmtp_port = free_port()
            config = game_config(folder, f"sqlite:///{folder / 'bench.db'}", smtp_port=sink.port)
            config.write_text(
                config.read_text(encoding="utf-8")
                + f"\n[lmtp]\nport = {lmtp_port}\n\n[auth]\nrequired = false\n",
                encoding="utf-8",
            )
            settings = load_settings(config)
            store = Store(settings.database_url)
            try:
                Referee.create(store, settings, datetime.now(UTC))
            finally:
                store.close()
            log = folder / "run.log"
            process = start_run([config], log)
            try:
                eventually(lambda: "taking mail over LMTP" in log.read_text(), 60, "LMTP ready")
                measure(lmtp_port, sink, 2, "warm")  # the first mail loads what it needs
                referee = measure(lmtp_port, sink, args.mails, "lmtp")
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(60)
            with Echo(sink.port) as echo:
                measure(echo.port, sink, 2, "echo-warm")
                raw = measure(echo.port, sink, args.mails, "echo")
    finally:
        sink.controller.stop()
    print("LMTP hand-over -> reply accepted by the SMTP server (target: p50 <= 0.1 s)")
    print(figures("referee (run, [lmtp] + [smtp])", referee))
    print(figures("raw LMTP echo (baseline)", raw))
    print(f"ratio of p50s: {statistics.median(referee) / statistics.median(raw):.1f}x the echo")
    if args.idle > 0:
        from bench.service_bench import latency

        print("the IMAP IDLE path, for comparison (vote submitted -> reply in the mailbox):")
        latency(args.idle)


if __name__ == "__main__":
    main()
