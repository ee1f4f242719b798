"""`replay` takes time from the receiving side only (issue 15, item 7; rules 203, 213).

Every common form of an mbox `From ` line gives the delivery time (asctime with and without a
zone, Gmail Takeout, Thunderbird, mutt, RFC 5322), and so do a Maildir's file names. A message
whose `From ` line has no date is never dated by its sender silently: replay says how many,
and `--strict` refuses the mbox. The referee's own export says after the date what the date
cannot: the exact time a message took effect and, for one read late, its delivery time.
"""

from __future__ import annotations

import json
import mailbox
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from referee.record import times
from referee.replay import from_line_time, from_line_times
from tests.conftest import REFEREE, write_config

ROOT = Path(__file__).resolve().parents[1]
PROPOSED = datetime(2026, 12, 1, 11, 0, tzinfo=UTC)
CLOSES = PROPOSED + timedelta(days=14)  # a week of debate, a week of voting
LATE = CLOSES + timedelta(hours=3)
AT = datetime(2026, 12, 15, 14, 0, 0, tzinfo=UTC)


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def mail(who: str, body: str, date: datetime) -> bytes:
    return (
        f"From: {who}@example.org\nTo: {REFEREE}\nSubject: x\nDate: {format_datetime(date)}\n"
        f"Message-ID: <{who}.{len(body)}@players.example>\n\n{body}\n"
    ).encode()


def game(late: datetime) -> list[tuple[bytes, datetime]]:
    """Carla proposes; three votes arrive at `late`, each dated by its sender a day early."""
    out = [(mail("carla", "PROPOSE ENACT\nHello.\nEND", PROPOSED), PROPOSED)]
    backdated = CLOSES - timedelta(days=1)
    for who in ("ada", "bob", "carla"):
        out.append((mail(who, "VOTE 301 YES", backdated), late))
    return out


def write(path: Path, entries: list[tuple[bytes, str]]) -> Path:
    path.write_bytes(b"".join(f"{line}\n".encode() + raw + b"\n" for raw, line in entries))
    return path


def replayed(config: Path, box: Path, *more: str) -> tuple[dict[str, Any], str]:
    done = cli("replay", config, box, "--json", "--until", "2026-12-20T12:00Z", *more)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data, done.stderr


def takeout(at: datetime) -> str:
    return f"From 1786543210987654321@xxx {at:%a %b %d %H:%M:%S} +0000 {at:%Y}"


FORMS: dict[str, Callable[[datetime], str]] = {
    "asctime (mutt, Python, Postfix)": lambda at: (
        f"From ada@example.org {at:%a %b} {at.day:2d} {at:%H:%M:%S %Y}"
    ),
    "Thunderbird": lambda at: f"From - {at:%a %b %d %H:%M:%S %Y}",
    "Gmail Takeout": takeout,
    "a zone after the year": lambda at: (
        f"From ada@example.org {at + timedelta(hours=2):%a %b %d %H:%M:%S %Y} +0200"
    ),
    "a zone name": lambda at: (
        f"From ada@example.org {at - timedelta(hours=5):%a %b %d %H:%M:%S} EST {at:%Y}"
    ),
    "no seconds": lambda at: f"From ada@example.org {at:%a %b %d %H:%M %Y}",
    "UUCP tail": lambda at: f"From ada {at:%a %b %d %H:%M:%S %Y} remote from relay",
    "RFC 5322": lambda at: f"From ada@example.org {format_datetime(at)}",
}


@pytest.mark.parametrize("form", list(FORMS))
def test_every_common_from_line_gives_the_delivery_time(form: str) -> None:
    assert from_line_time(FORMS[form](AT)) == AT


@pytest.mark.parametrize(
    "line",
    ["From ada@example.org", "From ada@example.org Mon Dec 15 14:00:00 XYZ 2026", "From - hello"],
)
def test_a_from_line_without_a_readable_time_gives_none(line: str) -> None:
    assert from_line_time(line) is None


def test_the_exports_from_line_gives_the_exact_time_it_took_effect_and_its_delivery() -> None:
    """`export-mail` writes after the date what asctime cannot say (`record.times`); any other
    From line gives no delivery time apart, and a sender cannot write one in its address."""
    took = AT + timedelta(microseconds=250000)
    early = AT - timedelta(minutes=1)
    line = FORMS["asctime (mutt, Python, Postfix)"](took) + times(took, early)
    assert line.endswith(f" effective={took.isoformat()} delivered={early.isoformat()}")
    assert from_line_times(line) == (took, early)
    assert from_line_times(FORMS["asctime (mutt, Python, Postfix)"](AT) + times(AT)) == (AT, None)
    forged = f'From "x delivered={early.isoformat()}"@evil.example Mon Dec 15 14:00:00 2026'
    assert from_line_times(forged) == (AT, None)


def test_a_takeout_mbox_is_timed_by_its_from_lines_not_the_senders_date(tmp_path: Path) -> None:
    """The attack: Gmail Takeout's `+0000` From_ lines fell back to the sender's Date, so a
    vote backdated by its sender counted after the close."""
    config = write_config(tmp_path)
    box = write(tmp_path / "takeout.mbox", [(raw, takeout(at)) for raw, at in game(LATE)])
    data, err = replayed(config, box, "--strict")
    assert data["proposals"][0]["status"] != "adopted", data["proposals"][0]
    assert "no delivery time" not in err
    on_time = write(
        tmp_path / "on-time.mbox",
        [(raw, takeout(at)) for raw, at in game(CLOSES - timedelta(seconds=1))],
    )
    data, _ = replayed(config, on_time, "--strict")
    assert data["proposals"][0]["status"] == "adopted", data["proposals"][0]


def test_mail_without_a_delivery_time_is_counted_and_refused_when_strict(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    entries = [(raw, takeout(at)) for raw, at in game(LATE)]
    entries[2] = (entries[2][0], "From bob@example.org")  # a From_ line without a date
    box = write(tmp_path / "undated.mbox", entries)
    _, err = replayed(config, box)
    assert "1 message had no delivery time" in err, err
    strict = cli("replay", config, box, "--strict")
    assert strict.returncode == 2
    assert "1 of 4 messages" in strict.stderr and "no delivery time" in strict.stderr
    assert strict.stdout == ""


def test_a_maildir_is_replayed_at_the_times_of_its_file_names(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    for name, late in (("late", LATE), ("on-time", CLOSES - timedelta(seconds=1))):
        folder = tmp_path / name
        for sub in ("new", "cur", "tmp"):
            (folder / sub).mkdir(parents=True)
        for index, (raw, at) in enumerate(game(late)):
            path = folder / "cur" / f"{int(at.timestamp())}.M{index}P7.mx:2,S"
            path.write_bytes(raw)
            os.utime(path, (0, 0))  # the name's time is the delivery, not the file's mtime
        data, err = replayed(config, folder, "--strict")
        status = data["proposals"][0]["status"]
        assert (status == "adopted") == (name == "on-time"), (name, status)
        assert "no delivery time" not in err
    box = mailbox.Maildir(str(tmp_path / "late"), create=False)
    assert len(box) == 4
