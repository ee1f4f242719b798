"""IMAP intake with aioimaplib: IDLE for push, polling as fallback, reconnect with backoff.

Serves every mail command (rules 103-215). A message is fetched with BODY.PEEK[] (it stays
unseen), processed and committed, and only then moved to the `Processed` folder. A message
that makes processing fail is moved to `Quarantine`. Nothing is ever deleted. Sizes are asked
first (RFC822.SIZE): a message over the game's limit is fetched only up to its headers, and a
batch is never more than BATCH_BYTES. Messages are handed over in delivery order with their
INTERNALDATE, the time each is applied at (203, 213). UIDVALIDITY and the highest UID seen are
recorded; since processed mail leaves the INBOX and duplicates are recognised by Message-ID, a
UIDVALIDITY change only needs to be logged. With `auth = "oauth2"` the login is AUTHENTICATE
XOAUTH2 with a token from referee/mail/oauth.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import ssl
import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from aioimaplib import aioimaplib

from referee.config import ImapConfig
from referee.mail import oauth, servers

log = logging.getLogger("referee.imap")

BATCH = 100  # messages fetched per UID FETCH
BATCH_BYTES = 20_000_000  # and at most this much mail in one
# Applies one message (raw, or its head when too large; its real size; its INTERNALDATE, when it
# was delivered); returns why it must
# be set aside, or None once committed; raises to stop with the message left in the folder.
Handler = Callable[[bytes, int, datetime | None], Awaitable[Exception | None]]
Failure = Callable[[bytes, Exception, str], Awaitable[None]]  # raw, why, where it was


class ImapError(ConnectionError):
    """The IMAP server refused or dropped what the referee asked."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check(response: aioimaplib.Response, what: str) -> aioimaplib.Response:
    if response.result != "OK":
        detail = b" ".join(bytes(x) for x in response.lines[-1:]).decode(errors="replace")
        raise ImapError(f"{what}: {response.result} {detail}")
    return response


def parse_fetch(lines: list[bytes | bytearray]) -> list[tuple[int, bytes]]:
    """UID and raw message of each item of a `UID FETCH (UID BODY.PEEK[])` answer."""
    found: list[tuple[int, bytes]] = []
    pending_uid: int | None = None
    literal: bytes | None = None
    for line in lines:
        if isinstance(line, bytearray):
            literal = bytes(line)
            if pending_uid is not None:
                found.append((pending_uid, literal))
                pending_uid, literal = None, None
            continue
        match = re.search(rb"UID (\d+)", line)
        if b"FETCH" in line:
            pending_uid = int(match.group(1)) if match else None
            literal = None
        elif match and literal is not None:  # UID given after the literal
            found.append((int(match.group(1)), literal))
            literal = None
    return found


def parse_sizes(lines: list[bytes | bytearray]) -> dict[int, int]:
    """UID -> RFC822.SIZE from a `UID FETCH (UID RFC822.SIZE)` answer."""
    sizes: dict[int, int] = {}
    for line in lines:
        text = bytes(line)
        uid, size = re.search(rb"UID (\d+)", text), re.search(rb"RFC822\.SIZE (\d+)", text)
        if uid and size:
            sizes[int(uid.group(1))] = int(size.group(1))
    return sizes


def parse_dates(lines: list[bytes | bytearray]) -> dict[int, datetime]:
    """UID -> INTERNALDATE (when the server took the message) from a `UID FETCH` answer."""
    dates: dict[int, datetime] = {}
    for line in lines:
        text = bytes(line)
        uid, date = re.search(rb"UID (\d+)", text), re.search(rb'INTERNALDATE "([^"]+)"', text)
        if uid and date:
            with contextlib.suppress(ValueError):
                at = datetime.strptime(date.group(1).decode().strip(), "%d-%b-%Y %H:%M:%S %z")
                dates[int(uid.group(1))] = at.astimezone(UTC)
    return dates


class _Authenticate(aioimaplib.Command):  # type: ignore[misc]
    """AUTHENTICATE with an initial response (RFC 4959). A refusal of XOAUTH2 comes first as
    a `+` line carrying the error (base64 JSON); the client answers it with an empty line,
    then the server says NO. aioimaplib keeps that `+` line and would wait for ever."""

    def __init__(self, protocol: aioimaplib.IMAP4ClientProtocol, mechanism: str, data: str):
        super().__init__("AUTHENTICATE", protocol.new_tag(), mechanism, data, loop=protocol.loop)
        self.protocol = protocol

    def append_to_resp(self, line: bytes, result: str = "Pending") -> None:
        super().append_to_resp(line, result)
        if bytes(line).startswith(b"+"):
            self.protocol.transport.write(b"\r\n")


class ImapInbox:
    """One connection to the referee's mailbox."""

    def __init__(self, config: ImapConfig, max_bytes: int | None = None) -> None:
        self.config = config
        self.max_bytes = max_bytes
        self.client: aioimaplib.IMAP4 | None = None
        self.uidvalidity = 0
        self.can_idle = False
        self.can_move = False
        self.lost = asyncio.Event()  # set by the transport when the server goes away

    def _context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.config.ca_file or None)

    async def connect(self, create_folders: bool = True) -> None:
        """Log in and select the folder; a failure is an ImapError naming the server.

        `create_folders=False` (doctor without consent) leaves missing folders missing.
        """
        c = self.config
        try:
            await self._connect(create_folders)
        except ImapError as exc:
            raise ImapError(servers.problem("IMAP", c.host, c.port, exc, c.ca_file)) from exc
        except oauth.TokenError:
            raise  # the token endpoint's trouble, which it names
        except (OSError, TimeoutError, asyncio.IncompleteReadError) as exc:
            raise ImapError(servers.problem("IMAP", c.host, c.port, exc, c.ca_file)) from exc

    async def _connect(self, create_folders: bool) -> None:
        c = self.config
        if c.security == "none" and not _is_loopback(c.host):
            raise ImapError("security = 'none' is allowed only on a loopback address")
        if c.security == "tls":
            client: aioimaplib.IMAP4 = aioimaplib.IMAP4_SSL(
                host=c.host, port=c.port, ssl_context=self._context(), timeout=30
            )
        else:
            client = aioimaplib.IMAP4(host=c.host, port=c.port, timeout=30)
        client.protocol.conn_lost_cb = lambda _exc: self.lost.set()
        await client.wait_hello_from_server()
        if c.security == "starttls":
            await self._starttls(client)
        if c.auth == "oauth2":
            await self._xoauth2(client)
        else:
            _check(await client.login(c.username, c.password), "LOGIN")
        self.client = client
        await self._capabilities()
        for folder in (c.processed, c.quarantine) if create_folders else ():
            response = await client.create(folder)
            if (
                response.result != "OK"
                and b"exists" not in b" ".join(bytes(x) for x in response.lines).lower()
            ):
                raise ImapError(f"CREATE {folder}: {response.result}")
        selected = _check(await client.select(c.folder), f"SELECT {c.folder}")
        for line in selected.lines:
            found = re.search(rb"UIDVALIDITY (\d+)", bytes(line))
            if found:
                self.uidvalidity = int(found.group(1))
        log.info(
            "connected to %s:%d, folder %s, UIDVALIDITY %d, IDLE %s",
            c.host,
            c.port,
            c.folder,
            self.uidvalidity,
            "yes" if self.can_idle else "no",
        )

    async def _starttls(self, client: aioimaplib.IMAP4) -> None:
        """aioimaplib has no STARTTLS of its own: send it, then upgrade the transport."""
        protocol = client.protocol
        command = aioimaplib.Command("STARTTLS", protocol.new_tag(), loop=protocol.loop)
        _check(await protocol.execute(command), "STARTTLS")
        loop = asyncio.get_running_loop()
        transport = await loop.start_tls(
            protocol.transport, protocol, self._context(), server_hostname=self.config.host
        )
        protocol.transport = transport
        await protocol.capability()

    async def _xoauth2(self, client: aioimaplib.IMAP4) -> None:
        """AUTHENTICATE XOAUTH2 with an access token (refreshed when needed). Should the server
        refuse it, its error is read and the token is not offered again: the reconnect that
        follows gets a fresh one."""
        assert self.config.oauth2 is not None
        tokens = oauth.keeper(self.config.oauth2)
        token = await asyncio.to_thread(tokens.access_token)
        protocol = client.protocol
        command = _Authenticate(
            protocol, "XOAUTH2", oauth.sasl_xoauth2(self.config.username, token)
        )
        response = await asyncio.wait_for(protocol.execute(command, scrub=token), 30)
        if response.result != "OK":
            await asyncio.to_thread(tokens.refused_token, token)
        _check(response, "AUTHENTICATE XOAUTH2")
        protocol.state = aioimaplib.AUTH

    async def _capabilities(self) -> None:
        assert self.client is not None
        await self.client.protocol.capability()
        self.can_idle = self.client.has_capability("IDLE")
        self.can_move = self.client.has_capability("MOVE")

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(TimeoutError, aioimaplib.AioImapException, OSError):
                await asyncio.wait_for(client.logout(), 5)

    async def waiting_uids(self) -> list[int]:
        assert self.client is not None
        response = _check(await self.client.uid_search("ALL", charset=None), "UID SEARCH")
        uids: list[int] = []
        for line in response.lines:
            text = bytes(line).decode(errors="replace")
            if text and all(part.isdigit() for part in text.split()):
                uids += [int(part) for part in text.split()]
        return sorted(uids)

    async def fetch(self, uids: list[int], part: str = "BODY.PEEK[]") -> list[tuple[int, bytes]]:
        assert self.client is not None
        uid_set = ",".join(str(u) for u in uids)
        response = _check(await self.client.uid("fetch", uid_set, f"(UID {part})"), "UID FETCH")
        return parse_fetch(response.lines)

    async def sizes(self, uids: list[int]) -> tuple[dict[int, int], dict[int, datetime]]:
        """Each message's size and INTERNALDATE."""
        assert self.client is not None
        uid_set = ",".join(str(u) for u in uids)
        what = "(UID RFC822.SIZE INTERNALDATE)"
        response = _check(await self.client.uid("fetch", uid_set, what), "UID FETCH")
        return parse_sizes(response.lines), parse_dates(response.lines)

    def batches(self, uids: list[int], sizes: dict[int, int]) -> list[tuple[list[int], str]]:
        """Groups to fetch: whole messages up to BATCH and BATCH_BYTES, heads of big ones."""
        out: list[tuple[list[int], str]] = []
        group: list[int] = []
        total = 0
        for uid in uids:
            size = sizes.get(uid, 0)
            if self.max_bytes is not None and size > self.max_bytes:
                out.append(([uid], "BODY.PEEK[HEADER]"))
                continue
            if group and (len(group) >= BATCH or total + size > BATCH_BYTES):
                out.append((group, "BODY.PEEK[]"))
                group, total = [], 0
            group.append(uid)
            total += size
        if group:
            out.append((group, "BODY.PEEK[]"))
        return out

    async def move(self, uid: int, folder: str) -> None:
        assert self.client is not None
        if self.can_move:
            _check(await self.client.uid("move", str(uid), folder), f"UID MOVE {folder}")
            return
        _check(await self.client.uid("copy", str(uid), folder), f"UID COPY {folder}")
        _check(await self.client.uid("store", str(uid), "+FLAGS", r"(\Deleted)"), "UID STORE")
        if self.client.has_capability("UIDPLUS"):
            _check(await self.client.uid("expunge", str(uid)), "UID EXPUNGE")
        else:
            _check(await self.client.expunge(), "EXPUNGE")

    async def drain(
        self, handle: Handler, on_failure: Failure, halt: threading.Event | None = None
    ) -> tuple[int, int]:
        """Process what waits in the folder, in batches; returns (processed, last UID). Once
        `halt` is set (a stop was asked for) the mail in hand is finished and the rest waits."""
        done, last = 0, 0
        uids = await self.waiting_uids()
        sizes: dict[int, int] = {}
        dates: dict[int, datetime] = {}
        for start in range(0, len(uids), 1000):
            found, when = await self.sizes(uids[start : start + 1000])
            sizes.update(found)
            dates.update(when)
        first = datetime.min.replace(tzinfo=UTC)
        uids.sort(key=lambda uid: (dates.get(uid, first), uid))  # in delivery order
        for group, part in self.batches(uids, sizes):
            fetched = dict(await self.fetch(group, part))
            for uid in (u for u in group if u in fetched):
                if halt is not None and halt.is_set():
                    return done, last
                raw = fetched[uid]
                problem = await handle(raw, max(sizes.get(uid, 0), len(raw)), dates.get(uid))
                if problem is not None:  # never lose it: set it aside and say why
                    await on_failure(raw, problem, f"IMAP UID {uid}")
                    await self.move(uid, self.config.quarantine)
                    continue
                await self.move(uid, self.config.processed)  # only after the commit
                done += 1
                last = max(last, uid)
        return done, last

    async def wait_for_mail(self, stop: asyncio.Event) -> None:
        """Until new mail may have arrived: IDLE when the server has it, else a poll interval."""
        assert self.client is not None
        if not self.can_idle:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.config.poll_seconds)
            return
        idle = await self.client.idle_start(timeout=self.config.idle_seconds)
        try:
            while not stop.is_set():
                if self.lost.is_set():
                    raise ImapError("the server closed the connection")
                waiter = asyncio.ensure_future(self.client.wait_server_push())
                stopper = asyncio.ensure_future(stop.wait())
                dropped = asyncio.ensure_future(self.lost.wait())
                done, _ = await asyncio.wait(
                    {waiter, stopper, dropped}, return_when=asyncio.FIRST_COMPLETED
                )
                stopper.cancel()
                dropped.cancel()
                if self.lost.is_set():
                    waiter.cancel()
                    with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                        await waiter
                    raise ImapError("the server closed the connection")
                if waiter not in done:
                    waiter.cancel()
                    with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                        await waiter
                    break
                push = waiter.result()
                if push == aioimaplib.STOP_WAIT_SERVER_PUSH:
                    break  # the IDLE timeout: renew it
                if any(
                    b"EXISTS" in bytes(line) for line in push if isinstance(line, bytes | bytearray)
                ):
                    break
        finally:
            self.client.idle_done()
            with contextlib.suppress(TimeoutError, aioimaplib.AioImapException):
                await asyncio.wait_for(idle, 10)
