"""The live service: inbox intake, deadlines on a scheduler, and the outbox (rules 112, 203, 205).

`run_once` processes what is in the inbox, every deadline due, and the outbox, then returns
(for cron and tests). `run_forever` watches the inbox (IMAP IDLE, polling as fallback, or the
Maildir), fires deadlines with apscheduler, sends mail as it is queued, and stops cleanly on
SIGTERM or SIGINT. Deadlines are derived from the stored state, so after a restart or a
machine that was off for a day, whatever fell due is fired, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from referee.archive import write_archive
from referee.config import Settings
from referee.core import engine
from referee.mail.auth import warning as auth_warning
from referee.mail.imap import ImapError, ImapInbox
from referee.mail.maildir import MaildirInbox
from referee.mail.parse import parse_message
from referee.mail.smtp import Postman, Tally
from referee.service import Referee, redact
from referee.store.store import Store

log = logging.getLogger("referee.run")

Clock = Callable[[], datetime]
RECONNECT_FIRST, RECONNECT_MAX = 1.0, 300.0  # seconds, IMAP reconnect backoff
MAILDIR_POLL = 2.0  # seconds between looks at the Maildir
OUTBOX_POLL = 30.0  # seconds between looks at the outbox for retries that fell due


def system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class Summary:
    processed: int = 0
    failed: int = 0
    deadlines: int = 0
    sent: int = 0
    deferred: int = 0
    undeliverable: int = 0


class Service:
    """One game's referee with its inbox and outbox."""

    def __init__(self, settings: Settings, store: Store, clock: Clock = system_clock) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.referee = Referee.open(store, settings)
        self.postman = (
            Postman(store, self.referee.game_id, settings.smtp, settings.game.address)
            if settings.smtp is not None
            else None
        )

    # ----- one message ---------------------------------------------------------------------

    def process(self, raw: bytes, at: datetime) -> None:
        """Apply one message; raises when it fails, so the inbox sets it aside."""
        self.referee.receive(raw, at)

    def record_failure(self, raw: bytes, error: Exception, at: datetime) -> None:
        try:
            mail = parse_message(raw)
            mid, sender, key = mail.message_id, mail.sender, mail.dedupe_key
        except Exception:  # even the headers are unreadable
            mid, sender, key = "<unparseable>", "", None
        log.error(
            "mail %s from %s set aside: %s: %s",
            mid,
            redact(sender),
            error.__class__.__name__,
            error,
        )
        with contextlib.suppress(Exception):
            self.store.record_failure(
                self.referee.game_id,
                mid,
                sender,
                at,
                f"{error.__class__.__name__}: {error}",
                key=key,
            )

    # ----- once, for cron and tests ----------------------------------------------------------

    def run_once(self, now: datetime | None = None) -> Summary:
        moment = now or self.clock()
        summary = Summary()
        summary.deadlines += self.referee.advance(moment)
        if self.settings.imap is None:
            inbox = MaildirInbox(self.settings.maildir)
            summary.processed = inbox.drain(
                lambda raw: self.process(raw, moment),
                lambda raw, exc: self._failed(summary, raw, exc, moment),
            )
        else:
            summary.processed = asyncio.run(self._drain_imap_once(summary, moment))
        summary.deadlines += self.referee.advance(moment)
        if self.postman is not None:
            tally = asyncio.run(self.postman.deliver_due(moment))
            self._count(summary, tally)
        self.referee.checkpoint()
        self.archive()
        return summary

    def archive(self) -> None:
        """Bring the on-disk rule archive up to date, when the config names a folder."""
        folder = self.settings.game.archive
        if folder is None:
            return
        try:
            changed = write_archive(self.referee.state, folder)
        except OSError:  # a full disk must not stop the game; the event log has it all
            log.exception("could not write the rule archive in %s", folder)
            return
        if changed:
            log.info("archive: %d file(s) written in %s", len(changed), folder)

    def _failed(self, summary: Summary, raw: bytes, exc: Exception, at: datetime) -> None:
        summary.failed += 1
        self.record_failure(raw, exc, at)

    def _count(self, summary: Summary, tally: Tally) -> None:
        summary.sent += tally.sent
        summary.deferred += tally.deferred
        summary.undeliverable += tally.failed

    async def _drain_imap_once(self, summary: Summary, moment: datetime) -> int:
        assert self.settings.imap is not None
        inbox = ImapInbox(self.settings.imap)
        await inbox.connect()
        try:
            done, _ = await self._drain(inbox, summary, lambda: moment)
            return done
        finally:
            await inbox.close()

    async def _drain(self, inbox: ImapInbox, summary: Summary, clock: Clock) -> tuple[int, int]:
        async def handle(raw: bytes) -> None:
            self.process(raw, clock())

        async def failed(raw: bytes, exc: Exception) -> None:
            self._failed(summary, raw, exc, clock())

        game, folder = self.referee.game_id, inbox.config.folder
        validity, _ = self.store.mailbox(game, folder)
        if validity and validity != inbox.uidvalidity:
            log.warning(
                "UIDVALIDITY of %s changed (%d -> %d); duplicates are still caught by Message-ID",
                folder,
                validity,
                inbox.uidvalidity,
            )
        done, last = await inbox.drain(handle, failed)
        if done or validity != inbox.uidvalidity:
            _, previous = self.store.mailbox(game, folder)
            self.store.save_mailbox(game, folder, inbox.uidvalidity, max(last, previous))
        return done, last

    # ----- for months on end -------------------------------------------------------------------

    async def run_forever(self, stop: asyncio.Event | None = None) -> Summary:
        """Until SIGTERM/SIGINT (or `stop` is set): the whole service in one event loop."""
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            # Only the main thread of a POSIX loop can take signals; elsewhere `stop` is enough.
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        summary = Summary()
        unguarded = auth_warning(self.settings)
        if unguarded:
            log.warning(unguarded)
        wake_outbox = asyncio.Event()
        scheduler = AsyncIOScheduler(timezone=UTC)
        scheduler.start()

        def reschedule() -> None:
            due = engine.next_deadline(self.referee.state)
            if due is None:
                if scheduler.get_job("deadline"):
                    scheduler.remove_job("deadline")
                return
            scheduler.add_job(
                fire,
                "date",
                run_date=max(due, self.clock()),
                id="deadline",
                replace_existing=True,
                misfire_grace_time=None,
                coalesce=True,
            )

        async def fire() -> None:
            summary.deadlines += self.referee.advance(self.clock())
            wake_outbox.set()
            reschedule()
            self.archive()

        def after_mail() -> None:
            wake_outbox.set()
            reschedule()
            self.archive()

        summary.deadlines += self.referee.advance(self.clock())  # what fell due while off
        reschedule()
        scheduler.add_job(wake_outbox.set, "interval", seconds=OUTBOX_POLL, id="outbox-retry")
        tasks = [
            asyncio.create_task(self._intake(stop, summary, after_mail)),
            asyncio.create_task(self._outbox(stop, wake_outbox, summary)),
        ]
        wake_outbox.set()
        log.info("referee of %r running", self.settings.game.name)
        try:
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            scheduler.shutdown(wait=False)
            self.referee.checkpoint()
            log.info("referee of %r stopped", self.settings.game.name)
        return summary

    async def _intake(
        self, stop: asyncio.Event, summary: Summary, after_mail: Callable[[], None]
    ) -> None:
        if self.settings.imap is None:
            inbox = MaildirInbox(self.settings.maildir)
            while not stop.is_set():
                done = inbox.drain(
                    lambda raw: self.process(raw, self.clock()),
                    lambda raw, exc: self._failed(summary, raw, exc, self.clock()),
                )
                summary.processed += done
                if done:
                    after_mail()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), MAILDIR_POLL)
            return
        delay = RECONNECT_FIRST
        while not stop.is_set():
            imap = ImapInbox(self.settings.imap)
            try:
                await imap.connect()
                delay = RECONNECT_FIRST
                while not stop.is_set():
                    done, _ = await self._drain(imap, summary, self.clock)
                    summary.processed += done
                    if done:
                        after_mail()
                    await imap.wait_for_mail(stop)
            except (ImapError, OSError, TimeoutError, asyncio.IncompleteReadError) as exc:
                log.warning(
                    "IMAP connection lost (%s: %s); reconnecting in %.0f s",
                    exc.__class__.__name__,
                    exc,
                    delay,
                )
            except Exception as exc:  # aioimaplib's own errors: same remedy
                log.warning(
                    "IMAP error (%s: %s); reconnecting in %.0f s",
                    exc.__class__.__name__,
                    exc,
                    delay,
                )
            finally:
                await imap.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(RECONNECT_MAX, delay * 2)

    async def _outbox(self, stop: asyncio.Event, wake: asyncio.Event, summary: Summary) -> None:
        if self.postman is None:
            return
        while not stop.is_set():
            await wake.wait()
            wake.clear()
            try:
                self._count(summary, await self.postman.deliver_due(self.clock()))
                retry = await asyncio.to_thread(self.store.next_attempt, self.referee.game_id)
            except Exception:  # a database hiccup must not stop the postman for good
                log.exception("outbox pass failed; trying again later")
                continue
            if retry is not None:  # wake for the earliest retry, not only the next mail
                delay = max(0.0, (retry - self.clock()).total_seconds())
                asyncio.get_running_loop().call_later(delay, wake.set)
