"""DKIM signatures on the referee's mail, so a player can prove a result came from it (213).

With `[dkim]` in the config every mail is signed as it leaves (SMTP or the `sent` Maildir),
with the key in `key_file` (PEM, RSA), under `selector._domainkey.domain` (the domain of the
game's address unless `domain` says otherwise). The signature binds the headers a player relies
on (From, To, Subject, Date, Message-ID, the thread, `X-Nomic-Chain`) and the body. The outbox
keeps the unsigned bytes, so `replay` and `verify` compare what the rules give byte for byte
and check the signatures apart, against the public key the config's own key gives (DNS may have
moved on by the time a game is verified). dkimpy signs and verifies; `cryptography` makes keys
and derives the DNS record.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dkim
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from referee.config import DkimConfig
from referee.private import create_private, private_folder

SIGNED_HEADERS = (
    b"From",
    b"To",
    b"Cc",
    b"Subject",
    b"Date",
    b"Message-ID",
    b"In-Reply-To",
    b"References",
    b"Reply-To",
    b"Auto-Submitted",
    b"X-Nomic-Chain",
)
KEY_BITS = 2048


class SigningError(ValueError):
    """The key cannot be read or does not sign: the message names the file and the fix."""


@dataclass(frozen=True)
class Signer:
    """Signs one game's outgoing mail with its DKIM key."""

    selector: str
    domain: str
    key: bytes  # PEM

    @classmethod
    def load(cls, config: DkimConfig, domain: str) -> Signer:
        try:
            key = config.key_file.read_bytes()
        except OSError as exc:
            raise SigningError(
                f"[dkim] key_file {config.key_file}: cannot be read ({exc.strerror or exc}); "
                f"make one with 'nomic-referee dkim-key CONFIG'"
            ) from exc
        signer = cls(config.selector, config.domain or domain, key)
        try:
            public_record(key)
            signer.sign(b"From: test@" + signer.domain.encode() + b"\r\n\r\ncheck\r\n")
        except (ValueError, TypeError, dkim.DKIMException) as exc:
            raise SigningError(
                f"[dkim] key_file {config.key_file}: not an RSA private key in PEM ({exc})"
            ) from exc
        return signer

    def sign(self, raw: bytes) -> bytes:
        """The mail with a `DKIM-Signature` header in front (relaxed/relaxed, rsa-sha256)."""
        present = {name.lower() for name in _header_names(raw)}
        headers = [h for h in SIGNED_HEADERS if h.lower() in present]
        signature = dkim.sign(
            raw,
            self.selector.encode("ascii"),
            self.domain.encode("ascii"),
            self.key,
            canonicalize=(b"relaxed", b"relaxed"),
            include_headers=headers,
        )
        return bytes(signature) + raw

    @property
    def record_name(self) -> str:
        return f"{self.selector}._domainkey.{self.domain}"

    @property
    def record(self) -> str:
        return public_record(self.key)

    def dns(self) -> Callable[..., bytes]:
        """A DNS answer for dkimpy that gives this key's record: verify without DNS."""
        wanted = self.record_name.encode("ascii")
        record = self.record.encode("ascii")

        def lookup(name: bytes, timeout: int = 5) -> bytes:
            return record if name.rstrip(b".").lower() == wanted.lower() else b""

        return lookup

    def verify(self, raw: bytes) -> bool:
        """True when `raw` carries a valid signature by this key."""
        return bool(dkim.verify(raw, dnsfunc=self.dns()))


def _header_names(raw: bytes) -> list[bytes]:
    head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    return [line.split(b":", 1)[0].strip() for line in head.split(b"\n") if line[:1] not in b" \t"]


def public_record(key_pem: bytes) -> str:
    """The TXT record to publish at `selector._domainkey.domain`: `v=DKIM1; k=rsa; p=…`."""
    key = serialization.load_pem_private_key(key_pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the key is not RSA")
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return f"v=DKIM1; k=rsa; p={base64.b64encode(der).decode('ascii')}"


def new_key(path: Path) -> bytes:
    """Write a new 2048-bit RSA key to `path` (mode 0600, never over an existing file)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    private_folder(path.parent)
    with create_private(path) as out:
        out.write(pem)
    return pem
