"""A game's mail coming in: Maildir, IMAP and LMTP, each mail applied in turn (203, 205).

Every way in ends in `deliver`: the mail is applied at its delivery time (`delivery_time`), or
set aside in quarantine and noted (`record_failure`) when it cannot be; a database that is down
or a game lost to another process is raised instead, and the mail stays where it was for
whoever works the game next. `Inboxes` is the runner's `Service` seen from its inboxes: the
Maildir polled, IMAP drained and then watched (IDLE, reconnecting with backoff), LMTP answered
once each mail is committed; and before the deadlines fire, whatever was delivered before them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError

from referee import metrics
from referee.config import Settings
from referee.delivery.outbox import Tally
from referee.delivery.sentbox import MaildirPostman
from referee.delivery.smtp import Postman
from referee.desk.logged import redact
from referee.mail import intake, lmtp
from referee.mail.imap import ImapError, ImapInbox
from referee.mail.maildir import MaildirInbox
from referee.mail.parse import dedupe_key
from referee.ownership import LEASE_SECONDS, database_down, lease_now
from referee.service import Referee
from referee.store.store import DatabaseDown, LostGame, Store

log = logging.getLogger("referee.run")

Clock = Callable[[], datetime]
T = TypeVar("T")
AfterMail = Callable[[], Coroutine[Any, Any, None]]
RECONNECT_FIRST, RECONNECT_MAX = 1.0, 300.0  # seconds, IMAP reconnect backoff
MAILDIR_POLL = 2.0  # seconds between looks at the Maildir


def delivery_time(delivered: datetime | None, now: datetime) -> datetime:
    """When a mail was delivered, as a run whose clock reads `now` takes it: its delivery
    time, never later than `now` (a `--now` behind the Maildir names, a server whose clock
    runs ahead); `now` when the inbox gave none. `Referee.receive` applies it then, or at the
    last event of the log when that is later (a `now` behind the log gives way to the log)."""
    return now if delivered is None else min(delivered, now)


@dataclass
class Summary:
    processed: int = 0
    failed: int = 0  # set aside in quarantine
    unreadable: int = 0  # of them, those that could not be read (the sender was told)
    deadlines: int = 0
    sent: int = 0
    deferred: int = 0
    undeliverable: int = 0


class Inboxes:
    """The inboxes of one game's `Service`, and each mail's way from them into the game."""

    settings: Settings
    store: Store
    clock: Clock
    owner: str  # this process, as the lease tables name it
    referee: Referee
    game_id: int
    halt: threading.Event  # set: stop between two mails (a clean stop)
    postman: Postman | MaildirPostman
    summary: Summary
    _work: ThreadPoolExecutor | None  # the game's own thread, while it is worked
    _reading: asyncio.Lock | None  # one read of the IMAP inbox at a time
    _lmtp_after: AfterMail | None  # what follows a mail taken over LMTP
    _fatal: asyncio.Future[None] | None  # a failure of the database found over LMTP

    @property
    def name(self) -> str:
        return self.settings.game.name

    # ----- one message ---------------------------------------------------------------------

    def process(self, raw: bytes, at: datetime, size: int | None = None) -> None:
        """Apply one message; raises when it fails, so the inbox sets it aside."""
        receipt = self.referee.receive(raw, at, size)
        metrics.mail_in(self.settings.game.key, receipt)

    def deliver(
        self, raw: bytes, size: int, delivered: datetime | None, now: datetime
    ) -> Exception | None:
        """`take` at the mail's delivery time (one clock per run, docs/operations.md), so a
        deadline fires only after the mail delivered before it (203, 213), as `replay` does.
        A delivery time later than `now` (the run's clock, `--now` included) is taken as `now`
        (`delivery_time`); a mail delivered before the last event in the log came too late
        for it and takes effect at that event's time (`Referee.receive`), and its reply says
        so: the log's times never go back."""
        return self.take(raw, delivery_time(delivered, now), size)

    def take(self, raw: bytes, at: datetime, size: int | None = None) -> Exception | None:
        """Apply one message; returns why it must be set aside, or None when it was applied.

        Raises `LostGame` or `DatabaseDown` (the mail stays in the inbox for whoever works the
        game next): a database error is the mail's fault only while the database still works.
        """
        problem = self._attempt(raw, at, size)
        if isinstance(problem, SQLAlchemyError):  # a lock timeout, or this mail's own data
            log.warning("mail failed on a database error (%s); trying it once more", problem)
            problem = self._attempt(raw, at, size)
        return problem

    def _attempt(self, raw: bytes, at: datetime, size: int | None) -> Exception | None:
        try:
            self.process(raw, at, size)
        except (LostGame, DatabaseDown):
            raise
        except SQLAlchemyError as exc:
            self.check_database()  # down or lost: raised, and the mail stays in the inbox
            return exc
        except Exception as exc:
            return exc
        return None

    def check_database(self) -> None:
        """Raise `DatabaseDown` when the store cannot be written, `LostGame` when not ours."""
        try:
            fenced = self.game_id in self.store.fences
            now = lease_now()
            if fenced and not self.store.renew(self.game_id, self.owner, now, LEASE_SECONDS):
                raise LostGame(f"game {self.name!r} is worked by another process now")
            if not fenced:
                self.store.holder(self.game_id, lease_now())  # at least a read
        except SQLAlchemyError as exc:
            raise database_down(exc) from exc

    def record_failure(self, raw: bytes, error: Exception, at: datetime, where: str = "") -> None:
        """Note a mail set aside in quarantine: the log (a warning for a mail that could not be
        read, whose sender has been told; an error for a failure the operator must look
        into), the `inbound` table and the metrics."""
        if raw:
            mid, sender, key = intake.identify(raw)
        else:  # nothing could be read: name it by where it was
            mid, sender, key = f"<{uuid.uuid5(uuid.NAMESPACE_URL, where).hex}@unreadable>", "", None
        metrics.quarantined(self.settings.game.key)
        log.log(
            logging.WARNING if isinstance(error, intake.Unreadable) else logging.ERROR,
            "mail %s from %s%s set aside in quarantine: %s: %s",
            mid,
            redact(sender),
            f" ({where})" if where else "",
            error.__class__.__name__,
            error,
        )
        try:
            self.store.record_failure(
                self.game_id,
                mid,
                sender,
                at,
                f"{error.__class__.__name__}: {error}",
                key=key or dedupe_key(sender, mid, ""),
            )
        except SQLAlchemyError:
            self.check_database()  # a database that is down stops us; else the log has it
            log.warning("could not note mail %s as quarantined in the database", mid)

    def _failed(
        self, raw: bytes, exc: Exception, where: str, summary: Summary, at: datetime | None = None
    ) -> None:
        """A mail set aside, noted at `at`: the run's clock (`run --once --now`), else now."""
        summary.failed += 1
        summary.unreadable += isinstance(exc, intake.Unreadable)
        self.record_failure(raw, exc, at or self.clock(), where)

    def _drain_maildir(
        self, summary: Summary, clock: Clock, inbox: MaildirInbox | None = None
    ) -> int:
        """Apply what waits in the Maildir, each mail at its delivery time."""
        return (inbox or self._maildir()).drain(
            lambda raw, size, delivered: self.deliver(raw, size, delivered, clock()),
            lambda raw, exc, where: self._failed(raw, exc, where, summary, clock()),
            self.halt,
        )

    def _maildir(self) -> MaildirInbox:
        return MaildirInbox(self.settings.maildir, max_bytes=self.settings.game.max_mail_bytes)

    def _count(self, summary: Summary, tally: Tally) -> None:
        summary.sent += tally.sent
        summary.deferred += tally.deferred
        summary.undeliverable += tally.failed
        metrics.mails_out(self.settings.game.key, tally.sent, tally.deferred, tally.failed)

    async def _drain_imap_once(self, summary: Summary, moment: datetime) -> int:
        assert self.settings.imap is not None
        inbox = ImapInbox(self.settings.imap, self.settings.game.max_mail_bytes)
        await inbox.connect()
        try:
            if self.postman is None or self._work is not None:
                return await self._drain(inbox, summary, lambda: moment)
            return await self._drain_sending(inbox, summary, moment)
        finally:
            await inbox.close()

    async def _drain_sending(self, inbox: ImapInbox, summary: Summary, moment: datetime) -> int:
        """The drain of `run --once`, with the mail it queues sent meanwhile, as `run` sends
        it: each mail is applied in the game's own thread while the postman sends what the
        mail before it queued, so a burst's replies go out while the next mails are read
        instead of all after them (issue 19: the burst bench). Every mail is still applied,
        committed and moved before the next; what is sent is what is committed, recorded
        one by one, and whatever is due after the drain goes out after it as before."""
        assert self.postman is not None
        postman = self.postman
        wake = asyncio.Event()
        drained = False

        async def send() -> None:
            while True:
                await wake.wait()
                wake.clear()
                if self.halt.is_set():
                    return
                self._count(summary, await postman.deliver_due(moment))
                if drained:
                    return

        self._work = ThreadPoolExecutor(1, thread_name_prefix=f"game-{self.game_id}")
        sender = asyncio.create_task(send())
        try:
            try:
                done = await self._drain(inbox, summary, lambda: moment, after=wake.set)
            except BaseException:  # the drain's failure is the one to report
                drained = True
                wake.set()
                with contextlib.suppress(Exception):
                    await sender
                raise
            drained = True
            wake.set()
            await sender
        finally:
            work, self._work = self._work, None
            if work is not None:
                work.shutdown(wait=True)
        return done

    async def _drain(
        self,
        inbox: ImapInbox,
        summary: Summary,
        clock: Clock,
        after: Callable[[], None] | None = None,
    ) -> int:
        """Apply what waits in the IMAP inbox; `after` is called once each mail is applied."""

        async def handle(raw: bytes, size: int, delivered: datetime | None) -> Exception | None:
            problem = await self._in_thread(self.deliver, raw, size, delivered, clock())
            if after is not None:
                after()
            return problem

        async def failed(raw: bytes, exc: Exception, where: str) -> None:
            await self._in_thread(self._failed, raw, exc, where, summary, clock())

        game, folder = self.game_id, inbox.config.folder
        validity, _ = await asyncio.to_thread(self.store.mailbox, game, folder)
        if validity and validity != inbox.uidvalidity:
            log.warning(
                "UIDVALIDITY of %s changed (%d -> %d); duplicates are still caught by Message-ID",
                folder,
                validity,
                inbox.uidvalidity,
            )
        async with self._reading or contextlib.nullcontext():
            done, last = await inbox.drain(handle, failed, self.halt)
        if done or validity != inbox.uidvalidity:
            _, previous = await asyncio.to_thread(self.store.mailbox, game, folder)
            await asyncio.to_thread(
                self.store.save_mailbox, game, folder, inbox.uidvalidity, max(last, previous)
            )
        return done

    async def _in_thread(self, function: Callable[..., T], *args: Any) -> T:
        """Run game work in the game's own thread: one at a time, off the event loop."""
        if self._work is None:
            return function(*args)
        return await asyncio.get_running_loop().run_in_executor(self._work, function, *args)

    # ----- direct delivery over LMTP ------------------------------------------------------------

    def lmtp_ready(self) -> bool:
        """Mail for the game can be taken here now: it is worked by this process."""
        return self._lmtp_after is not None and not self.halt.is_set()

    async def take_lmtp(self, raw: bytes) -> str:
        """Settle one mail the MTA hands over; the LMTP answer once it is committed (250), set
        aside in quarantine (250), or could not be (4xx: the MTA keeps it and tries again)."""
        address = self.settings.game.address
        after = self._lmtp_after
        if after is None or self.halt.is_set():
            return lmtp.busy(address)
        try:
            kept = await self._in_thread(self._settle, raw)
        except LostGame:
            return lmtp.busy(address)
        except DatabaseDown as exc:
            if self._fatal is not None and not self._fatal.done():
                self._fatal.set_exception(exc)  # the game stops, as with the other intakes
            return f"451 4.3.0 <{address}>: the referee's database is down; try again later"
        if self._lmtp_after is after:
            try:
                await after()  # the outbox is woken first: the reply goes out now
            except Exception:
                log.exception("%r: after a mail taken over LMTP", self.name)
        if kept is not None:
            return f"250 2.0.0 <{address}>: set aside in quarantine ({kept.name})"
        return f"250 2.0.0 <{address}>: taken"

    def _settle(self, raw: bytes) -> Path | None:
        """In the game's thread: apply the mail (None), or keep it in the quarantine folder
        and note it (the file). Raises, with nothing kept, when it can be neither."""
        now = self.clock()
        problem = self.deliver(raw, len(raw), now, now)
        if problem is None:
            self.summary.processed += 1
            return None
        kept = self._maildir().keep(raw)  # on disk before the MTA lets go of it
        self._failed(raw, problem, f"lmtp, kept as {kept.name}", self.summary)
        return kept

    async def _backlog(self) -> None:
        """At start, the mail that waits, each at its delivery time, before the deadlines that
        fell due while the service was off are caught up (as `replay` interleaves them)."""
        await self._before_deadlines("backlog")

    async def _before_deadlines(self, what: str = "inbox") -> None:
        """Apply what was delivered before a deadline fires, each mail at its delivery time:
        the Maildir, or the IMAP inbox over a connection of its own (the intake's IDLE may not
        have heard of a mail delivered a second before the deadline; issue 15)."""
        if self.settings.imap is not None:
            inbox = ImapInbox(self.settings.imap, self.settings.game.max_mail_bytes)
            try:
                await inbox.connect()
                done = await self._drain(inbox, self.summary, self.clock)
                self.summary.processed += done
            except (LostGame, DatabaseDown):
                raise
            except Exception as exc:  # the intake retries; the deadlines cannot wait on it
                log.warning(
                    "cannot read the IMAP %s before the deadlines (%s: %s)",
                    what,
                    exc.__class__.__name__,
                    exc,
                )
            finally:
                await inbox.close()
            return
        try:
            self.summary.processed += await self._in_thread(
                self._drain_maildir, self.summary, self.clock
            )
        except (LostGame, DatabaseDown):
            raise
        except Exception:  # the folder itself: the intake loop says so and keeps looking
            log.debug("Maildir not read before the deadlines", exc_info=True)

    async def _intake(self, stop: asyncio.Event, after_mail: AfterMail) -> None:
        if self.settings.imap is None:
            await self._maildir_intake(stop, after_mail)
        else:
            await self._imap_intake(stop, after_mail)

    async def _maildir_intake(self, stop: asyncio.Event, after_mail: AfterMail) -> None:
        inbox = await asyncio.to_thread(self._maildir)
        summary, last_error = self.summary, ""
        while not stop.is_set():
            try:
                done = await self._in_thread(self._drain_maildir, summary, self.clock, inbox)
                last_error = ""
            except (LostGame, DatabaseDown):
                raise
            except Exception as exc:  # the folder itself: say so (once), and keep looking
                if str(exc) != last_error:
                    log.exception("cannot read the Maildir %s; trying again", self.settings.maildir)
                last_error, done = str(exc), 0
            summary.processed += done
            if done:
                await after_mail()
            await wait_or_stop(stop, MAILDIR_POLL)

    async def _imap_intake(self, stop: asyncio.Event, after_mail: AfterMail) -> None:
        assert self.settings.imap is not None
        delay = RECONNECT_FIRST
        while not stop.is_set():
            imap = ImapInbox(self.settings.imap, self.settings.game.max_mail_bytes)
            try:
                await imap.connect()
                delay = RECONNECT_FIRST
                while not stop.is_set():
                    done = await self._drain(imap, self.summary, self.clock)
                    self.summary.processed += done
                    if done:
                        await after_mail()
                    await imap.wait_for_mail(stop)
            except (LostGame, DatabaseDown):
                raise
            except (ImapError, OSError, TimeoutError, asyncio.IncompleteReadError) as exc:
                metrics.reconnected(self.settings.game.key)
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
            await wait_or_stop(stop, delay)
            delay = min(RECONNECT_MAX, delay * 2)


async def wait_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
