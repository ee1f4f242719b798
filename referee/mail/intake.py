"""What the referee checks on a mail before it reads it whole (rules 107, 212, 213).

The live service and `replay` both go through these, so a mail is judged the same way in
both: a message nested deeper than any mail client writes is refused before parsing (Python's
parser would give up at a depth that depends on the caller's stack), a message larger than the
game's limit is read only up to its headers, and a message that could not be processed is
named in the log by what its headers say, never by a second full parse.
"""

from __future__ import annotations

import re

from referee.mail.parse import parse_message

MAX_PARTS = 100  # multipart and message/* parts; mail clients nest a handful
HEAD_BYTES = 256 * 1024  # what is read of an oversized message: its headers, at most this

_NESTING = re.compile(rb"(?im)^content-type:[ \t]*(?:\r?\n[ \t]+)*(?:multipart|message)/")
_HEAD_END = re.compile(rb"\r?\n\r?\n")


class Unreadable(ValueError):
    """The mail cannot be read safely; it is set aside in quarantine with this reason."""


def check_structure(raw: bytes) -> None:
    """Refuse a message with more container parts than MAX_PARTS (linear in its size)."""
    for found, _ in enumerate(_NESTING.finditer(raw), start=1):
        if found > MAX_PARTS:
            raise Unreadable(f"more than {MAX_PARTS} nested MIME parts")


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
