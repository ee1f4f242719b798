"""The game's record as mail: `export-mail` for the operator, ARCHIVE for a player (213).

Rule 213 lets a subject accuse the King of falsifying a result; the proof is the mail. This
module writes the record out of the hash chain's stored messages:

- `export_mail` writes every message the referee received (each chain link of a mail, in link
  order) as an mbox whose `From ` lines carry the time each took effect, and, when asked, the
  mail the referee sent (the outbox's sent rows). That mbox is what `verify` replays: an
  untouched game passes. It holds strangers' mail too, so it is the operator's, not the table's.
  A `From ` line whose time is not the whole story carries it after the date (`times`): the
  exact time it took effect when that is not a whole second (`effective=`), and when it was
  delivered when it was read after a later event had been logged (`delivered=`), so a replay
  fires the same deadlines before it, takes it at the same time and answers it in the same
  words.
- `archive` makes ARCHIVE's two attachments: the players' mail (each chain message whose
  sender was a player when it arrived and was shown to be its author; a stranger's mail, a
  forgery in a player's name and a player's mail to someone else resent here are never in it)
  as an mbox compressed with gzip, byte for byte the same in a replay (mtime 0), and the game's
  config without secrets: only what a replay needs, never [imap], [smtp], [database], [dkim],
  a password or a file path.

Every message is written in its canonical form (`chain.canonical_mail`), so the bytes do not
depend on whether it came from a Maildir with CRLF line ends or from a player's mbox.
"""

from __future__ import annotations

import gzip
import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import tomli_w

from referee.config import Settings
from referee.core import chain
from referee.mail.parse import parse_message
from referee.store.store import Store, StoreError
from referee.store.tables import OutboxStatus

MAILBOX = "mail.mbox.gz"  # ARCHIVE's attachments, as the player saves them
CONFIG = "game.toml"
NOBODY = "MAILER-DAEMON"  # the `From ` line's sender of a message without a readable one


EFFECTIVE = "effective="  # a `From ` line's exact time of effect, when not a whole second
DELIVERED = "delivered="  # a `From ` line's delivery time, when earlier than it took effect


_FROM_LINE = re.compile(rb"(?m)^(>*From )")  # mboxrd: every such line escaped by one `>`


def mbox_entry(raw: bytes, at: datetime, sender: str, tail: str = "") -> bytes:
    """One message of an mbox: its `From ` line (with `tail` after the date, see `times`), its
    escaped bytes and the blank line after. The escaping is mboxrd's: a line that starts with
    `From ` after any number of `>` gets one more, so a reader takes exactly one off
    (`replay.read_mbox`) and every message comes back byte for byte, a `>From ` line of its
    own included."""
    stamp = _utc(at)
    body = _FROM_LINE.sub(rb">\1", raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
    if not body.endswith(b"\n"):
        body += b"\n"
    line = f"From {sender} {time.asctime(stamp.timetuple())}{tail}\n"
    return line.encode() + body + b"\n"


def times(at: datetime, delivered: datetime | None = None) -> str:
    """What a received message's `From ` line says after its date (asctime, to the second):
    nothing when that date is all, else ` effective=` with the exact time it took effect
    (ISO 8601, UTC) when it is not a whole second, and ` delivered=` with the time it was
    delivered when that was earlier (it was read after a later event had been logged)."""
    stamp = _utc(at)
    tail = f" {EFFECTIVE}{stamp.isoformat()}" if stamp.microsecond else ""
    if delivered is not None and _utc(delivered) != stamp:
        tail += f" {DELIVERED}{_utc(delivered).isoformat()}"
    return tail


def _utc(at: datetime) -> datetime:
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def sender_of(raw: bytes) -> str:
    """The sender a message names in From (its headers only), or "" when there is none."""
    try:
        return parse_message(raw, headers_only=True).sender
    except Exception:  # any bytes at all may have been received: no sender to name
        return ""


def received_entry(raw: bytes, at: datetime, delivered: datetime | None = None) -> bytes:
    """A received message as the record writes it: canonical bytes, dated when it took effect
    (and when it was delivered, when that was earlier: `times`)."""
    return mbox_entry(chain.canonical_mail(raw), at, sender_of(raw) or NOBODY, times(at, delivered))


@dataclass(frozen=True)
class Exported:
    received: int
    sent: int = 0
    sent_path: Path | None = None


def sent_path(out: Path) -> Path:
    """Where `--sent` writes the referee's mail: `.sent` before the suffix of `out`
    (`record.mbox` -> `record.sent.mbox`; `record` -> `record.sent`)."""
    if out.suffix:
        return out.with_name(f"{out.stem}.sent{out.suffix}")
    return out.with_name(f"{out.name}.sent")


def export_mail(store: Store, settings: Settings, out: Path, sent: bool = False) -> Exported:
    """Write what the referee received (and, with `sent`, what it sent) as mbox files.

    Reads the store, never writes it (`StoreError` when the game is not in it). An earlier
    export at `out` is replaced whole: the file is written beside it, then moved into place."""
    game_id = store.game_id(settings.game.key)
    if game_id is None:
        raise StoreError(f"no game {settings.game.key!r} in the database: run init first")
    links = [
        (r.raw, r.at, chain.delivered_of(r.record))
        for r in store.chain(game_id)
        if r.kind == "mail" and r.raw
    ]
    _write(out, (received_entry(*link) for link in links))
    if not sent:
        return Exported(len(links))
    rows = store.outbox(game_id, OutboxStatus.SENT.value)
    address = settings.game.address
    target = sent_path(out)
    _write(target, (mbox_entry(r.raw, r.sent_at or r.created_at, address) for r in rows))
    return Exported(len(links), len(rows), target)


def _write(path: Path, entries: Iterable[bytes]) -> None:
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("wb") as handle:
        for entry in entries:
            handle.write(entry)
    partial.replace(path)


def archive_mbox(
    messages: Iterable[tuple[bytes, datetime, datetime | None]],
) -> tuple[bytes, int]:
    """The players' mail as ARCHIVE attaches it: an mbox, gzip-compressed with no file name
    and mtime 0, so the same mail makes the same bytes; and how many messages it holds. Each
    message comes with the time it took effect and, when earlier, the time it was delivered."""
    entries = [received_entry(*message) for message in messages]
    return gzip.compress(b"".join(entries), compresslevel=9, mtime=0), len(entries)


def public_config(settings: Settings, started: datetime) -> str:
    """The game's config as a player may hold it: what a replay needs, nothing secret.

    [game] without file paths (the archive and the site folders), its start the time the game
    really began; [[players]]; [parameters]; [limits]; [auth] without server names' secrets
    (it has none: which receiving servers are trusted and whether mail must be authenticated).
    Never [imap], [smtp], [database], [maildir], [dkim], [log] or [metrics]."""
    game = settings.game
    ruleset = game.ruleset if game.ruleset == "builtin" else Path(game.ruleset).name
    table: dict[str, object] = {
        "name": game.name,
        "address": game.address,
        "language": game.language,
        "ruleset": ruleset,
        "timezone": game.timezone,
        "start": started.astimezone(UTC),
        "max_mail_bytes": game.max_mail_bytes,
    }
    if game.id:  # else the key is the name's slug, the same in the copy
        table["id"] = game.id
    if game.site_url:
        table["site_url"] = game.site_url
    data: dict[str, object] = {
        "game": table,
        "players": [
            {"name": p.name, "surname": p.surname, "email": p.email, "king": p.king}
            for p in settings.players
        ],
        "parameters": {name: int(value) for name, value in settings.parameters},
        "limits": asdict(settings.limits),
        "auth": {
            "required": settings.auth.required,
            "trusted_authserv_id": list(settings.auth.trusted_authserv_id),
            "verify_dkim": settings.auth.verify_dkim,
        },
    }
    head = [
        f"# {game.name}: the game's config as a player holds it (ARCHIVE), without secrets.",
        "# With the mail in mail.mbox.gz (gunzip it first):",
        "#   nomic-referee replay game.toml mail.mbox",
        "# The mail of anyone not playing is never shared, so a request to join is missing",
        "# from it, and with it the link of the chain that mail made.",
    ]
    if ruleset != "builtin":
        head.append(f"# The ruleset {ruleset!r} is the game's own: its first mail holds the rules.")
    return "\n".join(head) + "\n\n" + tomli_w.dumps(data)


def shown_size(size: int) -> str:
    """A size as a reader takes it in: `850 kB`, `4.2 MB`."""
    if size < 1_000_000:
        return f"{max(1, round(size / 1000))} kB"
    return f"{size / 1_000_000:.1f} MB"
