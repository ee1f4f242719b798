"""The live service: inbox intake, deadlines on a scheduler, and the outbox (rules 112, 203, 205).

`run_once` processes what is in the inbox, every deadline due, and the outbox, then returns
(for cron and tests). `run_forever` watches the inbox (IMAP IDLE, polling as fallback, or the
Maildir), fires deadlines with apscheduler, sends mail as it is queued, and stops cleanly on
SIGTERM or SIGINT. Deadlines are derived from the stored state, so after a restart or a
machine that was off for a day, whatever fell due is fired, once. A deadline fires only after
the inbox (Maildir or IMAP) has been read up to it, `[game] deadline_grace` seconds late for
the server's push of a mail delivered just before it: live and `replay` count the same mail.

One owner per game (212: nothing applied twice): any number of `run` processes (`Worker`s)
may share a database. Each game is worked by the one process that holds its lease, renewed
every HEARTBEAT seconds; a process that dies (even SIGKILL) stops renewing and another takes
the game over after LEASE_SECONDS, reloading the game from the database. The games are shared
out evenly among the live processes. Mail is handled off the event loop, in one worker thread
per game, so IMAP IDLE, SMTP and deadlines stay responsive while a mail is being processed.

With `[lmtp]`, the MTA also hands mail over directly (`referee.mail.lmtp`): the recipient
address picks the game, and each mail is answered only once it is committed or kept in
quarantine; mail for a game this process does not work now gets a 4xx, so the MTA retries.

Nothing is lost silently: a mail that cannot be read or processed is set aside in the
quarantine folder and logged (the sender of one that cannot be read is told, by
`Referee.receive`), and the intake goes on; a database that cannot be written stops
the service with one clear line (`DatabaseDown`) instead of quarantining good mail.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
import threading
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy.exc import SQLAlchemyError

from referee import metrics, stopping
from referee.archive import Keeper
from referee.config import ConfigError, Settings
from referee.core import engine
from referee.core.events import Enrol, MoveAddress, Outcome, Quit
from referee.desk.logged import redact
from referee.mail import intake, lmtp
from referee.mail.auth import warning as auth_warning
from referee.mail.imap import ImapError, ImapInbox
from referee.mail.maildir import MaildirInbox
from referee.mail.sentbox import MaildirPostman
from referee.mail.signing import Signer, SigningError
from referee.mail.smtp import Postman, Tally
from referee.service import Referee
from referee.store.store import DatabaseDown, LostGame, Store, StoreError

log = logging.getLogger("referee.run")

Clock = Callable[[], datetime]
T = TypeVar("T")
AfterMail = Callable[[], Coroutine[Any, Any, None]]
RECONNECT_FIRST, RECONNECT_MAX = 1.0, 300.0  # seconds, IMAP reconnect backoff
MAILDIR_POLL = 2.0  # seconds between looks at the Maildir
OUTBOX_POLL = 30.0  # seconds between looks at the outbox for retries that fell due
LEASE_SECONDS = 6.0  # a game whose owner stops renewing is taken over after this
HEARTBEAT = 1.5  # seconds between renewals of the leases, and looks for games to take


def delivery_time(delivered: datetime | None, now: datetime) -> datetime:
    """When a mail was delivered, as a run whose clock reads `now` takes it: its delivery
    time, never later than `now` (a `--now` behind the Maildir names, a server whose clock
    runs ahead); `now` when the inbox gave none. `Referee.receive` applies it then, or at the
    last event of the log when that is later (a `now` behind the log gives way to the log)."""
    return now if delivered is None else min(delivered, now)


def system_clock() -> datetime:
    return datetime.now(UTC)


def worker_name() -> str:
    """This process, as the lease tables name it: host, pid, and a nonce for pid reuse."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class GameBusy(StoreError):
    """Another live process works the game (`run --once` next to a running service)."""


@dataclass
class Summary:
    processed: int = 0
    failed: int = 0  # set aside in quarantine
    unreadable: int = 0  # of them, those that could not be read (the sender was told)
    deadlines: int = 0
    sent: int = 0
    deferred: int = 0
    undeliverable: int = 0


class Service:
    """One game's referee with its inbox and outbox, worked while this process owns the game."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        clock: Clock = system_clock,
        owner: str | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.owner = owner or worker_name()
        self.referee = Referee.open(store, settings)
        self.game_id = self.referee.game_id
        # Asks the game's drains and its postman to stop between two mails (a clean stop).
        self.halt = threading.Event()
        self.postman = self._postman()
        self.keeper = Keeper(settings, store, self.game_id)  # the archive and the website
        self.summary = Summary()
        self._work: ThreadPoolExecutor | None = None
        # While the game is worked here: what follows a mail taken over LMTP, and where a
        # failure of the database found by an LMTP delivery stops the game.
        self._lmtp_after: AfterMail | None = None
        self._fatal: asyncio.Future[None] | None = None
        # One read of the IMAP inbox at a time: the intake's, or the one before a deadline.
        self._reading: asyncio.Lock | None = None

    def _postman(self) -> Postman | MaildirPostman:
        """SMTP when configured; without [smtp], what the referee sends goes to `sent/`."""
        smtp, address = self.settings.smtp, self.settings.game.address
        signer = None
        if self.settings.dkim is not None:
            try:
                signer = Signer.load(self.settings.dkim, address.rpartition("@")[2])
            except SigningError as exc:
                raise ConfigError(str(exc)) from exc
        if smtp is None:
            return MaildirPostman(
                self.store, self.game_id, self.settings.sent, self.owner, self.halt, signer
            )
        return Postman(
            self.store, self.game_id, smtp, address, owner=self.owner, halt=self.halt, signer=signer
        )

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
                key=key,
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

    # ----- holding the game -----------------------------------------------------------------

    def acquire(self) -> bool:
        """Take the game's lease; on success reload it from the database (its last owner may
        have moved it on) and put back the mail a dead owner was sending."""
        try:
            now = lease_now()
            holder = self.store.holder(self.game_id, now)
            dead = holder if holder is not None and gone(holder) else None
            if not self.store.acquire(self.game_id, self.owner, now, LEASE_SECONDS, dead):
                return False
            if dead is not None:
                log.warning("%r: its last owner %s is gone; taken over at once", self.name, dead)
            self.store.fences[self.game_id] = (self.owner, LEASE_SECONDS)
            self.referee = Referee.open(self.store, self.settings)
            resent = self.store.unclaim(self.game_id)
        except SQLAlchemyError as exc:
            self.store.fences.pop(self.game_id, None)
            raise database_down(exc) from exc
        if resent:
            log.warning("%r: %d mail(s) a stopped process was sending go again", self.name, resent)
        return True

    def checkpoint(self) -> None:
        """A state snapshot at a clean stop, when the game is still ours and the store works."""
        with contextlib.suppress(LostGame, SQLAlchemyError):
            self.referee.checkpoint()

    # ----- once, for cron and tests ----------------------------------------------------------

    def run_once(self, now: datetime | None = None) -> Summary:
        if not self.acquire():
            holder = self.store.holder(self.game_id, lease_now()) or "another process"
            raise GameBusy(f"the game {self.name!r} is being worked by {holder}; nothing done")
        try:
            return self._once(now or self.clock())
        finally:
            self.checkpoint()
            self.release()

    def operate(self, event: Enrol | Quit | MoveAddress, now: datetime | None = None) -> Outcome:
        """An operator's change of the roster, made while this process holds the game, and its
        announcement sent (`nomic-referee players`)."""
        if not self.acquire():
            holder = self.store.holder(self.game_id, lease_now()) or "another process"
            raise GameBusy(
                f"the game {self.name!r} is being worked by {holder}: stop its "
                "'nomic-referee run' first, then change the players; nothing done"
            )
        try:
            moment = now or self.clock()
            outcome = self.referee.operate(event, moment)
            if self.postman is not None:
                asyncio.run(self.postman.deliver_due(moment))
            return outcome
        finally:
            self.checkpoint()
            self.release()

    def _once(self, moment: datetime) -> Summary:
        summary = Summary()
        # The mail first, each at its delivery time: the deadlines due in between fire in order
        # as each mail is applied (`Referee.receive`), the rest after the last mail.
        if self.settings.imap is None:
            summary.processed = self._drain_maildir(summary, lambda: moment)
        else:
            summary.processed = asyncio.run(self._drain_imap_once(summary, moment))
        if self.halt.is_set():  # a stop was asked for: the rest waits for the next run
            return summary
        summary.deadlines += self.referee.advance(moment)
        if self.postman is not None:
            tally = asyncio.run(self.postman.deliver_due(moment))
            self._count(summary, tally)
        self.referee.checkpoint()
        self.archive()
        return summary

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

    def archive(self) -> None:
        """Bring the archive, its git history and the website up to date, when configured."""
        try:
            written = self.keeper.update()
        except Exception:  # derived data: a full disk or a bug here must not stop the game
            log.exception("could not write the archive or the site; the event log has it all")
            return
        if written.files or written.commits or written.pages:
            log.info(
                "archive: %d file(s), %d commit(s); site: %d page(s)",
                written.files,
                written.commits,
                written.pages,
            )

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

    # ----- for months on end -------------------------------------------------------------------

    async def run_forever(self, stop: asyncio.Event | None = None) -> Summary:
        """Until SIGTERM/SIGINT (or `stop` is set): this game, in a worker of its own."""
        await Worker([self]).run(stop)
        return self.summary

    async def serve(self, stop: asyncio.Event, worker: Worker) -> None:
        """Stand by until the game can be taken, work it while it is ours; again until stop."""
        announced = False
        while not stop.is_set():
            taken = worker.may_take() and await asyncio.to_thread(self.acquire)
            if not taken:
                if not announced:
                    log.info("%r: standing by while another process works it", self.name)
                    announced = True
                await _sleep(stop, HEARTBEAT)
                continue
            announced = False
            worker.held.add(self)
            log.info("%r: worked by this process (%s)", self.name, self.owner)
            released = False
            try:
                released = await self._work_game(stop, worker)
            except LostGame:
                log.warning("%r: taken over by another process; standing by", self.name)
            finally:
                worker.held.discard(self)
            if released:  # handed to a process with fewer games: leave it to them a while
                await _sleep(stop, LEASE_SECONDS)

    async def _work_game(self, stop: asyncio.Event, worker: Worker) -> bool:
        """Work the game until stop (False) or until the worker hands it on (True)."""
        self.halt.clear()
        self._work = ThreadPoolExecutor(1, thread_name_prefix=f"game-{self.game_id}")
        self._reading = asyncio.Lock()
        done = asyncio.Event()  # the game's tasks end: stop, or handed on
        wake_outbox, wake_clock = asyncio.Event(), asyncio.Event()
        scheduler = AsyncIOScheduler(timezone=UTC)
        released = False

        grace = timedelta(seconds=self.settings.game.deadline_grace)

        def reschedule() -> None:
            due = engine.next_deadline(self.referee.state)
            if due is None:
                if scheduler.get_job("deadline"):
                    scheduler.remove_job("deadline")
                return
            scheduler.add_job(
                wake_clock.set,
                "date",
                run_date=max(due + grace, self.clock()),  # the server's push of the last mail
                id="deadline",
                replace_existing=True,
                misfire_grace_time=None,
                coalesce=True,
            )

        async def clock() -> None:
            while True:
                await wake_clock.wait()
                wake_clock.clear()
                await self._before_deadlines()
                self.summary.deadlines += await self._in_thread(self.referee.advance, self.clock())
                wake_outbox.set()
                reschedule()
                await self._in_thread(self.archive)

        async def after_mail() -> None:
            wake_outbox.set()
            reschedule()
            await self._in_thread(self.archive)

        async def heartbeat() -> None:
            nonlocal released
            while True:
                await asyncio.sleep(HEARTBEAT)
                try:
                    mine = await asyncio.to_thread(
                        self.store.renew, self.game_id, self.owner, lease_now(), LEASE_SECONDS
                    )
                except SQLAlchemyError as exc:
                    raise database_down(exc) from exc
                if not mine:
                    raise LostGame(f"game {self.name!r} is worked by another process now")
                if worker.should_hand_on(self):
                    log.info("%r: handed on to a process with fewer games", self.name)
                    released = True
                    done.set()
                    return

        async def fatal() -> None:
            assert self._fatal is not None
            await self._fatal  # raises what an LMTP delivery found: the database is down

        tasks: list[asyncio.Task[Any]] = []
        outbox: asyncio.Task[Any] | None = None
        stopper: asyncio.Task[Any] | None = None
        ender: asyncio.Task[Any] | None = None
        try:
            scheduler.start()
            await self._backlog()  # after downtime: the mail delivered meanwhile, then deadlines
            self.summary.deadlines += await self._in_thread(self.referee.advance, self.clock())
            reschedule()
            scheduler.add_job(wake_outbox.set, "interval", seconds=OUTBOX_POLL, id="outbox-retry")
            wake_outbox.set()
            self._fatal = asyncio.get_running_loop().create_future()
            jobs = [self._intake(stop, after_mail), clock(), heartbeat(), fatal()]
            tasks += [asyncio.create_task(job) for job in jobs]
            if self.postman is not None:
                outbox = asyncio.create_task(self._outbox(wake_outbox))
            self._lmtp_after = after_mail  # mail over LMTP is taken from now on
            if self.settings.lmtp is not None:
                log.info("%r: taking mail over LMTP", self.name)
            stopper = asyncio.create_task(stop.wait())
            ender = asyncio.create_task(done.wait())
            running = {*tasks, stopper, ender} | ({outbox} if outbox else set())
            while not (stop.is_set() or done.is_set()):
                finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    if not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
            return released
        finally:
            self._lmtp_after = None  # LMTP answers 4xx from now: the MTA tries again later
            self.halt.set()
            wake_outbox.set()  # an idle outbox ends; a busy one ends after the mail in hand
            tasks += [t for t in (stopper, ender) if t is not None]
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if outbox is not None:
                await self._finish_outbox(outbox)
            scheduler.shutdown(wait=False)
            work, self._work = self._work, None
            await asyncio.to_thread(work.shutdown, True)  # the mail in hand is finished first
            await asyncio.to_thread(self.checkpoint)
            await asyncio.to_thread(self.release)
            if self._fatal is not None and not self._fatal.done():
                self._fatal.cancel()
            self._fatal = None

    async def _finish_outbox(self, outbox: asyncio.Task[Any]) -> None:
        """Wait for the outbox pass in hand to stop between two mails; cancel it only when a
        mail server hangs beyond its own timeout (that one mail may then go out again)."""
        smtp = self.settings.smtp
        patience = 2 * smtp.timeout + 5 if smtp is not None else 30.0
        try:
            await asyncio.wait_for(asyncio.shield(outbox), patience)
        except TimeoutError:
            log.warning("%r: the outbox did not stop in %.0f s; cancelled", self.name, patience)
            outbox.cancel()
        except asyncio.CancelledError:
            outbox.cancel()
            raise
        except Exception:  # its failure was raised already when it ended the game
            log.debug("outbox ended with an error", exc_info=True)
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await outbox

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

    def release(self) -> None:
        """Give the game up: mail this process claimed but did not send goes back first."""
        if self.game_id in self.store.fences:
            with contextlib.suppress(SQLAlchemyError):
                if self.store.renew(self.game_id, self.owner, lease_now(), LEASE_SECONDS):
                    self.store.unclaim(self.game_id)
        self.store.fences.pop(self.game_id, None)
        with contextlib.suppress(SQLAlchemyError):
            self.store.release(self.game_id, self.owner)

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
            await _sleep(stop, MAILDIR_POLL)

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
            await _sleep(stop, delay)
            delay = min(RECONNECT_MAX, delay * 2)

    async def _outbox(self, wake: asyncio.Event) -> None:
        """Send what is due each time `wake` is set, until `halt`: a stop is never a
        cancellation in the middle of a mail, so no mail goes out unrecorded."""
        assert self.postman is not None
        while True:
            await wake.wait()
            wake.clear()
            if self.halt.is_set():
                return
            try:
                self._count(self.summary, await self.postman.deliver_due(self.clock()))
                retry = await asyncio.to_thread(self.store.next_attempt, self.game_id)
            except SQLAlchemyError:
                await asyncio.to_thread(self.check_database)  # down: the service stops
                log.exception("outbox pass failed; trying again later")
                with contextlib.suppress(SQLAlchemyError):
                    await asyncio.to_thread(self.store.unclaim, self.game_id)
                asyncio.get_running_loop().call_later(OUTBOX_POLL, wake.set)
                continue
            if retry is not None:  # wake for the earliest retry, not only the next mail
                delay = max(0.0, (retry - self.clock()).total_seconds())
                asyncio.get_running_loop().call_later(delay, wake.set)


class Worker:
    """One `run` process: its games, each worked here while this process holds its lease.

    The live processes sharing a database announce themselves by heartbeat; each takes at most
    its fair share of the games (rounded up), and hands games on when more processes join.
    """

    def __init__(self, services: list[Service], name: str | None = None) -> None:
        self.services = services
        self.name = name or (services[0].owner if services else worker_name())
        for service in services:
            service.owner = self.name
            if service.postman is not None:
                service.postman.owner = self.name
        self.held: set[Service] = set()
        self.alive = 1

    @property
    def share(self) -> int:
        return max(1, math.ceil(len(self.services) / max(1, self.alive)))

    def may_take(self) -> bool:
        return len(self.held) < self.share

    def should_hand_on(self, service: Service) -> bool:
        if len(self.held) > self.share and service in self.held:
            self.held.discard(service)  # decided now, so only the extra games go
            return True
        return False

    async def _listen(self) -> list[asyncio.Server]:
        """One LMTP server per [lmtp] address and port; the games on it told by address."""
        groups: dict[tuple[str, int], list[Service]] = {}
        for service in self.services:
            if service.settings.lmtp is not None:
                where = (service.settings.lmtp.address, service.settings.lmtp.port)
                groups.setdefault(where, []).append(service)
        servers: list[asyncio.Server] = []
        try:
            for (address, port), services in groups.items():
                servers.append(await lmtp.listen(address, port, [_Desk(s) for s in services]))
                names = ", ".join(repr(s.name) for s in services)
                log.info("LMTP: listening on %s:%d for %s", address, port, names)
        except BaseException:
            await _close(servers)
            raise
        return servers

    def _stores(self) -> list[Store]:
        return list({id(s.store): s.store for s in self.services}.values())

    def _beat(self) -> int:
        now = lease_now()
        try:
            return max(s.beat(self.name, now, LEASE_SECONDS) for s in self._stores())
        except SQLAlchemyError as exc:
            raise database_down(exc) from exc

    async def _heartbeat(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.alive = await asyncio.to_thread(self._beat)
            await _sleep(stop, HEARTBEAT)

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Until SIGTERM/SIGINT (or `stop`); raises `DatabaseDown` when the store fails."""
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in stopping.SIGNALS:
            # Only the main thread of a POSIX loop can take signals; elsewhere `stop` is enough.
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        if stopping.asked():  # asked while the process started: stop as soon as it can
            stop.set()
        servers = await self._listen()  # a port in use fails here, at once
        try:
            self.alive = await asyncio.to_thread(self._beat)  # and a read-only store
        except BaseException:
            await _close(servers)
            raise
        tasks = [asyncio.create_task(self._heartbeat(stop))]
        tasks += [asyncio.create_task(s.serve(stop, self)) for s in self.services]
        for service in self.services:
            unguarded = auth_warning(service.settings)
            if unguarded:
                log.warning(unguarded)
        watched = self.services[0].settings.metrics if self.services else None
        if watched is not None and watched.port:
            metrics.serve(watched.port, watched.address, self.services)
        log.info("referee running: %s", ", ".join(repr(s.name) for s in self.services))
        failure: BaseException | None = None
        try:
            stopper = asyncio.create_task(stop.wait())
            await asyncio.wait([*tasks, stopper], return_when=asyncio.FIRST_COMPLETED)
            stopper.cancel()
            await _close(servers)  # no new mail over LMTP while the games stop
            for task in tasks:
                if task.done() and not task.cancelled() and task.exception() is not None:
                    failure = task.exception()
                    break
            stop.set()  # a failed game stops the process: the log and the exit say why
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            await _close(servers)
            for task in tasks:
                task.cancel()
            with contextlib.suppress(SQLAlchemyError):
                for store in self._stores():
                    await asyncio.to_thread(store.leave, self.name)
            log.info("referee stopped")
        if failure is not None:
            raise failure


class _Desk:
    """A game's door on the LMTP server (`referee.mail.lmtp.Desk`)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.address = service.settings.game.address.lower()
        self.addresses = tuple(a.lower() for a in service.settings.game.addresses)
        self.max_bytes = service.settings.game.max_mail_bytes

    def ready(self) -> bool:
        return self.service.lmtp_ready()

    async def take(self, raw: bytes) -> str:
        return await self.service.take_lmtp(raw)


async def _close(servers: list[asyncio.Server]) -> None:
    for server in servers:
        server.close()
    for server in servers:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5)
    servers.clear()


def gone(owner: str) -> bool:
    """True when `owner` is a process of this machine that no longer runs (killed, crashed):
    its games need not wait for the lease to expire. Other machines' processes: never known."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    try:  # a zombie nobody reaped yet is gone too
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def lease_now() -> datetime:
    """Leases always run on the real clock, whatever clock the games are played at."""
    return datetime.now(UTC)


def database_down(exc: BaseException) -> DatabaseDown:
    reason = " ".join(str(getattr(exc, "orig", None) or exc).split())[:300]
    return DatabaseDown(f"the database cannot be written or reached; the referee stops: {reason}")


async def _sleep(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
