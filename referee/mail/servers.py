"""What went wrong with a mail server, said so an operator can fix it (rules 205, 213).

Every connection failure of the IMAP inbox, the SMTP outbox and `doctor` goes through
`problem`: it names the server (`IMAP server imap.example.org:993`) and, for the common
causes, the key to change: a certificate the system does not trust (`ca_file`), TLS spoken to
a plain port or the reverse (`port`, `security`), nothing listening, an unknown host.
"""

from __future__ import annotations

import socket
import ssl


def where(kind: str, host: str, port: int) -> str:
    """`IMAP server imap.example.org:993`."""
    return f"{kind} server {host}:{port}"


def problem(kind: str, host: str, port: int, exc: BaseException, ca_file: str = "") -> str:
    """One line: the server, what failed, and the config key that fixes it."""
    section = f"[{kind.lower()}]"
    head = where(kind, host, port)
    if isinstance(exc, ssl.SSLCertVerificationError):
        reason = exc.verify_message or exc.reason or "certificate verify failed"
        if ca_file:
            return (
                f"{head}: its TLS certificate is not trusted ({reason}); {section} ca_file "
                f"{ca_file} is not the certificate (or CA) that signed it"
            )
        return (
            f"{head}: its TLS certificate is not trusted ({reason}); if the server uses a "
            f"self-signed or private certificate, set {section} ca_file to its PEM file"
        )
    if isinstance(exc, ssl.SSLError):
        return (
            f"{head}: TLS failed ({exc.reason or exc}); check {section} port and security "
            "(tls: 993 for IMAP, 465 for SMTP; starttls: 143 for IMAP, 587 for SMTP)"
        )
    if isinstance(exc, ConnectionRefusedError):
        return f"{head}: connection refused: nothing listens there; check {section} host and port"
    if isinstance(exc, socket.gaierror):
        return f"{head}: unknown host ({exc.strerror or exc}); check {section} host"
    if isinstance(exc, TimeoutError):
        return (
            f"{head}: no answer in time; check {section} port and security "
            "(a TLS port spoken to in plain text, or a firewall, stays silent)"
        )
    text = str(exc).strip() or exc.__class__.__name__
    if text.startswith(head):
        return text
    return f"{head}: {text.splitlines()[0]}"
