"""Read a raw inbound message into the few facts the referee needs (pure; rules 107, 203, 212).

Handles multipart, HTML-only mail, quoted-printable and base64, any charset (a declared but
unknown charset is decoded as UTF-8 with replacement, never dropped), and marks auto-replies
and bounces so that they are never answered.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email import policy
from email.header import Header, decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from html.parser import HTMLParser

from referee.mail.quotes import strip_reply

MAX_TEXT = 200_000  # characters of body text read; a rule is never longer


@dataclass(frozen=True)
class InboundMail:
    message_id: str
    sender: str  # lower-cased address from From:
    sender_name: str
    subject: str
    date: datetime | None
    body: str  # the decoded text, quotes still in
    in_reply_to: str
    references: tuple[str, ...]
    automatic: bool  # Auto-Submitted, Precedence bulk/junk/list, list mail: never answer
    bounce: bool
    size: int

    @property
    def own_words(self) -> str:
        return strip_reply(self.body)


_PARSER = BytesParser(policy=policy.compat32)  # lenient and fast; headers decoded below


_HEADERS_ONLY = BytesParser(policy=policy.compat32)


def parse_message(raw: bytes, headers_only: bool = False) -> InboundMail:
    """The facts of a message; `headers_only` for mail too large to read (its body is empty)."""
    message = (
        _HEADERS_ONLY.parsebytes(raw, headersonly=True)
        if headers_only
        else (_PARSER.parsebytes(raw))
    )
    sender_name, sender = _sender(message)
    return InboundMail(
        message_id=_message_id(message, raw),
        sender=sender,
        sender_name=sender_name,
        subject=_header(message, "Subject"),
        date=_date(message),
        body="" if headers_only else _body_text(message)[:MAX_TEXT],
        in_reply_to=_header(message, "In-Reply-To").strip(),
        references=tuple(re.findall(r"<[^<>\s]+>", _header(message, "References"))),
        automatic=_automatic(message),
        bounce=_bounce(message, sender),
        size=len(raw),
    )


def _header(message: Message, name: str) -> str:
    """A header's text with RFC 2047 words decoded; a malformed one is kept as written."""
    value = message.get(name)
    if value is None:
        return ""
    if isinstance(value, Header):  # raw 8-bit bytes in a header (RFC 6532)
        text = "".join(_eight_bit(part, charset) for part, charset in decode_header(value))
    else:
        text = str(value)
    if "=?" in text:
        with contextlib.suppress(ValueError, LookupError, UnicodeError, TypeError):
            text = str(make_header(decode_header(text)))
    return " ".join(text.split())


def _eight_bit(part: bytes | str, charset: str | None) -> str:
    if isinstance(part, str):
        return part
    if charset and charset != "unknown-8bit":
        try:
            return part.decode(charset, "replace")
        except LookupError:
            pass
    try:
        return part.decode("utf-8")
    except UnicodeDecodeError:
        return part.decode("latin-1")


def _message_id(message: Message, raw: bytes) -> str:
    found = re.search(r"<[^<>\s]+>", _header(message, "Message-ID"))
    if found:
        return found.group(0)
    digest = hashlib.sha256(raw).hexdigest()[:32]
    return f"<{digest}@no-message-id.invalid>"  # stable, so a redelivery is still a duplicate


def _sender(message: Message) -> tuple[str, str]:
    value = _header(message, "From")
    pairs = getaddresses([value])
    for name, address in pairs:
        address = address.strip()
        local, at, domain = address.rpartition("@")
        # Only ASCII addresses can be answered (no SMTPUTF8 here); anything else is no sender.
        if at and local and "." in domain and address.isascii() and " " not in address:
            return name, address.lower()
    return "", ""


def _date(message: Message) -> datetime | None:
    value = _header(message, "Date")
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _automatic(message: Message) -> bool:
    auto = _header(message, "Auto-Submitted").lower()
    if auto and auto != "no":
        return True
    if _header(message, "Precedence").lower() in ("bulk", "junk", "list", "auto_reply"):
        return True
    return any(_header(message, name) for name in ("X-Autoreply", "X-Autorespond", "List-Id"))


def _bounce(message: Message, sender: str) -> bool:
    if message.get_content_type() == "multipart/report":
        return True
    local = sender.split("@")[0]
    if local in ("mailer-daemon", "postmaster"):
        return True
    return _header(message, "Return-Path").strip() == "<>"


def _decode(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, errors="replace")
    except LookupError:  # a charset Python does not know
        return payload.decode("utf-8", errors="replace")


def _body_text(message: Message) -> str:
    plain: str | None = None
    html: str | None = None
    for part in message.walk():
        if part.is_multipart():
            continue
        if part.get_content_disposition() == "attachment":
            continue
        kind = part.get_content_type()
        if kind == "text/plain" and plain is None:
            plain = _decode(part)
        elif kind == "text/html" and html is None:
            html = _decode(part)
    if plain is not None and plain.strip():
        return plain
    if html is not None:
        return html_to_text(html)
    return plain or ""


class _TextFromHtml(HTMLParser):
    """HTML to plain lines: block tags break lines, quoted blocks get '>' prefixes."""

    BLOCKS = frozenset(
        [
            "p",
            "div",
            "br",
            "li",
            "tr",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "pre",
            "table",
            "ul",
            "ol",
            "hr",
            "section",
            "article",
            "header",
            "footer",
        ]
    )
    SKIP = frozenset(("script", "style", "head", "title"))

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = [""]
        self.quote_depth = 0
        self.skip_depth = 0
        self.stack: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = " ".join(v or "" for k, v in attrs if k in ("class", "id")).lower()
        quoted = tag == "blockquote" or "gmail_quote" in classes or "divrplyfwdmsg" in classes
        if tag in self.SKIP:
            self.skip_depth += 1
        if tag not in ("br", "hr", "img", "meta", "link", "input"):
            self.stack.append((tag, quoted))
            if quoted:
                self.quote_depth += 1
        if tag in self.BLOCKS:
            self.newline()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skip_depth:
            self.skip_depth -= 1
        while self.stack:
            name, quoted = self.stack.pop()
            if quoted:
                self.quote_depth -= 1
            if name == tag:
                break
        if tag in self.BLOCKS or tag == "blockquote":
            self.newline()

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        text = re.sub(r"[ \t\r\n]+", " ", data)
        if not text.strip() and not self.lines[-1]:
            return
        if self.quote_depth and not self.lines[-1].startswith(">"):
            self.lines[-1] = "> " + self.lines[-1]
        self.lines[-1] += text.replace("\xa0", " ")

    def newline(self) -> None:
        self.lines[-1] = (
            self.lines[-1].strip()
            if not self.lines[-1].startswith(">")
            else (self.lines[-1].rstrip())
        )
        self.lines.append("")


def html_to_text(html: str) -> str:
    parser = _TextFromHtml()
    parser.feed(html)
    parser.close()
    return "\n".join(line.strip() for line in parser.lines)


def received_at(mail: InboundMail, fallback: datetime) -> datetime:
    return mail.date.astimezone(UTC) if mail.date else fallback
