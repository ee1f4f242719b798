"""Black-box attack tools: mail written as a hostile player would, fed through the CLI (issue 15).

Each test builds real mail, puts it where the referee reads it (an mbox for `replay`, the
Maildir for `run --once`) and looks only at what comes out: the JSON state, the mail sent,
the archive, the website.
"""

from __future__ import annotations

import json
import mailbox
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage, Message
from email.utils import format_datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "game-en.toml"  # Ada (King), Bob, Carla; starts 1 Dec 09:00 UTC
OPEN = datetime(2026, 12, 1, 11, 0, tzinfo=UTC)
ADA, BOB, CARLA = "ada@example.org", "bob@example.org", "carla@example.org"
REFEREE = "referee@nomic.example"


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=180,
    )


def message(
    sender: str,
    body: str,
    *,
    subject: str = "Nomic",
    mid: str,
    at: datetime = OPEN,
    to: str = REFEREE,
    headers: tuple[tuple[str, str], ...] = (),
) -> EmailMessage:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = sender, to, subject
    mail["Date"], mail["Message-ID"] = format_datetime(at), mid
    for name, value in headers:
        mail[name] = value
    mail.set_content(body, cte="base64")  # every byte arrives as written, controls too
    return mail


@dataclass
class Mbox:
    """An mbox being written, one message at a time, each at its own delivery time."""

    path: Path
    at: datetime = OPEN
    count: int = 0
    raw: list[tuple[bytes, datetime]] = field(default_factory=list)

    def add(self, sender: str, body: str, later: timedelta = timedelta(hours=1), **kw: Any) -> str:
        self.at += later
        self.count += 1
        mid = str(kw.pop("mid", f"<attack-{self.count}@example.org>"))
        mail = message(sender, body, mid=mid, at=self.at, **kw)
        self.add_raw(mail.as_bytes(), self.at)
        return mid

    def add_raw(self, raw: bytes, at: datetime) -> None:
        self.raw.append((raw, at))
        box = mailbox.mbox(str(self.path))
        try:
            entry = mailbox.mboxMessage(raw)
            entry.set_from(REFEREE, at.timetuple())
            box.add(entry)
            box.flush()
        finally:
            box.close()


@dataclass
class Replayed:
    state: dict[str, Any]
    sent: list[Message]
    stderr: str

    def proposal(self, number: int) -> dict[str, Any]:
        return next(p for p in self.state["proposals"] if p["number"] == number)

    def replies_to(self, address: str) -> list[str]:
        """The text of every reply the referee sent `address`, in order."""
        return [
            text_of(m)
            for m in self.sent
            if address in str(m["To"]) and str(m["Subject"]).startswith("Re")
        ]


def replay(box: Mbox, config: Path = EXAMPLE, *extra: str | Path) -> Replayed:
    out = box.path.with_suffix(".sent.mbox")
    done = cli("replay", config, box.path, "--json", "--out", out, *extra)
    assert done.returncode == 0, done.stderr
    return Replayed(json.loads(done.stdout), list(mailbox.mbox(str(out))), done.stderr)


def text_of(mail: Message) -> str:
    """The decoded text/plain part of a mail."""
    for part in mail.walk():
        if part.get_content_type() == "text/plain":
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            return payload.decode(part.get_content_charset() or "utf-8")
    return ""
