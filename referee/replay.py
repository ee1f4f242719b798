"""Replay an mbox of archived mail through a fresh game: how a player proves a result (213).

Every message is fed in file order at its delivery time, never earlier than the message
before: the time the receiving side wrote, the mbox `From ` line's date in every common form
(asctime with or without a zone, Gmail Takeout, Thunderbird, mutt, RFC 5322) or a Maildir
file's name. A message with none takes its sender's `Date:` header, and the count of such
messages is reported (`replay --strict` refuses them): a sender's clock is never trusted
silently (issue 15). Every deadline that falls due between messages fires in order, exactly
as the live service would have done. The referee's own export (`export-mail`, ARCHIVE) dates
each message when it took effect; one the referee read only after a later event carries its
delivery time after the date: the deadlines due by the time it took effect fire first, then
it is given its delivery time, as the live service did, and its reply says the same. A
message the live service would set aside in quarantine (unreadable, nested too deep) is set
aside here too, by the same checks in `Referee.receive`, and named on stderr; the answer its
sender was sent (a mail that cannot be read) is made again, byte for byte. A player's archive
(ARCHIVE) holds a stand-in in place of each mail of someone not playing (its `From ` line ends
with ` withheld`): it makes the link that mail made (`Referee.withhold`), so the chain head is
the live game's, and the count of such mails is reported (what they said cannot be checked).
"""

from __future__ import annotations

import gzip
import logging
import mailbox
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import mktime_tz, parsedate_to_datetime, parsedate_tz
from pathlib import Path

from referee.archive.progress import progress_bar
from referee.config import Settings
from referee.core.model import GameState
from referee.mail import intake
from referee.mail.auth import Authentication
from referee.private import create_private
from referee.record import DELIVERED, EFFECTIVE, WITHHELD, mbox_entry
from referee.service import STOPPED, Referee
from referee.store.store import Store

log = logging.getLogger("referee.replay")


@dataclass(frozen=True)
class Archived:
    raw: bytes
    at: datetime | None
    delivered: bool = True  # False: `at` is the sender's Date header (or None), not a delivery
    # When it was delivered, when that was before `at`: the referee read it only after a later
    # event had been logged (`export-mail` records it), and it took effect at `at`
    arrived: datetime | None = None
    withheld: bool = False  # a stand-in for a mail an archive withholds (`record.stand_in`)


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
    undated: int = 0  # messages with no delivery time: their sender's Date was used
    withheld: int = 0  # stand-ins of mail the archive withholds, taken in their mail's place
    unfollowed: tuple[int, ...] = ()  # links of stand-ins whose mail changed the game


# The date of a `From ` line as mail systems write it, after the envelope sender:
# asctime ("Mon Jan  1 12:00:00 2024": mutt, Python's mailbox, Postfix, procmail),
# Thunderbird ("From - Mon Jan 01 12:00:00 2024"), a zone before the year (Gmail Takeout:
# "Sat Jan 01 12:00:00 +0000 2024") or after it, a zone name ("EST"), no seconds, a UUCP
# "remote from host" tail; or an RFC 5322 date ("Mon, 1 Jan 2024 12:00:00 +0000").
_ZONE = r"(?:[+-]\d{4}|[A-Za-z]{1,5})"
_ASCTIME = re.compile(
    r"(?:^|\s)(?:[A-Za-z]{3},?\s+)?(?P<month>[A-Za-z]{3})\s+(?P<day>\d{1,2})\s+"
    r"(?P<time>\d{1,2}:\d{2}(?::\d{2})?)\s+(?:(?P<before>" + _ZONE + r")\s+)?"
    r"(?P<year>\d{4})(?:\s+(?P<after>" + _ZONE + r"))?(?:\s+remote\s+from\s+\S+)?\s*$"
)
_RFC5322 = re.compile(
    r"(?:^|\s)(?P<date>(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}\s+"
    r"\d{1,2}:\d{2}(?::\d{2})?\s+" + _ZONE + r")\s*$"
)


# What `export-mail` writes after the date (`record.times`): the exact time the message took
# effect, and when it was delivered if earlier, each `name=` an ISO 8601 time.
_ISO = r"\d{4}-\d{2}-\d{2}T[\d:.]+[+-]\d{2}:\d{2}"
_TIME = re.compile(r"\s+(" + EFFECTIVE + "|" + DELIVERED + ")(" + _ISO + ")")
_TIMES = re.compile(r"(?:" + _TIME.pattern + r")+\s*$")


def from_line_times(line: str) -> tuple[datetime | None, datetime | None]:
    """The time a mbox `From ` line gives its message, in UTC, and the earlier time it was
    delivered when the line records one. The time is the date after the sender (the delivery
    time, or, in the referee's own export, the time the message took effect: then an
    `effective=` after it gives that time to the microsecond, and a `delivered=` the time
    it was delivered when it was read only after a later event). None: no time that can be
    read (a zone it does not know is no time: never guessed)."""
    text = line.rstrip("\r\n")
    if not text.startswith("From "):
        return None, None
    tail = _TIMES.search(text)
    if tail is None:
        return _date_of(text[5:]), None
    said = {name: _iso(value) for name, value in _TIME.findall(tail.group(0))}
    return said.get(EFFECTIVE) or _date_of(text[5 : tail.start()]), said.get(DELIVERED)


def from_line_time(line: str) -> datetime | None:
    """The time a mbox `From ` line gives its message (see `from_line_times`)."""
    return from_line_times(line)[0]


def _iso(text: str) -> datetime | None:
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return None
    return at.astimezone(UTC) if at.tzinfo else None


def _date_of(rest: str) -> datetime | None:
    """The date of a `From ` line after its `From `, in any form `from_line_times` reads."""
    found = _ASCTIME.search(rest)
    if found is not None:
        zone = found.group("before") or found.group("after") or "+0000"
        clock = found.group("time")
        if clock.count(":") == 1:
            clock += ":00"
        stamp = f"{found.group('day')} {found.group('month')} {found.group('year')} {clock} {zone}"
        return _rfc_time(stamp)
    dated = _RFC5322.search(rest)
    return _rfc_time(dated.group("date")) if dated is not None else None


_NAMED_ZONES = {"UT", "UTC", "GMT", "Z", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST", "PDT"}


def _rfc_time(text: str) -> datetime | None:
    zone = text.split()[-1]
    if zone.isalpha() and zone.upper() not in _NAMED_ZONES:
        return None  # a zone name RFC 5322 does not define: never guessed
    parts = parsedate_tz(text)
    if parts is None:
        return None
    try:
        return datetime.fromtimestamp(mktime_tz(parts), UTC)
    except (OverflowError, ValueError, OSError):
        return None


# A body line an mbox writer escaped: `>From `, `>>From ` ... (mboxrd takes one `>` off; a
# mboxo writer escaped only `From `, which this gives back too).
_ESCAPED_FROM = re.compile(rb"(?m)^>(>*From )")


GZIP_MAGIC = b"\x1f\x8b"  # the first bytes of a gzip file (ARCHIVE's mail.mbox.gz)


def gzipped(path: Path) -> bool:
    """Whether the file at `path` is gzip-compressed (its first two bytes)."""
    with path.open("rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def read_mbox(path: Path) -> list[Archived]:
    """Each message's raw bytes and delivery time: its `From ` line's date. A message whose
    `From ` line has none takes its Date header (set by its sender), marked `dated_by_sender`
    so the caller says how many (`--strict` refuses them). A gzip-compressed mbox (ARCHIVE's
    mail.mbox.gz, as the player saved it) is read uncompressed (213)."""
    if not path.is_file():
        raise FileNotFoundError(f"mbox not found: {path}")
    if gzipped(path):
        with tempfile.TemporaryDirectory() as folder:
            plain = Path(folder) / "mail.mbox"
            with gzip.open(path, "rb") as packed, plain.open("wb") as unpacked:
                shutil.copyfileobj(packed, unpacked)
            return read_mbox(plain)
    box = mailbox.mbox(str(path), create=False)
    out: list[Archived] = []
    try:
        for key in box.iterkeys():
            whole = box.get_bytes(key, from_=True)
            from_line, _, escaped = whole.partition(b"\n")
            raw = _ESCAPED_FROM.sub(rb"\1", escaped)  # mboxrd, and mboxo's `>From ` alike
            line = from_line.decode("latin-1").rstrip("\r\n")
            withheld = line.endswith(WITHHELD)
            at, arrived = from_line_times(line.removesuffix(WITHHELD))
            if at is None:
                out.append(Archived(raw, _date_header(raw), delivered=False, withheld=withheld))
            else:
                out.append(Archived(raw, at, arrived=arrived, withheld=withheld))
    finally:
        box.close()
    return out


def read_mail(path: Path) -> list[Archived]:
    """The messages of an mbox file or a Maildir folder, each with its delivery time (a
    Maildir's: the seconds its unique name starts with, as the MTA wrote it, else the file's
    modification time, also the receiving side's)."""
    if path.is_dir():
        from referee.mail.maildir import delivered

        box = mailbox.Maildir(str(path), factory=None, create=False)
        found = []
        for key in box.iterkeys():
            name = Path(box._lookup(key))  # type: ignore[attr-defined]  # stdlib's own lookup
            whole = path / name
            found.append(Archived(whole.read_bytes(), delivered(whole.name, whole.stat().st_mtime)))
        found.sort(key=lambda item: item.at or datetime.min.replace(tzinfo=UTC))
        return found
    return read_mbox(path)


def undated(messages: list[Archived]) -> int:
    """How many messages carry no delivery time of the receiving side."""
    return sum(1 for m in messages if not m.delivered)


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
    recorded: Mapping[str, Authentication] | None = None,
) -> ReplayResult:
    """A fresh game fed the archived mail; with `out`, every mail it sends is written there;
    with `site`, the replayed game's website is written in that folder; with `progress`, a
    long replay draws a bar on a terminal.

    The whole replay is one transaction of the in-memory store (`Store.batch`): the same
    units of work as the live service's, committed once. `mbox` may be the messages already
    read; `render` makes every mail without writing it; `inspect` sees the replayed store
    before it is thrown away (how `verify` compares); `start` is when the game began (else the
    config's `start`, else the first message's time)."""
    messages = read_mail(mbox) if isinstance(mbox, Path) else mbox
    quiet = _Stopped()
    logging.getLogger("referee").addFilter(quiet)
    try:
        return _replay(
            settings, messages, until, out, site, progress, render, inspect, start, recorded
        )
    finally:
        logging.getLogger("referee").removeFilter(quiet)
        if quiet.count:
            log.warning(
                "%d mail(s) stopped by the screening checks (people not playing, forgeries), "
                "as the live service stopped them",
                quiet.count,
            )


class _Stopped(logging.Filter):
    """Counts, instead of logging one line each, the mails a replay's screening stops: in a
    replay they are the record's, said once at the end, not news (new-user review)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == STOPPED:
            self.count += 1
            return False
        return True


def _replay(
    settings: Settings,
    messages: list[Archived],
    until: datetime | None,
    out: Path | None,
    site: Path | None,
    progress: bool,
    render: bool,
    inspect: Callable[[Store, Referee], None] | None,
    start: datetime | None,
    recorded: Mapping[str, Authentication] | None,
) -> ReplayResult:
    times = [m.at for m in messages if m.at is not None]
    start = start or settings.game.start or (times[0] if times else until) or datetime.now(UTC)
    store = Store("sqlite://")  # the replay's own throw-away store, in memory
    try:
        referee = Referee.create(store, settings, start, render=render or out is not None)
        referee.recorded = recorded or {}  # intake's verdicts, by message digest (verify)
        referee.site = site if settings.game.site_url else None  # ARCHIVE's files, if linked
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
                if item.arrived is not None:  # read late: what was logged before it, first
                    referee.advance(at)
                try:
                    delivered = at if item.arrived is None else item.arrived
                    if item.withheld:
                        referee.withhold(item.raw, delivered)
                    else:
                        referee.receive(item.raw, delivered)
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
            write_mbox(out, store.outbox_mail(referee.game_id), settings.game.address)
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
            undated(messages),
            referee.withheld,
            tuple(referee.unfollowed),
        )
    finally:
        store.close()


def write_mbox(path: Path, messages: list[tuple[bytes, datetime]], sender: str) -> None:
    """Write the messages as an mbox, each with a `From ` line dated at its time (UTC).

    The bytes are written as they are (line ends made `\n`, a line starting `From ` after any
    `>` escaped by one more `>`, as mboxrd does, so `read_mbox` gives every message back byte
    for byte), without parsing each message again to flatten it back.
    """
    if path.exists():
        path.unlink()
    with create_private(path) as handle:  # players' mail: mode 0600
        for raw, at in messages:
            handle.write(mbox_entry(raw, at, sender))
