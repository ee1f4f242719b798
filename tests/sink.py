"""Test kit for intake and ownership tests: a recording SMTP server, configs, `run` processes.

The SMTP server is a real aiosmtpd server that keeps every message it accepts in memory
(instead of delivering into Dovecot), so tests can count answers quickly. `lmtp_deliver` is
an MTA's LMTP client: one transaction, and the answer for each recipient (smtplib's LMTP
reads only one answer after the data).
"""

from __future__ import annotations

import os
import re
import smtplib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller

from tests.conftest import CONFIG
from tests.mailstack import free_port


class _Keep:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        data = bytes(envelope.original_content or b"")
        with self.sink.lock:
            for recipient in envelope.rcpt_tos:
                self.sink.mails.append((str(recipient), data))
        return "250 OK kept"


class Sink:
    """An SMTP server on a free loopback port that keeps (recipient, raw) of every mail."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.mails: list[tuple[str, bytes]] = []
        self.port = free_port()
        self.controller = Controller(_Keep(self), hostname="127.0.0.1", port=self.port)

    def parsed(self) -> list[EmailMessage]:
        with self.lock:
            raws = [raw for _, raw in self.mails]
        out = []
        for raw in raws:
            message = message_from_bytes(raw, policy=policy.default)
            assert isinstance(message, EmailMessage)
            out.append(message)
        return out

    def answered(self) -> list[str]:
        """The In-Reply-To of every mail sent (what each reply answers)."""
        return [str(m["In-Reply-To"]) for m in self.parsed() if m["In-Reply-To"]]


@contextmanager
def recording_sink() -> Iterator[Sink]:
    server = Sink()
    server.controller.start()
    try:
        yield server
    finally:
        server.controller.stop()


def game_config(
    folder: Path,
    url: str,
    name: str = "Test Nomic",
    smtp_port: int | None = None,
    game_extra: str = "",
    start: str | None = None,
) -> Path:
    """The standard game in `folder`, on database `url`, with a Maildir there, and [smtp]
    pointing at `smtp_port` when given."""
    folder.mkdir(parents=True, exist_ok=True)
    text = CONFIG.format(language="en").replace('name = "Test Nomic"', f'name = "{name}"')
    text = text.replace('url = "sqlite:///nomic.db"', f'url = "{url}"')
    if start is not None:
        text = text.replace('start = "2026-12-01T09:00:00+00:00"', f'start = "{start}"')
    if game_extra:
        text = text.replace("[game]\n", f"[game]\n{game_extra}\n", 1)
    if smtp_port is not None:
        text += f'\n[smtp]\nhost = "127.0.0.1"\nport = {smtp_port}\nsecurity = "none"\n'
    path = folder / "game.toml"
    path.write_text(text, encoding="utf-8")
    return path


def start_run(configs: list[Path], log: Path, *options: str) -> subprocess.Popen[bytes]:
    """`nomic-referee run CONFIG...` as its own process group, output to `log`."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from referee.cli import main; main()",
            "run",
            *map(str, configs),
            *options,
        ],
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def eventually(check: Callable[[], bool], seconds: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"did not come true in {seconds:.0f} s: {what}")


def lmtp_deliver(
    port: int, raw: bytes, recipients: list[str], sender: str = "player@example.org"
) -> list[tuple[int, str]]:
    """Hand `raw` over as an MTA does over LMTP; (code, text) for each recipient, in order
    (a recipient refused at RCPT keeps that answer)."""
    with smtplib.LMTP("127.0.0.1", port, timeout=60) as client:
        client.ehlo_or_helo_if_needed()
        code, text = client.mail(sender)
        if code != 250:
            return [(code, text.decode())] * len(recipients)
        answers: list[tuple[int, str] | None] = []
        for recipient in recipients:
            code, text = client.rcpt(recipient)
            answers.append(None if code == 250 else (code, text.decode()))
        if any(a is None for a in answers):
            code, text = client.docmd("DATA")
            assert code == 354, (code, text)
            data = re.sub(rb"(?m)^\.", b"..", re.sub(rb"\r?\n", b"\r\n", raw))
            client.send(data + (b"" if data.endswith(b"\r\n") else b"\r\n") + b".\r\n")
            for index, answer in enumerate(answers):
                if answer is None:
                    code, text = client.getreply()
                    answers[index] = (code, text.decode())
    return [a for a in answers if a is not None]


def play_by_maildir(
    store: Any,
    settings: Any,
    start: datetime,
    mails: Sequence[tuple[bytes, datetime, str]],
    crlf: bool = False,
) -> int:
    """The game created at `start`, then each mail dropped into its Maildir, dated at its time
    (the file's mtime, as an MTA leaves it; CRLF line ends with `crlf`, as a server delivers
    them) and read by `run --once` at that time: the live service as cron runs it. Returns
    the game's id."""
    from referee.runner import Service
    from referee.service import Referee

    Referee.create(store, settings, start)
    service = Service(settings, store)
    new = settings.maildir / "new"
    new.mkdir(parents=True, exist_ok=True)
    for index, (raw, at, _sender) in enumerate(mails):
        path = new / f"{index:04d}.mail"
        path.write_bytes(raw.replace(b"\n", b"\r\n") if crlf else raw)
        os.utime(path, (at.timestamp(), at.timestamp()))
        service.run_once(at)
    return service.game_id
