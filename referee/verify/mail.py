"""Reading the mail `verify` compares (213): the chain header a sent mail names, its date,
its bytes without what mail systems add, and the first line where two mails differ.

Pure functions of a mail's bytes: no store, no replay.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any

from referee.mail.outgoing import CHAIN_HEADER


def chain_header_text(raw: bytes) -> str:
    """The `X-Nomic-Chain` header's value of a mail the referee sent, "" when it has none."""
    for line in raw.replace(b"\r\n", b"\n").split(b"\n"):
        if not line:
            break
        if line.lower().startswith(CHAIN_HEADER.lower()):
            return line[len(CHAIN_HEADER) :].decode("ascii", "replace").strip()
    return ""


def chain_named(raw: bytes) -> tuple[int, str] | None:
    """The link (number, head) a sent mail names in `X-Nomic-Chain`, or None."""
    number, _, head = chain_header_text(raw).partition(" ")
    if not number.isdigit() or not re.fullmatch(r"[0-9a-f]{64}", head.strip()):
        return None
    return int(number), head.strip()


def date_of(raw: bytes) -> datetime | None:
    """When a sent mail says it was written: its Date header (the referee's own, to the second)."""
    value = BytesHeaderParser(policy=compat32).parsebytes(raw).get("Date")
    try:
        at = parsedate_to_datetime(str(value)) if value else None
    except (TypeError, ValueError, IndexError):
        return None
    return at if at is None or at.tzinfo else at.replace(tzinfo=UTC)


def second(at: datetime) -> datetime:
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).replace(microsecond=0)


def comparable(raw: bytes, keep: frozenset[bytes] | None = None) -> bytes:
    """A mail's bytes as an mbox holds them, without any DKIM signature (checked apart); with
    `keep` (the lower-case names of the header fields the referee wrote in that mail), without
    any other header field either: those mail systems and clients add on the way and in the
    mailbox (`Received`, `Return-Path`, `Delivered-To`, `Status`, `X-Mozilla-Status`, ...), not
    the referee's words. Every field of a name the referee wrote is kept, a second one too."""
    lines = raw.replace(b"\r\n", b"\n").split(b"\n")
    out: list[bytes] = []
    skipping = False
    in_head = True
    for line in lines:
        if in_head and line == b"":
            in_head = False
        if in_head and skipping and line[:1] in (b" ", b"\t"):
            continue
        skipping = in_head and _set_aside(line, keep)
        if skipping:
            continue
        out.append(b">" + line if line.startswith(b"From ") and not in_head else line)
    return b"\n".join(out).rstrip(b"\n")


def _set_aside(line: bytes, keep: frozenset[bytes] | None) -> bool:
    """Whether a header line starts a field `comparable` leaves out."""
    name = line.partition(b":")[0].strip().lower()
    if name == b"dkim-signature":
        return True
    return keep is not None and line[:1] not in (b" ", b"\t") and name not in keep


def field_names(raw: bytes) -> frozenset[bytes]:
    """The lower-case names of a mail's header fields."""
    head = raw.replace(b"\r\n", b"\n").partition(b"\n\n")[0]
    return frozenset(
        line.partition(b":")[0].strip().lower()
        for line in head.split(b"\n")
        if line[:1] not in (b" ", b"\t") and b":" in line
    )


def addressees(raw: bytes) -> set[str]:
    """The addresses a mail names in To and Cc, lower-case."""
    head = BytesHeaderParser(policy=compat32).parsebytes(raw)
    fields = [str(v) for name in ("To", "Cc") for v in head.get_all(name, [])]
    return {address.lower() for _, address in getaddresses(fields) if address}


def subject(raw: bytes) -> str:
    for line in raw.replace(b"\r\n", b"\n").split(b"\n"):
        if not line:
            break
        if line.lower().startswith(b"subject:"):
            return line.decode("utf-8", "replace")
    return ""


def first_difference(published: bytes, expected: bytes) -> tuple[str, str]:
    """The first line that differs, as published and as the rules give it."""
    left = published.replace(b"\r\n", b"\n").split(b"\n")
    right = expected.replace(b"\r\n", b"\n").split(b"\n")
    for number, (a, b) in enumerate(zip(left, right, strict=False), start=1):
        if a != b:
            return (
                f"line {number}: {a.decode('utf-8', 'replace')[:200]}",
                f"line {number}: {b.decode('utf-8', 'replace')[:200]}",
            )
    return f"{len(left)} lines", f"{len(right)} lines"


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def utc(at: datetime) -> datetime:
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def signed(raw: bytes) -> bool:
    head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    return any(line.lower().startswith(b"dkim-signature:") for line in head.split(b"\n"))
