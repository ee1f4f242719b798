"""Read a bounce: which of the referee's mails it returns, and to whom it failed (pure; 205).

A delivery status notification (RFC 3464: `multipart/report; report-type=delivery-status`)
carries a `message/delivery-status` part (per recipient: `Final-Recipient`, `Action`,
`Status`) and the returned message, whole (`message/rfc822`) or its headers only
(`text/rfc822-headers`). The referee's mail is recognised by the Message-ID of the returned
headers (or an `Original-Message-ID` / `X-Original-Message-ID` field some servers put in
the status part); a bounce that is no DSN (older servers write the returned headers into
plain text) is read for `Message-ID:` lines. Nothing else of the bounce is kept: only the
Message-IDs, the recipients and a status code of digits, never its words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email import policy
from email.message import Message
from email.parser import BytesParser, HeaderParser

_PARSER = BytesParser(policy=policy.compat32)
_MSG_ID = re.compile(r"<[\x21-\x3b\x3d\x3f-\x7e]{1,900}>")
_ID_LINE = re.compile(
    r"(?im)^(?:x-)?(?:original-)?message-id:[ \t]*(?:\r?\n[ \t]+)?"
    r"(<[\x21-\x3b\x3d\x3f-\x7e]{1,900}>)"
)
_STATUS = re.compile(r"[245]\.\d{1,3}\.\d{1,3}")
_ADDRESS = re.compile(r"[^\s<>;@]+@[^\s<>;@]+")
MAX_IDS = 10  # a bounce naming more than this is no bounce of one mail


@dataclass(frozen=True)
class Bounce:
    """What a bounce says, and nothing more."""

    message_ids: tuple[str, ...]  # the returned mail's Message-ID(s), first the likeliest
    recipients: tuple[str, ...]  # the failed Final-Recipients, lower-cased ("" unknown)
    status: str  # the first failure's status code (`5.1.1`), or ""
    failed: bool  # False: a report of delay, delivery or relay, not of failure


def read_bounce(raw: bytes) -> Bounce:
    """The facts of a bounce; safe on any bytes (what cannot be read is simply not found)."""
    message = _PARSER.parsebytes(raw)
    ids: list[str] = []
    recipients: list[str] = []
    status = ""
    failed: bool | None = None
    report = message.get_param("report-type")
    # a read receipt (disposition-notification) or another report is no failure, whatever it says
    other_report = message.get_content_type() == "multipart/report" and (
        not isinstance(report, str) or report.strip().lower() != "delivery-status"
    )
    for part in message.walk():
        kind = part.get_content_type()
        if kind == "message/delivery-status":
            for block in _status_blocks(part):
                action = block.get("action", "").strip().lower()
                for name in ("original-message-id", "x-original-message-id"):
                    ids += _MSG_ID.findall(block.get(name, ""))
                if not action:
                    continue
                if action == "failed":
                    failed = True
                    recipients.append(_recipient(block.get("final-recipient", "")))
                    found = _STATUS.search(block.get("status", ""))
                    if found and not status:
                        status = found.group(0)
                elif failed is None:
                    failed = False  # delayed, delivered, relayed, expanded
        elif kind == "message/rfc822":
            payload = part.get_payload()
            inner = payload[0] if isinstance(payload, list) and payload else None
            if isinstance(inner, Message):
                ids += _MSG_ID.findall(str(inner.get("Message-ID", "")))
        elif kind == "text/rfc822-headers":
            headers = HeaderParser(policy=policy.compat32).parsestr(_text(part))
            ids += _MSG_ID.findall(str(headers.get("Message-ID", "")))
    if not ids:  # no DSN: the returned headers written into the text
        for part in message.walk():
            if part.get_content_maintype() == "text":
                ids += _ID_LINE.findall(_text(part))
        own = str(message.get("Message-ID", ""))
        ids = [i for i in ids if i != own.strip()]
    unique = tuple(dict.fromkeys(ids))[:MAX_IDS]
    failure = failed is not False and not other_report
    return Bounce(unique, tuple(r for r in recipients if r), status, failure)


def _status_blocks(part: Message) -> list[Message]:
    """The per-message and per-recipient field blocks of a `message/delivery-status` part
    (the stdlib parses them into sub-messages; a raw text payload is split here)."""
    payload = part.get_payload()
    if isinstance(payload, list):
        return [p for p in payload if isinstance(p, Message)]
    text = payload if isinstance(payload, str) else ""
    blocks = re.split(r"\r?\n[ \t]*\r?\n", text)
    return [HeaderParser(policy=policy.compat32).parsestr(b.strip() + "\n") for b in blocks]


def _recipient(field: str) -> str:
    """`rfc822; bob@example.org` -> `bob@example.org`."""
    found = _ADDRESS.search(field.partition(";")[2] or field)
    return found.group(0).lower().strip(".") if found else ""


def _text(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if isinstance(payload, bytes):
        try:
            return payload.decode(part.get_content_charset() or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return payload.decode("utf-8", errors="replace")
    raw = part.get_payload()
    return raw if isinstance(raw, str) else ""
