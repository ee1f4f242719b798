"""The outbox worker: sends queued mail with aiosmtplib (rules 107, 203, 205 reach the players).

Connections are reused, at most `concurrency` at once. A 4xx answer, a timeout or a dropped
connection is retried with exponential backoff; a 5xx answer is recorded as a permanent failure,
and so is a row that cannot be sent at all (an address the client library refuses): it fails
alone, the others go on. A refused login (535) is the account's trouble, not the mail's: it
is retried like a 4xx. Rows are claimed in the store before they are sent, so two processes
never send the same row. A crash between the server's 250 and the record of it may at worst
send the same Message-ID again, which mail clients show once.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import aiosmtplib

from referee.config import SmtpConfig
from referee.mail import oauth, servers
from referee.mail.signing import Signer
from referee.store.store import Store
from referee.store.tables import OutboxRow, OutboxStatus

log = logging.getLogger("referee.smtp")

BACKOFF_FIRST = 30.0  # seconds before the first retry
BACKOFF_MAX = 3600.0  # never wait longer than an hour between tries
CLAIM_BATCH = 50  # rows one process claims at a time: few in hand if its lease is lost unseen


def backoff(attempts: int, first: float = BACKOFF_FIRST) -> timedelta:
    return timedelta(seconds=min(BACKOFF_MAX, first * 2 ** max(0, attempts - 1)))


def _answer(exc: Exception) -> tuple[int, str]:
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


class _Slot:
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


@dataclass
class Tally:
    sent: int = 0
    deferred: int = 0
    failed: int = 0


class Postman:
    """Sends one game's due outbox rows."""

    def __init__(
        self,
        store: Store,
        game_id: int,
        config: SmtpConfig,
        sender: str,
        first_backoff: float = BACKOFF_FIRST,
        owner: str = "postman",
        halt: threading.Event | None = None,
        signer: Signer | None = None,
    ) -> None:
        self.store = store
        self.game_id = game_id
        self.config = config
        self.sender = sender
        self.first_backoff = first_backoff
        self.owner = owner  # the process claiming the rows it sends
        self.halt = halt or threading.Event()  # set: stop between two mails (a clean stop)
        self.signer = signer  # [dkim]: each mail is signed as it leaves; the outbox keeps it bare

    def _client(self) -> aiosmtplib.SMTP:
        c = self.config
        return aiosmtplib.SMTP(
            hostname=c.host,
            port=c.port,
            use_tls=c.security == "tls",
            start_tls=c.security == "starttls",
            tls_context=tls_context(c.ca_file) if c.security != "none" else None,
            timeout=c.timeout,
        )

    async def deliver_due(self, now: datetime | None = None, batch: int = CLAIM_BATCH) -> Tally:
        """Send every row that is due now, batch after batch; count what went, waits, failed.

        On `halt` each connection stops after the mail in hand; the rows claimed and not sent
        go back when the game is released. Small batches keep few rows claimed at a time: a
        process that lost its lease without knowing it sends at most one batch twice.
        """
        moment = now or datetime.now(UTC)
        tally = Tally()
        slots = [_Slot() for _ in range(max(1, self.config.concurrency))]  # reused connections
        try:
            while not self.halt.is_set():
                rows = await asyncio.to_thread(
                    self.store.claim, self.game_id, self.owner, moment, batch
                )
                if not rows:
                    break
                queues: list[list[OutboxRow]] = [[] for _ in slots]
                for index, row in enumerate(rows):
                    queues[index % len(queues)].append(row)
                await asyncio.gather(
                    *(
                        self._send_queue(q, slot, tally, moment)
                        for q, slot in zip(queues, slots, strict=True)
                        if q
                    )
                )
                if len(rows) < batch:
                    break  # a deferred row is due later, so the next query cannot return it
        finally:
            await asyncio.gather(*(slot.close() for slot in slots))
        if tally.sent or tally.deferred or tally.failed:
            log.info(
                "outbox: %d sent, %d deferred, %d failed", tally.sent, tally.deferred, tally.failed
            )
        return tally

    async def _send_queue(
        self, rows: list[OutboxRow], slot: _Slot, tally: Tally, now: datetime
    ) -> None:
        for row in rows:
            if self.halt.is_set():
                return
            try:
                if slot.client is None or not slot.client.is_connected:
                    slot.client = self._client()
                    await slot.client.connect()
                    await log_in(slot.client, self.config)
                raw = self.signer.sign(row.raw) if self.signer else row.raw
                await slot.client.sendmail(self.sender, [row.recipient], raw)
            except aiosmtplib.SMTPAuthenticationError as exc:  # the account's, not the mail's
                await self._retry(row, now, self._problem(exc))
                tally.deferred += 1
                await slot.close()
                continue
            except (aiosmtplib.SMTPResponseException, aiosmtplib.SMTPRecipientsRefused) as exc:
                code, message = _answer(exc)
                if 500 <= code < 600:
                    await self._record(row, OutboxStatus.FAILED, now, f"{code} {message}")
                    tally.failed += 1
                else:
                    await self._retry(row, now, f"{code} {message}")
                    tally.deferred += 1
                if code == 421:
                    await slot.close()  # the server is closing the connection
                continue
            except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
                await self._retry(row, now, self._problem(exc))
                tally.deferred += 1
                await slot.close()
                continue
            except Exception as exc:  # this row cannot be sent at all: it fails alone
                why = f"{exc.__class__.__name__}: {exc}"
                await self._record(row, OutboxStatus.FAILED, now, why)
                tally.failed += 1
                await slot.close()
                continue
            await self._record(row, OutboxStatus.SENT, now)
            tally.sent += 1

    def _problem(self, exc: BaseException) -> str:
        """The failure, naming the server (and `ca_file` when its certificate is the cause)."""
        c = self.config
        if isinstance(exc, oauth.TokenError):
            return str(exc)  # the token endpoint's problem, named in it
        if isinstance(exc, aiosmtplib.SMTPAuthenticationError):
            how = "the OAuth2 token" if c.auth == "oauth2" else "username and password"
            return f"{servers.where('SMTP', c.host, c.port)}: login refused ({how}): {exc}"
        cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
        return servers.problem("SMTP", c.host, c.port, cause, c.ca_file)

    async def _record(self, row: OutboxRow, status: str, now: datetime, error: str = "") -> None:
        assert row.id is not None
        if status == OutboxStatus.FAILED:
            log.error("mail %s refused for good: %s", row.message_id, error)
        await asyncio.to_thread(
            self.store.mark_outbox, row.id, status, row.attempts + 1, now, None, error, self.owner
        )

    async def _retry(self, row: OutboxRow, now: datetime, error: str) -> None:
        assert row.id is not None
        attempts = row.attempts + 1
        when = now + backoff(attempts, self.first_backoff)
        log.warning(
            "mail %s deferred (attempt %d, retry at %s): %s",
            row.message_id,
            attempts,
            when.isoformat(timespec="seconds"),
            error,
        )
        await asyncio.to_thread(
            self.store.mark_outbox,
            row.id,
            OutboxStatus.PENDING,
            attempts,
            now,
            when,
            error,
            self.owner,
        )
