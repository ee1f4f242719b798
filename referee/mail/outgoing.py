"""Build outgoing messages: text + HTML alternative, stable Message-IDs, threading (107, 205).

Every mail carries `Auto-Submitted` (auto-replied for replies, auto-generated for notices) so
that well-behaved auto-responders stay quiet, and `In-Reply-To`/`References` so that a
proposal's circulation, its reminders and its result thread together in a player's client.
A notice to every player is rendered and encoded once; only the headers differ per recipient.
Every mail names, in `X-Nomic-Chain`, the link of the game's hash chain that the mail belongs
to (its number and head), so each player holds a copy of the head at each change (213).
Every header value that comes from a player (a Subject echoed back, a display name) or from the
config (the game's and players' names) passes through one sanitiser, `header_value`.
A reply may carry files (ARCHIVE's mbox and config, 213): the text and HTML alternative is
then the first part of a multipart/mixed whose boundary, like every other byte, depends only
on the mail, so a replay makes it again byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from email import quoprimime
from email.charset import QP, Charset
from email.header import Header
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.policy import compat32
from email.utils import format_datetime
from functools import lru_cache

from referee.config import slug as slug  # re-exported: the Message-IDs' game part
from referee.core.chain import CHAIN_PENDING
from referee.core.threads import Thread
from referee.mail.render import Rendered

_TEXT = Charset("utf-8")
_TEXT.body_encoding = QP  # the plain part stays readable in a raw mbox
_HTML = Charset("utf-8")  # base64: encoded in C, and the HTML part is the long one
_NO_FOLDING = compat32.clone(max_line_length=0)  # the parts' own headers are all short


@dataclass(frozen=True)
class Envelope:
    """Who and where: the referee's identity and the message's place in its thread."""

    game: str
    address: str
    recipient: str
    recipient_name: str
    message_id: str
    at: datetime
    auto: str  # "auto-replied" | "auto-generated"
    in_reply_to: str = ""
    references: tuple[str, ...] = ()
    # Debate relayed to the table (112) reads as the game's mailing list: From the game's
    # address under the author's name ("Carla via Nomic"), and the list headers clients know.
    from_name: str = ""  # the display name in From; "" for the game's name
    list_id: str = ""  # "Game <slug.domain>"; "" for mail that is not the table's
    list_archive: str = ""  # a URL of the debate's page on the game's website
    list_unsubscribe: str = ""  # the command that stops the debate reaching this player


def domain_of(address: str) -> str:
    return address.rpartition("@")[2] or "localhost"


def message_id(game: str, address: str, *parts: object) -> str:
    """A Message-ID that depends only on the game and the event: replay makes the same ones."""
    digest = hashlib.sha256("|".join(str(p) for p in (game, *parts)).encode()).hexdigest()[:20]
    return f"<{slug(game)}.{digest}@{domain_of(address)}>"


def thread_root(game: str, address: str, thread: Thread) -> str:
    """The thread's root Message-ID, `<game.award-301@domain>`, that every mail in it cites."""
    return f"<{slug(game)}.{thread.name}@{domain_of(address)}>"


def thread_message_id(game: str, address: str, thread: Thread, *parts: object) -> str:
    """A notice's own Message-ID, naming its thread (`<game.award-301.1f2e…@domain>`), so that
    a reply citing only this mail in In-Reply-To still leads back to what it asked."""
    digest = hashlib.sha256("|".join(str(p) for p in (game, *parts)).encode()).hexdigest()[:20]
    return f"<{slug(game)}.{thread.name}.{digest}@{domain_of(address)}>"


def thread_in(reference: str, game: str) -> Thread | None:
    """The thread a Message-ID of this game's names (a root or a notice's own), if any."""
    head = f"<{slug(game)}."
    cleaned = reference.strip()
    if not cleaned.startswith(head) or "@" not in cleaned:
        return None
    inner = cleaned[len(head) : cleaned.index("@")]
    name, _, digest = inner.partition(".")
    if digest and not re.fullmatch(r"[0-9a-f]{20}", digest):
        return None
    return Thread.parse(name)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
_MSG_ID = re.compile(r"<[\x21-\x3b\x3d\x3f-\x7e]{1,900}>")
LONGEST_VALUE = 400  # characters of a header value taken from a player or the config


@lru_cache(maxsize=4_096)  # the same names and subjects come back in mail after mail
def header_value(text: str, limit: int = LONGEST_VALUE) -> str:
    """The one sanitiser for a header value that comes from a player or the config.

    Control characters (a newline would start a new header) become spaces, runs of space
    collapse, an over-long value is shortened, and anything beyond short plain ASCII is
    RFC 2047-encoded and folded, so that no line of the header passes 78 characters (RFC 5322
    allows 998; a single 8,000-character word is split into encoded words).
    """
    cleaned = " ".join(_CONTROL.sub(" ", text).split())
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    if cleaned.isascii() and "=?" not in cleaned:
        if len(cleaned) <= 60:
            return cleaned
        if all(len(word) <= 60 for word in cleaned.split()):  # folds between words
            return Header(cleaned, "us-ascii", maxlinelen=76).encode(splitchars=" ")
    return Header(cleaned, "utf-8", maxlinelen=76).encode(splitchars=" ", maxlinelen=76)


@lru_cache(maxsize=4_096)
def address_value(name: str, address: str) -> str:
    """`Name <address>` with the name sanitised and encoded; a bad address is not written."""
    if not _ADDRESS_OK.fullmatch(address):
        raise ValueError(f"not an address to write into a header: {address!r}")
    cleaned = " ".join(_CONTROL.sub(" ", name).split())[:LONGEST_VALUE]
    if not cleaned:
        return address
    return f"{header_value(cleaned)} <{address}>"


_ADDRESS_OK = re.compile(r"[!#-'*+/-9=?A-Z^-~.-]{1,64}@[A-Za-z0-9.-]{1,253}")


def message_ids(ids: tuple[str, ...]) -> str:
    """Message-IDs for In-Reply-To/References: well-formed ones only, one per folded line."""
    return "\n ".join(i for i in ids if _MSG_ID.fullmatch(i))


def list_id(name: str, key: str, address: str) -> str:
    """The game's List-Id (RFC 2919): its name, then `<key.domain>` (the key never changes)."""
    return f"{header_value(name)} <{slug(key)}.{domain_of(address)}>"


_URL_OK = re.compile(r"https?://[\x21-\x3b\x3d\x3f-\x7e]{1,900}")


def _list_headers(envelope: Envelope) -> list[tuple[str, str]]:
    """Reply-To the game, List-Id, List-Post, List-Archive and List-Unsubscribe (RFC 2369)."""
    headers = [
        ("Reply-To", address_value(envelope.game, envelope.address)),
        ("List-Id", envelope.list_id),
        ("List-Post", f"<mailto:{envelope.address}>"),
    ]
    if envelope.list_archive and _URL_OK.fullmatch(envelope.list_archive):
        headers.append(("List-Archive", f"<{envelope.list_archive}>"))
    if envelope.list_unsubscribe:
        command = envelope.list_unsubscribe.replace(" ", "%20")
        headers.append(("List-Unsubscribe", f"<mailto:{envelope.address}?subject={command}>"))
    return headers


class Body:
    """A rendered mail's encoded MIME body, made once and reused for every recipient."""

    def __init__(self, rendered: Rendered, seed: str) -> None:
        self.subject = header_value(rendered.subject)
        # A boundary derived from the content keeps replayed mail byte for byte the same.
        boundary = "=_nomic_" + hashlib.sha256(seed.encode()).hexdigest()[:24]
        self.content_headers = [
            f'Content-Type: multipart/alternative; boundary="{boundary}"'.encode("ascii")
        ]
        self.payload = alternative(rendered.text, rendered.html, boundary)
        self.wire = self.payload.replace(b"\n", b"\r\n")  # as `build` sends it, made once


def alternative(text: str, html: str, boundary: str) -> bytes:
    """The body of a multipart/alternative of `text` (quoted-printable) and `html` (base64),
    both UTF-8: the bytes the stdlib's MIMEMultipart of two MIMEText parts flattens to (with
    `_NO_FOLDING`), made with its own encoders but without building and walking the message
    objects, which cost more than rendering the mail (a test holds the two the same)."""
    plain = text.encode("utf-8")
    marked = html.encode("utf-8")
    parts = (
        ("plain", "quoted-printable", _quoted_printable(plain.decode("latin-1"))),
        ("html", "base64", _base64_lines(marked)),
    )
    out = []
    for subtype, encoding, payload in parts:
        if "\r" in payload:  # the generator makes each line end `\n` (both encoders do already)
            payload = "\n".join(_NEWLINE.split(payload))
        out.append(
            f'--{boundary}\nContent-Type: text/{subtype}; charset="utf-8"\nMIME-Version: 1.0\n'
            f"Content-Transfer-Encoding: {encoding}\n\n" + payload
        )
    return ("\n".join(out) + f"\n--{boundary}--\n").encode("ascii")


def _quoted_printable(body: str) -> str:
    """`quoprimime.body_encode(body)`, a line at a time. The stdlib encodes each line on its
    own and joins them with `\n` (a last line end kept), so with no `\r` in the body (the
    only other line end left once the encoder has quoted the rest) the lines split at `\n`
    and encoded one by one are the same text; a line of safe characters short enough is its
    own encoding, and any other line (a rule's, the footer's) comes back in mail after mail
    and is encoded once."""
    if "\r" in body:
        return quoprimime.body_encode(body)
    return "\n".join(
        [line if _QP_SAFE.fullmatch(line) else _qp_line(line) for line in body.split("\n")]
    )


# A line quoted-printable leaves as it is: at most 76 safe characters (printable ASCII but
# `=`, space, tab), not ending in a space or a tab (which would be quoted)
_QP_SAFE = re.compile(r"(?:[\t -<>-~]{0,75}[!-<>-~])?")


@lru_cache(maxsize=8_192)
def _qp_line(line: str) -> str:
    return quoprimime.body_encode(line)


def _base64_lines(data: bytes) -> str:
    """`base64mime.body_encode(data)`: lines of 76 characters, each ending in a newline. The
    stdlib encodes 57 bytes at a time; 57 being a multiple of 3, the whole encoded at once and
    cut every 76 characters is the same text, made without a Python loop over each line."""
    if not data:
        return ""
    encoded = binascii.b2a_base64(data, newline=False).decode("ascii")
    return "\n".join([encoded[at : at + 76] for at in range(0, len(encoded), 76)]) + "\n"


_NEWLINE = re.compile(r"\r\n|\r|\n")  # the generator's own (email.generator.NLCRE)


def alternative_by_the_stdlib(text: str, html: str, boundary: str) -> bytes:
    """`alternative` as the stdlib's message objects make it: what it must equal."""
    outer = MIMEMultipart("alternative")
    outer.set_boundary(boundary)
    outer.attach(MIMEText(text, "plain", _TEXT))  # type: ignore[arg-type]
    outer.attach(MIMEText(html, "html", _HTML))  # type: ignore[arg-type]
    return outer.as_bytes(policy=_NO_FOLDING).partition(b"\n\n")[2]


@dataclass(frozen=True)
class Attachment:
    """A file sent with a mail: its name as the reader saves it, its type and its bytes."""

    filename: str  # plain ASCII: "mail.mbox.gz"
    content_type: str  # "application/gzip"
    data: bytes


_FILENAME_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}")


def _mixed(body: Body, attachments: tuple[Attachment, ...], seed: str) -> tuple[list[bytes], bytes]:
    """The body with files: multipart/mixed, the text and HTML first, each file in base64."""
    digest = hashlib.sha256(seed.encode())
    for item in attachments:
        if not _FILENAME_OK.fullmatch(item.filename):
            raise ValueError(f"not a file name to write into a header: {item.filename!r}")
        digest.update(hashlib.sha256(item.data).digest())
    boundary = "=_nomic_mixed_" + digest.hexdigest()[:24]
    parts = [f"--{boundary}".encode(), *body.content_headers, b"", body.payload.rstrip(b"\n")]
    for item in attachments:
        parts += [
            f"--{boundary}".encode(),
            f"Content-Type: {item.content_type}".encode("ascii"),
            b"Content-Transfer-Encoding: base64",
            f'Content-Disposition: attachment; filename="{item.filename}"'.encode(),
            b"",
            base64.encodebytes(item.data).rstrip(b"\n"),
        ]
    parts.append(f"--{boundary}--".encode())
    head = [f'Content-Type: multipart/mixed; boundary="{boundary}"'.encode()]
    return head, b"\n".join(parts) + b"\n"


def build(
    rendered: Rendered | Body, envelope: Envelope, attachments: tuple[Attachment, ...] = ()
) -> bytes:
    body = rendered if isinstance(rendered, Body) else Body(rendered, envelope.message_id)
    content_headers, wire = body.content_headers, body.wire
    if attachments:
        content_headers, payload = _mixed(body, attachments, envelope.message_id)
        wire = payload.replace(b"\n", b"\r\n")
    headers = [
        ("From", address_value(envelope.from_name or envelope.game, envelope.address)),
        ("To", address_value(envelope.recipient_name, envelope.recipient)),
        ("Subject", body.subject),
        ("Date", _date(envelope.at, envelope.at.utcoffset())),
        ("Message-ID", envelope.message_id),
    ]
    in_reply_to = message_ids((envelope.in_reply_to,))
    if in_reply_to:
        headers.append(("In-Reply-To", in_reply_to))
    references = message_ids(envelope.references)
    if references:
        headers.append(("References", references))
    if envelope.list_id:
        headers += _list_headers(envelope)
    precedence = "bulk" if envelope.auto == "auto-generated" else "auto_reply"
    headers += [
        ("Auto-Submitted", envelope.auto),
        ("X-Auto-Response-Suppress", "All"),
        ("Precedence", "list" if envelope.list_id else precedence),
        ("MIME-Version", "1.0"),
    ]
    written = "\n".join([f"{name}: {value}" for name, value in headers])
    if "\r" in written:  # each header's own line ends made CRLF, as it was written
        lines = [
            f"{name}: {value}".replace("\r\n", "\n").replace("\n", "\r\n").encode("ascii")
            for name, value in headers
        ]
        return b"\r\n".join([*lines, CHAIN_PENDING, *content_headers, b"", wire])
    head = written.replace("\n", "\r\n").encode("ascii")
    return b"\r\n".join([head, CHAIN_PENDING, *content_headers, b"", wire])


@lru_cache(maxsize=1_024)
def _date(at: datetime, offset: object) -> str:
    """The Date header of a moment, by the moment and its offset from UTC (equal moments at
    one offset are written alike): a notice to every player is sent at one moment."""
    return format_datetime(at)
