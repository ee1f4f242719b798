"""Build outgoing messages: text + HTML alternative, stable Message-IDs, threading (107, 205).

Every mail carries `Auto-Submitted` (auto-replied for replies, auto-generated for notices) so
that well-behaved auto-responders stay quiet, and `In-Reply-To`/`References` so that a
proposal's circulation, its reminders and its result thread together in a player's client.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime

from referee.mail.render import Rendered


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


def slug(text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return cleaned or "game"


def domain_of(address: str) -> str:
    return address.rpartition("@")[2] or "localhost"


def message_id(game: str, address: str, *parts: object) -> str:
    """A Message-ID that depends only on the game and the event: replay makes the same ones."""
    digest = hashlib.sha256("|".join(str(p) for p in (game, *parts)).encode()).hexdigest()[:20]
    return f"<{slug(game)}.{digest}@{domain_of(address)}>"


def thread_root(game: str, address: str, thread: str) -> str:
    return f"<{slug(game)}.{slug(thread)}@{domain_of(address)}>"


def build(rendered: Rendered, envelope: Envelope) -> bytes:
    message = EmailMessage()
    message["From"] = Address(display_name=envelope.game, addr_spec=envelope.address)
    message["To"] = Address(display_name=envelope.recipient_name, addr_spec=envelope.recipient)
    message["Subject"] = rendered.subject
    message["Date"] = format_datetime(envelope.at)
    message["Message-ID"] = envelope.message_id
    if envelope.in_reply_to:
        message["In-Reply-To"] = envelope.in_reply_to
    if envelope.references:
        message["References"] = " ".join(envelope.references)
    message["Auto-Submitted"] = envelope.auto
    message["X-Auto-Response-Suppress"] = "All"
    message["Precedence"] = "bulk" if envelope.auto == "auto-generated" else "auto_reply"
    message.set_content(rendered.text)
    message.add_alternative(rendered.html, subtype="html")
    # A boundary derived from the Message-ID keeps replayed mail byte for byte the same.
    digest = hashlib.sha256(envelope.message_id.encode()).hexdigest()[:24]
    message.set_boundary(f"=_nomic_{digest}")
    return message.as_bytes(policy=SMTP)
