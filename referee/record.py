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
- `archive_mbox` makes ARCHIVE's first attachment: the players' mail (each chain message whose
  sender was a player when it arrived and was shown to be its author, and the request to join
  and its confirmation of a newcomer the King admitted) as an mbox compressed with gzip, byte
  for byte the same in a replay (mtime 0). Every other message the chain holds (a stranger's
  mail, a forgery in a player's name, a player's mail to someone else resent here) is withheld:
  in its place stands a `stand_in`, which holds none of its words, sender or subject, only what
  its link binds besides them (when it took effect, the SHA-256 of its bytes, the sender's
  authentication verdict, how many events it caused and the state's digest after it), so a
  replay makes the same link and the same chain head (`Referee.withhold`).
  `public_config` is the second: the game's config without secrets, only what a replay needs,
  never [imap], [smtp], [database], [dkim], a password or a file path.
- `publish_archive` writes an archive too large for a mail into the website's folder, under a
  path named by the SHA-256 of the packed bytes (`archive/<sha256>/`), linked from no page.

Every message is written with `\n` line ends (`chain.line_form`), so the bytes do not depend on
whether it came from a Maildir with CRLF line ends or from a player's mbox; its own `>From `
lines are kept as written and escaped as mboxrd does, never read as an escape.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from functools import lru_cache
from pathlib import Path

import tomli_w

from referee.config import Settings
from referee.core import chain
from referee.core.model import GameState, RequestStatus
from referee.core.rebuild import rebuild_from
from referee.mail.parse import parse_message
from referee.private import create_private
from referee.store.store import Store, StoreError, UnitOfWork
from referee.store.tables import OutboxStatus

MAILBOX = "mail.mbox.gz"  # ARCHIVE's attachments, as the player saves them
CONFIG = "game.toml"
NOBODY = "MAILER-DAEMON"  # the `From ` line's sender of a message without a readable one


EFFECTIVE = "effective="  # a `From ` line's exact time of effect, when not a whole second
DELIVERED = "delivered="  # a `From ` line's delivery time, when earlier than it took effect
WITHHELD = " withheld"  # the end of a stand-in's `From ` line: a mail withheld from the archive
ARCHIVE_FOLDER = "archive"  # the site's folder of archives too large for a mail


_FROM_LINE = re.compile(rb"(?m)^(>*From )")  # mboxrd: every such line escaped by one `>`


def mbox_entry(raw: bytes, at: datetime, sender: str, tail: str = "") -> bytes:
    """One message of an mbox: its `From ` line (with `tail` after the date, see `times`), its
    escaped bytes and the blank line after. The escaping is mboxrd's: a line that starts with
    `From ` after any number of `>` gets one more, so a reader takes exactly one off
    (`replay.read_mbox`) and every message comes back byte for byte, a `>From ` line of its
    own included."""
    body = b"\n".join(raw.split(b"\r\n"))  # `raw.replace(b"\r\n", b"\n")`, made faster
    if b"\r" in body:  # a lone CR: else the second pass would only copy the bytes
        body = body.replace(b"\r", b"\n")
    if b"From " in body:  # else nothing to escape: the regex would only copy the bytes
        body = _FROM_LINE.sub(rb">\1", body)
    end = b"\n" if body.endswith(b"\n") else b"\n\n"
    return b"".join((_from_line(sender, at, tail), body, end))


@lru_cache(maxsize=1_024)
def _from_line(sender: str, at: datetime, tail: str) -> bytes:
    """A `From ` line: the sender, the date in UTC (asctime) and `tail`. An equal moment is the
    same instant, written alike in UTC: the mail of one notice is queued at one moment."""
    return f"From {sender} {time.asctime(_utc(at).timetuple())}{tail}\n".encode()


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
    return mbox_entry(chain.line_form(raw), at, sender_of(raw) or NOBODY, times(at, delivered))


@dataclass(frozen=True)
class Exported:
    received: int
    sent: int = 0
    sent_path: Path | None = None
    withheld: int = 0  # of `received`, stand-ins of mail of people not playing


def sent_path(out: Path) -> Path:
    """Where `--sent` writes the referee's mail: `.sent` before the suffix of `out`
    (`record.mbox` -> `record.sent.mbox`; `record` -> `record.sent`)."""
    if out.suffix:
        return out.with_name(f"{out.stem}.sent{out.suffix}")
    return out.with_name(f"{out.name}.sent")


def shared_mail(work: UnitOfWork, state: GameState) -> Callable[[bytes], bool]:
    """Whether ARCHIVE shares a message the chain holds whole (213): a player's mail to the
    game as themselves, and the request to join and its confirmation of a newcomer the
    King admitted (the confirmation mail told them so). Every other is withheld."""
    keys = work.players_mail_keys()
    keys |= work.joining_mail_keys(admitted(state))
    return lambda raw: _dedupe_key(raw) in keys


def admitted(state: GameState) -> list[str]:
    """The addresses of the newcomers the King admitted (201): their joining mail is shared."""
    return [r.email for r in state.requests if r.status is RequestStatus.ADMITTED]


def _dedupe_key(raw: bytes) -> str:
    """The dedupe key of a message the chain holds (as intake made it), or "" if unreadable."""
    try:
        return parse_message(raw, headers_only=True).dedupe_key
    except Exception:  # a link's bytes were read once; nothing to match if they no longer are
        return ""


def export_mail(
    store: Store, settings: Settings, out: Path, sent: bool = False, players_only: bool = False
) -> Exported:
    """Write what the referee received (and, with `sent`, what it sent) as mbox files; with
    `players_only`, the received mail as ARCHIVE gives it (the players' mail, a stand-in for
    every other), uncompressed.

    Reads the store, never writes it (`StoreError` when the game is not in it). An earlier
    export at `out` is replaced whole: the file is written beside it, then moved into place."""
    game_id = store.game_id(settings.game.key)
    if game_id is None:
        raise StoreError(f"no game {settings.game.key!r} in the database: run init first")
    if players_only:
        snapshot, seq = store.snapshot(game_id)
        state = rebuild_from(snapshot, store.events(game_id, after=seq))
        with store.unit(game_id) as work:
            shared = shared_mail(work, state)
            entries, withheld = players_entries(work.mail_links(), shared, settings.game.language)
        _write(out, entries)
        return Exported(len(entries), withheld=withheld)
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
    partial.unlink(missing_ok=True)
    with create_private(partial) as handle:  # players' mail: mode 0600
        for entry in entries:
            handle.write(entry)
    partial.replace(path)


@dataclass(frozen=True)
class Archive:
    """ARCHIVE's mbox, packed, and what it holds."""

    packed: bytes  # the mbox, gzip-compressed
    shared: int  # messages in it whole
    withheld: int  # messages in it as a stand-in

    @property
    def digest(self) -> str:
        """The SHA-256 of the packed bytes: the name of its folder on the site."""
        return hashlib.sha256(self.packed).hexdigest()


def archive_mbox(
    links: Iterable[tuple[bytes, datetime, str]], shared: Callable[[bytes], bool], language: str
) -> Archive:
    """ARCHIVE's mbox (213): `players_entries`, gzip-compressed with no file name and mtime 0,
    so the same mail makes the same bytes."""
    entries, withheld = players_entries(links, shared, language)
    packed = gzip.compress(b"".join(entries), compresslevel=9, mtime=0)
    return Archive(packed, len(entries) - withheld, withheld)


def players_entries(
    links: Iterable[tuple[bytes, datetime, str]], shared: Callable[[bytes], bool], language: str
) -> tuple[list[bytes], int]:
    """Every mail link of the chain in order as an mbox entry: the mail whole when `shared`
    says so, else its stand-in; and how many are stand-ins. Each link comes as its stored
    message, the time it took effect and its record. A link whose message is already a
    stand-in (the game is a replay of an archive) keeps it, so the replay's ARCHIVE is the
    live one's, byte for byte."""
    entries: list[bytes] = []
    withheld = 0
    for raw, at, text in links:
        delivered = chain.delivered_of(text)
        if chain.mail_digest(raw) != _bound_digest(text):
            entries.append(withheld_entry(raw, at, delivered))
        elif shared(raw):
            entries.append(received_entry(raw, at, delivered))
            continue
        else:
            entries.append(withheld_entry(stand_in(text, language), at, delivered))
        withheld += 1
    return entries, withheld


def _bound_digest(text: str) -> str:
    """The SHA-256 of the message a link's record binds ("" when it names none)."""
    try:
        fields = json.loads(text)
    except ValueError:
        return ""
    value = fields.get("raw") if isinstance(fields, dict) else None
    return value if isinstance(value, str) else ""


# The headers of a stand-in: what its link binds besides the mail's bytes (see `stand_in`).
_DIGEST, _AUTH, _EVENTS, _STATE = (
    "X-Withheld-Digest",
    "X-Withheld-Authentication",
    "X-Withheld-Events",
    "X-Withheld-State",
)
_STAND_IN_WORDS = {
    "en": (
        "Withheld mail",
        "The mail of someone not playing, withheld from the players' record (213): only when it "
        "took effect, the SHA-256 of its bytes, the referee's verdict on its sender, how many "
        "events it caused and the digest of the game's state after it, so that a replay makes "
        "the same link of the chain.",
    ),
    "it": (
        "Mail omessa",
        "La mail di chi non gioca, omessa dall'archivio dei giocatori (213): restano solo "
        "quando ha avuto effetto, lo SHA-256 dei suoi byte, il giudizio dell'arbitro sul "
        "mittente, quanti eventi ha causato e l'impronta dello stato del gioco dopo di essa, "
        "perché una ripetizione faccia lo stesso anello della catena.",
    ),
}


@dataclass(frozen=True)
class StandIn:
    """What a stand-in says of the mail it replaces (see `stand_in`)."""

    digest: str  # the SHA-256 the link binds for the mail (`chain.mail_digest`)
    authentication: dict[str, object] | None  # the sender's verdict the link binds, if any
    events: int  # how many events the mail caused (0 for all but a confirmed request)
    state: str  # the digest of the state after it


def stand_in(text: str, language: str) -> bytes:
    """The stand-in for a withheld mail, from its link's record `text`: a message with none of
    the mail's words, sender or subject, holding what the link binds besides its bytes. The
    sender's authentication verdict is the referee's (`DKIM d=example.org`), which may name
    the domain that signed the mail, never the address."""
    fields = json.loads(text)
    subject, body = _STAND_IN_WORDS.get(language, _STAND_IN_WORDS["en"])
    auth = fields.get("auth")
    lines = [
        f"Subject: {subject}",
        f"{_DIGEST}: {fields.get('raw')}",
        f"{_AUTH}: {chain.canonical(auth) if auth is not None else 'none'}",
        f"{_EVENTS}: {len(fields.get('events') or [])}",
        f"{_STATE}: {fields.get('state')}",
        "",
        body,
    ]
    return "\n".join(lines).encode("utf-8")


def read_stand_in(raw: bytes) -> StandIn:
    """What a stand-in says (`stand_in`); ValueError when it is not one."""
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    digest, auth = str(headers.get(_DIGEST, "")).strip(), str(headers.get(_AUTH, "")).strip()
    state = str(headers.get(_STATE, "")).strip()
    if not re.fullmatch(r"[0-9a-f]{64}", digest) or not state:
        raise ValueError("not a stand-in of a withheld mail: no SHA-256 of the mail")
    verdict = None if auth in ("", "none") else json.loads(auth)
    if verdict is not None and not isinstance(verdict, dict):
        raise ValueError("a stand-in's authentication verdict is not a table")
    return StandIn(digest, verdict, int(str(headers.get(_EVENTS, "0")).strip() or 0), state)


def withheld_entry(raw: bytes, at: datetime, delivered: datetime | None = None) -> bytes:
    """A stand-in as the mbox holds it: its `From ` line ends with ` withheld`, which no mail
    can write (the line is the referee's), so a replay knows it from the mail it stands for."""
    tail = times(at, delivered) + WITHHELD
    return mbox_entry(chain.line_form(raw), at, NOBODY, tail)


def publish_archive(site: Path, archive: Archive, config: str) -> str:
    """Write an archive too large for a mail into the website's folder, as
    `archive/<sha256 of the packed mbox>/mail.mbox.gz` and `game.toml` beside it, and an empty
    `archive/index.html` so a listing of the folder shows none of them; no page, sitemap or
    feed of the site links them. Returns the folder's path under the site. The name is the
    archive's SHA-256: only someone who holds every byte can work it out, and a replay of the
    archive writes the same files under the same name. Files already there are not rewritten."""
    folder = site / ARCHIVE_FOLDER / archive.digest
    folder.mkdir(parents=True, exist_ok=True)
    _keep(site / ARCHIVE_FOLDER / "index.html", _BLANK_PAGE)
    _keep(folder / MAILBOX, archive.packed)
    _keep(folder / CONFIG, config.encode("utf-8"))
    return f"{ARCHIVE_FOLDER}/{archive.digest}"


_BLANK_PAGE = b'<!doctype html>\n<meta charset="utf-8">\n<meta name="robots" content="noindex">\n'


def _keep(path: Path, data: bytes) -> None:
    """Write `data` at `path` unless it holds them already (beside it, then moved into place)."""
    if path.is_file() and path.read_bytes() == data:
        return
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    partial.replace(path)


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
        "# With the mail in mail.mbox.gz (read as it is) and the referee's mail you hold:",
        "#   nomic-referee verify game.toml mail.mbox.gz --no-database --sent INBOX.mbox",
        "# The mail of anyone not playing is never shared: a stand-in holds its place, with",
        "# only what its link of the chain binds besides the mail (its time, its SHA-256).",
    ]
    if ruleset != "builtin":
        head.append(f"# The ruleset {ruleset!r} is the game's own: its first mail holds the rules.")
    return "\n".join(head) + "\n\n" + tomli_w.dumps(data)


def shown_size(size: int) -> str:
    """A size as a reader takes it in: `850 kB`, `4.2 MB`."""
    if size < 1_000_000:
        return f"{max(1, round(size / 1000))} kB"
    return f"{size / 1_000_000:.1f} MB"
