"""SMTP as the referee speaks it, with aiosmtplib (rules 107, 203, 205 reach the players).

The wire only: a client for `[smtp]` (certificates always checked), the login (password or
XOAUTH2), a connection kept open from message to message (`Slot`), and a failure put in
words that name the server. What is sent, and what is recorded of it, is the delivery's
(`referee.delivery.smtp`): this module knows nothing of the outbox.
"""

from __future__ import annotations

import asyncio
import ssl

import aiosmtplib

from referee.config import SmtpConfig
from referee.mail import oauth, servers


def answer(exc: Exception) -> tuple[int, str]:
    """The SMTP code and text of a refusal, whether of the whole mail or of its recipient."""
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused) and exc.recipients:
        first = exc.recipients[0]
        return first.code, first.message
    if isinstance(exc, aiosmtplib.SMTPResponseException):
        return exc.code, exc.message
    return 0, str(exc)


def tls_context(ca_file: str) -> ssl.SSLContext:
    """Certificates are always checked: the system's roots, or the CA file the config names."""
    return ssl.create_default_context(cafile=ca_file or None)


async def log_in(client: aiosmtplib.SMTP, config: SmtpConfig) -> None:
    """AUTH as the config says: nothing without a username, XOAUTH2 with an access token for
    `auth = "oauth2"`, else the password (PLAIN or LOGIN, as the server offers)."""
    if not config.username:
        return
    if config.auth != "oauth2":
        await client.login(config.username, config.password)
        return
    assert config.oauth2 is not None
    tokens = oauth.keeper(config.oauth2)
    token = await asyncio.to_thread(tokens.access_token)
    try:
        await xoauth2(client, config.username, token)
    except aiosmtplib.SMTPAuthenticationError:
        await asyncio.to_thread(tokens.refused_token, token)  # the next try gets a new one
        raise


async def xoauth2(client: aiosmtplib.SMTP, user: str, token: str) -> None:
    """AUTH XOAUTH2, sent here rather than by aiosmtplib (whose auth_xoauth2 only newer
    versions have): a refusal is a 334 carrying the error, answered by an empty line, then
    the 535."""
    if client.is_ehlo_or_helo_needed:
        await client.ehlo()
    if "xoauth2" not in client.server_auth_methods:
        raise aiosmtplib.SMTPException(
            "the server does not offer AUTH XOAUTH2: check [smtp] host and port, or use "
            "auth = 'password'"
        )
    answer = await client.execute_command(
        b"AUTH", b"XOAUTH2", oauth.sasl_xoauth2(user, token).encode("ascii")
    )
    if answer.code == 334:
        answer = await client.execute_command(b"")
    if answer.code != 235:
        raise aiosmtplib.SMTPAuthenticationError(answer.code, answer.message)


class Slot:
    """One of the worker's SMTP connections, kept open from message to message."""

    def __init__(self) -> None:
        self.client: aiosmtplib.SMTP | None = None

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None and client.is_connected:
            try:
                await client.quit()
            except (aiosmtplib.SMTPException, OSError, TimeoutError):
                client.close()


def client(c: SmtpConfig) -> aiosmtplib.SMTP:
    """A client for the configured server, not yet connected."""
    return aiosmtplib.SMTP(
        hostname=c.host,
        port=c.port,
        use_tls=c.security == "tls",
        start_tls=c.security == "starttls",
        tls_context=tls_context(c.ca_file) if c.security != "none" else None,
        timeout=c.timeout,
    )


def problem(c: SmtpConfig, exc: BaseException) -> str:
    """The failure, naming the server (and `ca_file` when its certificate is the cause)."""
    if isinstance(exc, oauth.TokenError):
        return str(exc)  # the token endpoint's problem, named in it
    if isinstance(exc, aiosmtplib.SMTPAuthenticationError):
        how = "the OAuth2 token" if c.auth == "oauth2" else "username and password"
        return f"{servers.where('SMTP', c.host, c.port)}: login refused ({how}): {exc}"
    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
    return servers.problem("SMTP", c.host, c.port, cause, c.ca_file)
