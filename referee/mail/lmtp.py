"""Direct delivery: the MTA hands mail to `run` over LMTP (RFC 2033; rules 107, 203, 212).

As Mailman 3 takes its mail, the referee can listen for LMTP (aiosmtpd's server) on the
address and port of `[lmtp]`, and Postfix delivers to it (`mailbox_transport` or
`transport_maps`; docs/operations.md). The recipient address picks the game, so one process
serves several games on one port. LMTP answers once per recipient after the data, and each
answer here is given only once the mail is settled for that game; a game named by several of
the recipients (its address, its aliases, `+tag` sub-addresses) settles the mail once, and each
of them gets that one answer:

  250  committed to the store (or recognised as already applied: the MTA's retry after a
       crash between commit and answer), or set aside in quarantine (never lost, never
       retried forever);
  552  larger than the game's `max_mail_bytes`: the MTA returns it to its sender;
  550  no game has this address here;
  4xx  the game is not worked by this process now (another holds its lease, or it is
       stopping), or the database cannot be written: the MTA keeps the mail and tries again.

The mail layer knows nothing of leases or stores: each game is a `Desk` that the runner
implements, and whose `take` answers with the LMTP reply for that game.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from aiosmtpd.lmtp import LMTP

log = logging.getLogger("referee.lmtp")

# aiosmtpd answers these once, for the whole data; LMTP wants one answer per recipient.
_WHOLE_DATA = ("552 Error: Too much mail data", "500 Line too long (see RFC5321 4.5.3.1.6)")
LINE_LIMIT = 10_000  # bytes in one line of mail (RFC 5321 says 1,000; some clients write more)


class Desk(Protocol):
    """One game's door on the LMTP server."""

    @property
    def address(self) -> str: ...  # the game's address, lower-case

    @property
    def addresses(self) -> tuple[str, ...]: ...  # the address and its aliases, lower-case

    @property
    def max_bytes(self) -> int: ...  # the game's `max_mail_bytes`

    def ready(self) -> bool: ...  # this process works the game now

    async def take(self, raw: bytes) -> str: ...  # settle one mail; its LMTP reply line


def busy(address: str) -> str:
    return f"451 4.3.2 <{address}>: the game is not worked by this process now; try again later"


def _local(address: str) -> str:
    """`Referee+tag@Nomic.Example` -> `referee@nomic.example` (a sub-address's tag dropped)."""
    address = address.strip().strip("<>").lower()
    local, at, domain = address.rpartition("@")
    return f"{local.partition('+')[0]}{at}{domain}" if at else address


class Handler:
    """aiosmtpd's handler: recipients to games, the data to each game's desk."""

    def __init__(self, desks: Sequence[Desk]) -> None:
        self.desks: dict[str, Desk] = {}
        for desk in desks:
            for address in desk.addresses:
                if address in self.desks:
                    raise ValueError(
                        f"two games have the address {address}: LMTP cannot tell them apart"
                    )
                self.desks[address] = desk

    def find(self, address: str) -> Desk | None:
        return self.desks.get(_local(address))

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        desk = self.find(address)
        if desk is None:
            return f"550 5.1.1 <{address}>: no game has this address here"
        if not desk.ready():
            return busy(address)
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.append(options)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        content = bytes(envelope.original_content or b"")
        # What a final delivery agent adds (RFC 5321 4.4): the envelope sender, `<>` for a
        # bounce, so a bounce is known as one whatever its headers say.
        sender = str(envelope.mail_from or "").strip("<>")
        raw = f"Return-Path: <{sender}>\r\n".encode("utf-8", "surrogateescape") + content
        # One mail is one mail to a game however many of its addresses it names (`referee+1@`
        # ... `referee+100@`): the game reads and settles it once, and each of those recipients
        # gets that answer. Read once per recipient, a stranger's 4 MB mail to 100 sub-addresses
        # held the game's worker for a hundred parses before the duplicate check (issue 28).
        settled: dict[int, str] = {}  # each game's answer to `take`, by its desk
        answers = [await self._one(a, raw, len(content), settled) for a in envelope.rcpt_tos]
        return "\r\n".join(answers)

    async def _one(self, address: str, raw: bytes, size: int, settled: dict[int, str]) -> str:
        desk = self.find(address)
        if desk is None:  # pragma: no cover - RCPT let only known games through
            return f"550 5.1.1 <{address}>: no game has this address here"
        if size > desk.max_bytes:
            limit = desk.max_bytes
            return f"552 5.3.4 <{address}>: larger than this game takes ({limit} bytes)"
        if not desk.ready():
            return busy(address)
        if id(desk) in settled:
            return settled[id(desk)]
        try:
            answer = settled[id(desk)] = await desk.take(raw)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # nothing was committed: the MTA keeps it and tries again
            log.exception("LMTP: mail for %s not taken; the MTA will try again", address)
            answer = f"451 4.3.0 <{address}>: not taken ({exc.__class__.__name__}); try again later"
            settled[id(desk)] = answer  # and the same for its other recipients: no retry here
        return answer


class _Lmtp(LMTP):
    """aiosmtpd's LMTP, answering a refusal of the whole data once per recipient."""

    line_length_limit = LINE_LIMIT

    async def push(self, status: Any) -> None:
        text = status.decode("ascii", "replace") if isinstance(status, bytes) else str(status)
        envelope = self.envelope
        if text in _WHOLE_DATA and envelope is not None and len(envelope.rcpt_tos) > 1:
            for _ in envelope.rcpt_tos[1:]:
                await super().push(status)
        await super().push(status)


async def listen(address: str, port: int, desks: Sequence[Desk]) -> asyncio.Server:
    """Start the LMTP server for `desks` on address:port, on the running loop."""
    handler = Handler(desks)
    limit = max(desk.max_bytes for desk in desks)

    def protocol() -> _Lmtp:
        return _Lmtp(
            handler,
            hostname="nomic-referee",
            ident="nomic-referee LMTP",
            data_size_limit=limit + 64 * 1024,  # the per-game limit is checked per recipient
            enable_SMTPUTF8=True,
        )

    try:
        return await asyncio.get_running_loop().create_server(protocol, address, port)
    except OSError as exc:
        raise OSError(
            f"LMTP: cannot listen on {address}:{port} ({exc.strerror or exc}); check [lmtp] "
            "address and port, or stop what listens there",
        ) from exc
