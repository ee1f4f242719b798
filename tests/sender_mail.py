"""Builders for the sender tests: raw mail as clients and attackers write it, DKIM keys, games."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import format_datetime
from itertools import count
from pathlib import Path

import dkim
from sqlalchemy import text

from referee.config import AuthConfig, Settings
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import T0

_ids = count(1)
SERVER = "mx.nomic.example"


def vouched(results: str, server: str = SERVER) -> tuple[tuple[str, str], ...]:
    """The receiving server's verdict and, below it, the line in which it took the mail in."""
    return (
        ("Authentication-Results", f"{server}; {results}"),
        ("Received", f"from mail.example.org by {server} with ESMTPS id 7"),
    )


def raw_mail(
    sender: str,
    body: str,
    subject: str = "move",
    at: datetime = T0,
    message_id: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
    top: tuple[tuple[str, str], ...] = (),
    kind: str = "plain",
) -> bytes:
    """A mail written byte by byte, so that a test can put any header anywhere.

    `top` headers come first (as a receiving server prepends them), `headers` after the
    client's own ones; values are written as given, UTF-8 where they are not ASCII.
    """
    mid = message_id if message_id is not None else f"<sender-{next(_ids)}@example.org>"
    lines = [f"{name}: {value}" for name, value in top]
    lines += [
        f"From: {sender}",
        "To: referee@nomic.example",
        f"Subject: {subject}",
        f"Date: {format_datetime(at)}",
        f"Message-ID: {mid}",
        "MIME-Version: 1.0",
        f"Content-Type: text/{kind}; charset=utf-8",
        "Content-Transfer-Encoding: 8bit",
    ]
    lines += [f"{name}: {value}" for name, value in headers]
    text = "\r\n".join(lines) + "\r\n\r\n" + body.replace("\r\n", "\n").replace("\n", "\r\n")
    return text.encode("utf-8") + b"\r\n"


def make_key(folder: Path) -> tuple[bytes, bytes]:
    """An RSA key pair: the private key in PEM and the DNS TXT record of its public half."""
    private = folder / "key.pem"
    subprocess.run(
        ["openssl", "genrsa", "-out", str(private), "2048"], check=True, capture_output=True
    )
    der = subprocess.run(
        ["openssl", "rsa", "-in", str(private), "-pubout", "-outform", "DER"],
        check=True,
        capture_output=True,
    ).stdout
    return private.read_bytes(), b"v=DKIM1; k=rsa; p=" + base64.b64encode(der)


SIGNED_AS_GMAIL = (b"from", b"subject", b"date", b"message-id", b"to", b"mime-version")


def sign(
    raw: bytes,
    private: bytes,
    domain: bytes = b"example.org",
    headers: tuple[bytes, ...] = SIGNED_AS_GMAIL,
    length: bool = False,
) -> bytes:
    signature: bytes = dkim.sign(
        raw, b"sel", domain, private, include_headers=list(headers), length=length
    )
    return signature + raw


def dns_for(record: bytes, *domains: str) -> Callable[..., bytes | None]:
    names = {f"sel._domainkey.{d}.".encode() for d in domains}

    def lookup(name: bytes, timeout: int = 5) -> bytes | None:
        return record if name in names else None

    return lookup


def guarded_game(
    settings: Settings, record: bytes, trusted: tuple[str, ...] = (SERVER,)
) -> tuple[Store, Referee]:
    """A game that believes only the trusted server's results or an aligned DKIM signature."""
    strict = replace(settings, auth=AuthConfig(True, trusted))
    store = Store(strict.database_url)
    Referee.create(store, strict, T0)
    dns = dns_for(record, "example.org", "mail.example.org", "evil.example", "org")
    return store, Referee(store, 1, strict, dns=dns)


def outbox(referee: Referee, kind: str | None = None) -> list[EmailMessage]:
    out = []
    for row in referee.store.outbox(referee.game_id):
        if kind is None or row.kind == kind:
            message = message_from_bytes(row.raw, policy=policy.default)
            assert isinstance(message, EmailMessage)
            out.append(message)
    return out


def reply_text(referee: Referee) -> str:
    replies = outbox(referee, "reply")
    assert replies, "no reply was queued"
    body = replies[-1].get_body(("plain",))
    assert body is not None
    return " ".join(str(body.get_content()).split())  # wrapped at 72: read as one line


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def refusal_text(referee: Referee) -> str:
    """Why the last refused mail was refused: the `inbound` record the operator reads. The note
    mailed to the named sender says none of it (it would carry a forger's words)."""
    notes = outbox(referee, "unbelieved")
    assert notes, "no note was queued"
    said = notes[-1].get_body(("plain",))
    assert said is not None
    assert "could not be shown to come from you" in " ".join(str(said.get_content()).split())
    return inbound_note(referee)


def inbound_note(referee: Referee) -> str:
    """The `inbound` note of the last mail: the check that stopped it, and why."""
    with referee.store.engine.connect() as connection:
        row = connection.execute(
            text("SELECT note FROM inbound WHERE game_id = :g ORDER BY id DESC LIMIT 1"),
            {"g": referee.game_id},
        ).one()
    return str(row[0])
