"""One mail to many of a game's addresses is read once (issue 28, item 9; rules 107, 203).

A stranger's mail to `referee+1@` ... `referee+100@` names one game a hundred times: the game
settles it once, before any duplicate check could, and each recipient gets that answer. A real
LMTP server (`lmtp.listen`) in front of a real game (`Referee.receive`), a real LMTP client.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from referee.config import load_settings
from referee.mail import lmtp
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import CARLA, T0, mail
from tests.mailstack import free_port
from tests.sink import lmtp_deliver
from tests.test_service import sent

REFEREE = "referee@nomic.example"


class GameDesk:
    """A game's door on the LMTP server: every mail it takes goes to `Referee.receive`."""

    def __init__(self, referee: Referee, at: datetime) -> None:
        self.referee = referee
        self.at = at
        self.taken = 0

    @property
    def address(self) -> str:
        return REFEREE

    @property
    def addresses(self) -> tuple[str, ...]:
        return (REFEREE,)

    @property
    def max_bytes(self) -> int:
        return 10_000_000

    def ready(self) -> bool:
        return True

    async def take(self, raw: bytes) -> str:
        self.taken += 1
        self.referee.receive(raw, self.at)
        return f"250 2.0.0 <{REFEREE}>: taken"


@contextmanager
def serving(desk: GameDesk) -> Iterator[int]:
    """`lmtp.listen` for `desk` on a loop of its own; yields the port."""
    loop = asyncio.new_event_loop()
    port = free_port()
    server = loop.run_until_complete(lmtp.listen("127.0.0.1", port, [desk]))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(120)  # a mail still being settled finishes first
        if not thread.is_alive():
            server.close()
            loop.run_until_complete(server.wait_closed())
            loop.close()


def game(folder: Path) -> Referee:
    settings = load_settings(write_config(folder, "en"))
    return Referee.create(Store(settings.database_url), settings, T0)


def test_a_mail_to_a_hundred_sub_addresses_is_settled_once(tmp_path: Path) -> None:
    referee = game(tmp_path)
    desk = GameDesk(referee, T0)
    recipients = [f"referee+{n}@nomic.example" for n in range(1, 101)]
    with serving(desk) as port:
        answers = lmtp_deliver(port, mail("mallory@evil.example", "hello " * 1000), recipients)
        assert [code for code, _ in answers] == [250] * 100
        assert desk.taken == 1
        # a player's proposal to two of the game's addresses is one proposal, answered once
        proposal = mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND")
        answers = lmtp_deliver(port, proposal, [REFEREE, "referee+x@nomic.example"])
        assert [code for code, _ in answers] == [250, 250]
        assert desk.taken == 2
    assert referee.state.proposal(301) is not None and referee.state.proposal(302) is None
    assert len([m for m in sent(referee, "reply") if CARLA in str(m["To"])]) == 1
