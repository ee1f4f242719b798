"""Replay an mbox of archived mail through a fresh game: how a player proves a result (213).

Every message is fed in file order at its own time (the mbox `From ` line's date, else its
`Date:` header, never earlier than the message before), with every deadline that falls due
between messages fired in order, exactly as the live service would have done. A message the
live service would set aside in quarantine (unreadable, nested too deep) is set aside here
too, by the same checks in `Referee.receive`, and named on stderr.
"""

from __future__ import annotations

import logging
import mailbox
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import parsedate_to_datetime
from pathlib import Path

from referee.archive.progress import progress_bar
from referee.config import Settings
from referee.core.model import GameState
from referee.mail import intake
from referee.record import mbox_entry
from referee.service import Referee
from referee.store.store import Store

log = logging.getLogger("referee.replay")


@dataclass(frozen=True)
class Archived:
    raw: bytes
    at: datetime | None


@dataclass(frozen=True)
class ReplayResult:
    state: GameState
    now: datetime
    messages: int
    sent: int
    failed: tuple[str, ...]
    pages: int = 0  # files of the website written, when asked for one
    link: int = 0  # the hash chain's last link and head (213)
    head: str = ""


def _from_line_time(line: str) -> datetime | None:
    words = line.split()
    if len(words) < 5:
        return None
    text = " ".join(words[-5:])
    for pattern in ("%a %b %d %H:%M:%S %Y",):
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def read_mbox(path: Path) -> list[Archived]:
    """Each message's raw bytes and time: its `From ` line's date, else its Date header."""
    if not path.is_file():
        raise FileNotFoundError(f"mbox not found: {path}")
    box = mailbox.mbox(str(path), create=False)
    out: list[Archived] = []
    try:
        for key in box.iterkeys():
            whole = box.get_bytes(key, from_=True)
            from_line, _, raw = whole.partition(b"\n")
            at = _from_line_time(from_line.decode("latin-1"))
            if at is None:
                at = _date_header(raw)
            out.append(Archived(raw, at))
    finally:
        box.close()
    return out


def _date_header(raw: bytes) -> datetime | None:
    value = BytesHeaderParser(policy=compat32).parsebytes(raw).get("Date")
    if not value:
        return None
    try:
        at = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def replay(
    settings: Settings,
    mbox: Path | list[Archived],
    until: datetime | None = None,
    out: Path | None = None,
    site: Path | None = None,
    progress: bool = False,
    render: bool = False,
    inspect: Callable[[Store, Referee], None] | None = None,
    start: datetime | None = None,
) -> ReplayResult:
    """A fresh game fed the archived mail; with `out`, every mail it sends is written there;
    with `site`, the replayed game's website is written in that folder; with `progress`, a
    long replay draws a bar on a terminal.

    The whole replay is one transaction of the in-memory store (`Store.batch`): the same
    units of work as the live service's, committed once. `mbox` may be the messages already
    read; `render` makes every mail without writing it; `inspect` sees the replayed store
    before it is thrown away (how `verify` compares); `start` is when the game began (else the
    config's `start`, else the first message's time)."""
    messages = read_mbox(mbox) if isinstance(mbox, Path) else mbox
    times = [m.at for m in messages if m.at is not None]
    start = start or settings.game.start or (times[0] if times else until) or datetime.now(UTC)
    store = Store("sqlite://")  # the replay's own throw-away store, in memory
    try:
        referee = Referee.create(store, settings, start, render=render or out is not None)
        now = start
        failed: list[str] = []
        count = 0
        with (
            store.batch(),
            progress_bar("replaying", len(messages), progress) as step,
        ):
            for item in messages:
                at = max(item.at or now, now)
                if until is not None and at > until:
                    break
                now = at
                count += 1
                try:
                    referee.receive(item.raw, at)
                except Exception as exc:  # what the live service quarantines: reported, skipped
                    mid, _, _ = intake.identify(item.raw)
                    log.error(
                        "message %s set aside, as the live service quarantines it: %s: %s",
                        mid,
                        exc.__class__.__name__,
                        exc,
                    )
                    failed.append(mid)
                step()
            if until is not None and until > now:
                now = until
            referee.advance(now)
        if out is not None:
            rows = store.outbox(referee.game_id)
            write_mbox(out, [(r.raw, r.created_at) for r in rows], settings.game.address)
        if inspect is not None:
            inspect(store, referee)
        pages = 0
        if site is not None:
            from referee.archive import Keeper

            pages = Keeper(settings, store, referee.game_id).write_site(site)
        return ReplayResult(
            referee.state,
            now,
            count,
            referee.queued,
            tuple(failed),
            pages,
            referee.link,
            referee.head,
        )
    finally:
        store.close()


def write_mbox(path: Path, messages: list[tuple[bytes, datetime]], sender: str) -> None:
    """Write the messages as an mbox, each with a `From ` line dated at its time (UTC).

    The bytes are written as they are (line ends made `\n`, a body line starting `From `
    escaped as `>From `), exactly what Python's `mailbox.mbox` writes for them, without
    parsing each message again to flatten it back.
    """
    if path.exists():
        path.unlink()
    with path.open("xb") as handle:
        for raw, at in messages:
            handle.write(mbox_entry(raw, at, sender))
