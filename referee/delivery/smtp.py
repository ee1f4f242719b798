"""The SMTP postman: sends a game's due outbox rows and records each one's fate (107, 205).

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
import threading
from datetime import UTC, datetime

import aiosmtplib

from referee.config import SmtpConfig
from referee.delivery.outbox import BACKOFF_FIRST, CLAIM_BATCH, Outbox, Tally, backoff
from referee.mail.signing import Signer
from referee.mail.smtp import Slot, answer, client, log_in, problem
from referee.store.tables import OutboxRow, OutboxStatus

log = logging.getLogger("referee.smtp")


class Postman:
    """Sends one game's due outbox rows."""

    def __init__(
        self,
        store: Outbox,
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

    async def deliver_due(self, now: datetime | None = None, batch: int = CLAIM_BATCH) -> Tally:
        """Send every row that is due now, batch after batch; count what went, waits, failed.

        On `halt` each connection stops after the mail in hand; the rows claimed and not sent
        go back when the game is released. Small batches keep few rows claimed at a time: a
        process that lost its lease without knowing it sends at most one batch twice.
        """
        moment = now or datetime.now(UTC)
        tally = Tally()
        slots = [Slot() for _ in range(max(1, self.config.concurrency))]  # reused connections
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
        self, rows: list[OutboxRow], slot: Slot, tally: Tally, now: datetime
    ) -> None:
        for row in rows:
            if self.halt.is_set():
                return
            try:
                if slot.client is None or not slot.client.is_connected:
                    slot.client = client(self.config)
                    await slot.client.connect()
                    await log_in(slot.client, self.config)
                raw = self.signer.sign(row.raw) if self.signer else row.raw
                await slot.client.sendmail(self.sender, [row.recipient], raw)
            except aiosmtplib.SMTPAuthenticationError as exc:  # the account's, not the mail's
                await self._retry(row, now, problem(self.config, exc))
                tally.deferred += 1
                await slot.close()
                continue
            except (aiosmtplib.SMTPResponseException, aiosmtplib.SMTPRecipientsRefused) as exc:
                code, message = answer(exc)
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
                await self._retry(row, now, problem(self.config, exc))
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
