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
import mailbox
from datetime import UTC, datetime
from pathlib import Path

from referee.mail.smtp import Tally
from referee.store.store import Store
from referee.store.tables import OutboxRow

log = logging.getLogger("referee.sent")


def open_sent(path: Path) -> mailbox.Maildir:
    """The sent Maildir, with new/, cur/ and tmp/ made when missing."""
    for sub in ("new", "cur", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    return mailbox.Maildir(str(path), create=True)


class MaildirPostman:
    """Writes one game's due outbox rows to a Maildir instead of sending them."""

    def __init__(self, store: Store, game_id: int, folder: Path, owner: str = "postman") -> None:
        self.store = store
        self.game_id = game_id
        self.folder = folder
        self.owner = owner  # the process claiming the rows it writes, as the SMTP postman does

    async def deliver_due(self, now: datetime | None = None, batch: int = 500) -> Tally:
        """Write every due row; a folder that cannot be written leaves the rows waiting."""
        moment = now or datetime.now(UTC)
        tally = Tally()
        while True:
            rows = await asyncio.to_thread(
                self.store.claim, self.game_id, self.owner, moment, batch
            )
            if not rows:
                break
            before = tally.sent
            try:
                await asyncio.to_thread(self._write, rows, moment, tally)
            except OSError as exc:  # a full disk or a read-only folder: the rows wait
                log.error("cannot write to the sent Maildir %s: %s", self.folder, exc)
                written = tally.sent - before
                for row in rows[written:]:  # back to pending, claimed by no one
                    assert row.id is not None
                    await asyncio.to_thread(
                        self.store.mark_outbox,
                        row.id,
                        "pending",
                        row.attempts,
                        moment,
                        moment,
                        str(exc),
                        self.owner,
                    )
                tally.deferred += len(rows) - written
                break
            if len(rows) < batch:
                break
        if tally.sent:
            log.info("outbox: %d written to %s", tally.sent, self.folder)
        return tally

    def _write(self, rows: list[OutboxRow], now: datetime, tally: Tally) -> None:
        box = open_sent(self.folder)
        for row in rows:
            assert row.id is not None
            box.add(row.raw)
            self.store.mark_outbox(row.id, "sent", row.attempts + 1, now, None, "", self.owner)
            tally.sent += 1
