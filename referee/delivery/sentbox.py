"""The outbox worker without [smtp]: every due mail is written to a `sent` Maildir (107, 205).

The embedded default for a game with no mail server: what the referee would have sent lands,
one file per recipient, in a Maildir that any mail client opens (`mutt -f sent`, Thunderbird,
Evolution, or Dovecot serving it). It is the SMTP postman's twin: same outbox rows, same
`deliver_due` and `Tally`, so the runner needs no other change. Maildir delivery is atomic
(written in tmp/, renamed into new/); a crash between the rename and the database record may
write the same Message-ID twice, as SMTP may.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

from referee.delivery.outbox import CLAIM_BATCH, Outbox, Tally, backoff
from referee.mail.maildir import deliver, make_maildir
from referee.mail.signing import Signer
from referee.store.tables import OutboxRow, OutboxStatus

log = logging.getLogger("referee.sent")


class MaildirPostman:
    """Writes one game's due outbox rows to a Maildir instead of sending them."""

    def __init__(
        self,
        store: Outbox,
        game_id: int,
        folder: Path,
        owner: str = "postman",
        halt: threading.Event | None = None,
        signer: Signer | None = None,
    ) -> None:
        self.store = store
        self.game_id = game_id
        self.folder = folder
        self.owner = owner  # the process claiming the rows it writes, as the SMTP postman does
        self.halt = halt or threading.Event()  # set: stop between two mails (a clean stop)
        self.signer = signer  # [dkim]: each mail is signed as it is written

    async def deliver_due(self, now: datetime | None = None, batch: int = CLAIM_BATCH) -> Tally:
        """Write every due row; a folder that cannot be written leaves the rows waiting.

        On `halt` it stops between two mails; the rows it claimed and did not write go back
        when the game is released, so none is written twice.
        """
        moment = now or datetime.now(UTC)
        tally = Tally()
        while not self.halt.is_set():
            rows = await asyncio.to_thread(
                self.store.claim, self.game_id, self.owner, moment, batch
            )
            if not rows:
                break
            written: list[OutboxRow] = []
            try:
                await asyncio.to_thread(self._write, rows, moment, written)
            except OSError as exc:  # a full disk or a read-only folder: the rows wait
                log.error("cannot write to the sent Maildir %s: %s", self.folder, exc)
                left = [r for r in rows if r not in written]
                await asyncio.to_thread(self._put_back, left, moment, str(exc))
                tally.sent += len(written)
                tally.deferred += len(left)
                break
            tally.sent += len(written)
            if len(rows) < batch:
                break
        if tally.sent:
            log.info("outbox: %d written to %s", tally.sent, self.folder)
        return tally

    def _write(self, rows: list[OutboxRow], now: datetime, written: list[OutboxRow]) -> None:
        make_maildir(self.folder)
        for row in rows:
            assert row.id is not None
            if self.halt.is_set():
                return
            deliver(self.folder, self.signer.sign(row.raw) if self.signer else row.raw, "sent")
            self.store.mark_outbox(
                row.id, OutboxStatus.SENT, row.attempts + 1, now, None, "", self.owner
            )
            written.append(row)

    def _put_back(self, rows: list[OutboxRow], now: datetime, error: str) -> None:
        """Claimed rows that could not be written wait again, unclaimed, for a retry with backoff.

        The backoff keeps a full disk from making the worker spin on the same rows.
        """
        for row in rows:
            assert row.id is not None
            attempts = row.attempts + 1
            when = now + backoff(attempts)
            self.store.mark_outbox(
                row.id, OutboxStatus.PENDING, attempts, now, when, error, self.owner
            )
