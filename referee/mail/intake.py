"""What the referee checks on a mail before it reads it whole (rules 107, 212, 213).

The live service and `replay` both go through these, so a mail is judged the same way in
both: a message nested deeper than any mail client writes is refused before parsing (Python's
parser would give up at a depth that depends on the caller's stack), a message larger than the
game's limit is read only up to its headers, and a message that could not be processed is
named in the log by what its headers say, never by a second full parse. `read` is the one way
a mail is parsed for play: whatever stops it is an `Unreadable` with a typed reason, which the
referee names to the sender in plain words (`Referee.receive`).
"""

from __future__ import annotations

import enum
import re

from referee.mail.parse import InboundMail, parse_message

MAX_PARTS = 100  # multipart and message/* parts; mail clients nest a handful
HEAD_BYTES = 256 * 1024  # what is read of an oversized message: its headers, at most this

_NESTING = re.compile(rb"(?im)^content-type:[ \t]*(?:\r?\n[ \t]+)*(?:multipart|message)/")
_HEAD_END = re.compile(rb"\r?\n\r?\n")


class Unread(enum.StrEnum):
    """Why a mail could not be read: the sender is told in these terms (templates `unreadable`)."""

    NESTED = "nested"  # more container parts than MAX_PARTS
    BODY = "body"  # the parser failed on its body
    HEADERS = "headers"  # the parser failed on its headers: no one to tell


class Unreadable(ValueError):
    """The mail cannot be read safely; it is set aside in quarantine with this reason."""

    def __init__(self, reason: Unread, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def check_structure(raw: bytes) -> None:
    """Refuse a message with more container parts than MAX_PARTS (linear in its size)."""
    for found, _ in enumerate(_NESTING.finditer(raw), start=1):
        if found > MAX_PARTS:
            raise Unreadable(Unread.NESTED, f"more than {MAX_PARTS} nested MIME parts")


def read(raw: bytes, headers_only: bool = False) -> InboundMail:
    """The mail as the referee reads it (`headers_only`: its head, for mail too large to read
    whole); raises `Unreadable` when it cannot be read safely or at all."""
    if not headers_only:
        check_structure(raw)
    try:
        return parse_message(raw, headers_only=headers_only)
    except Exception as exc:  # the parser's own failure, whatever it is: the mail is unread
        reason = Unread.HEADERS if headers_only else Unread.BODY
        detail = f"its {reason.value} cannot be parsed ({exc.__class__.__name__}: {exc})"
        raise Unreadable(reason, detail[:300]) from exc


def head(data: bytes) -> bytes:
    """The header block of a message (at most HEAD_BYTES), for mail too large to read."""
    data = data[:HEAD_BYTES]
    end = _HEAD_END.search(data)
    return data[: end.end()] if end else data


def identify(raw: bytes) -> tuple[str, str, str | None]:
    """Message-ID, sender and dedupe key (None when the body cannot be read), for the log and
    the quarantine record; safe on any bytes."""
    try:
        check_structure(raw)
        mail = parse_message(raw)
        return mail.message_id, mail.sender, mail.dedupe_key
    except Exception:  # the body is what failed: the headers alone
        pass
    try:
        mail = parse_message(raw, headers_only=True)  # the body is never parsed
    except Exception:  # even the headers are unreadable
        return "<unparseable>", "", None
    return mail.message_id, mail.sender, None
