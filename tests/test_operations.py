"""Operating the service: SMTP answers, deadlines after downtime, several games, logs (205)."""

from __future__ import annotations

import asyncio
import logging
import mailbox
import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import Envelope, Session

from referee.config import Settings, SmtpConfig, load_settings
from referee.delivery.outbox import backoff
from referee.delivery.sentbox import MaildirPostman
from referee.delivery.smtp import Postman
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import CONFIG
from tests.helpers import ADA, BOB, CARLA, DAY, T0, mail
from tests.mailstack import free_port


class Picky:
    """A real SMTP server that refuses Bob for good and Carla once, and counts connections."""

    def __init__(self) -> None:
        self.tried: dict[str, int] = {}
        self.accepted: list[str] = []
        self.connections = 0

    async def handle_EHLO(
        self,
        server: SMTPServer,
        session: Session,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        self.connections += 1
        session.host_name = hostname
        return responses

    async def handle_RCPT(
        self,
        server: SMTPServer,
        session: Session,
        envelope: Envelope,
        address: str,
        options: list[str],
    ) -> str:
        self.tried[address] = self.tried.get(address, 0) + 1
        if address == BOB:
            return "550 5.1.1 no such mailbox"
        if address == CARLA and self.tried[address] == 1:
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTPServer, session: Session, envelope: Envelope) -> str:
        self.accepted += envelope.rcpt_tos
        return "250 OK queued"


@pytest.fixture
def game(tmp_path: Path) -> tuple[Settings, Store, Referee]:
    path = tmp_path / "game.toml"
    path.write_text(CONFIG.format(language="en"), encoding="utf-8")
    settings = load_settings(path)
    store = Store(settings.database_url)
    return settings, store, Referee.create(store, settings, T0)


def test_4xx_is_retried_with_backoff_and_5xx_fails_for_good(
    game: tuple[Settings, Store, Referee],
) -> None:
    settings, store, referee = game
    handler = Picky()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        config = SmtpConfig(host="127.0.0.1", port=controller.port, security="none", concurrency=2)
        postman = Postman(store, referee.game_id, config, settings.game.address)
        tally = asyncio.run(postman.deliver_due(T0 + DAY, batch=2))  # several batches
        # the 6 opening mails: Bob's refused for good, Carla's first one deferred, 3 sent
        assert (tally.failed, tally.deferred, tally.sent) == (2, 1, 3)
        assert handler.connections == 2  # connections reused, two at a time
        rows = {(r.recipient, r.kind): r for r in store.outbox(referee.game_id)}
        assert rows[(BOB, "game_started")].status == "failed"
        assert "550" in rows[(BOB, "game_started")].last_error
        waiting = next(r for r in rows.values() if r.recipient == CARLA and r.status == "pending")
        assert waiting.status == "pending" and waiting.attempts == 1
        assert asyncio.run(postman.deliver_due(T0 + DAY)).sent == 0  # not yet due
        later = (waiting.next_attempt_at or T0) + timedelta(seconds=1)
        assert asyncio.run(postman.deliver_due(later)).sent == 1
        assert sorted(handler.accepted) == sorted([ADA, ADA, CARLA, CARLA])
    finally:
        controller.stop()
        store.close()
    assert backoff(1) < backoff(2) < backoff(3) <= backoff(20) == timedelta(hours=1)


class Halting:
    """A real SMTP server that asks the postman to stop once it has accepted two mails."""

    def __init__(self, halt: threading.Event) -> None:
        self.halt = halt
        self.accepted: list[str] = []

    async def handle_DATA(self, server: SMTPServer, session: Session, envelope: Envelope) -> str:
        self.accepted += envelope.rcpt_tos
        if len(self.accepted) == 2:
            self.halt.set()
        return "250 OK queued"


@pytest.mark.parametrize("through", ["smtp", "maildir"])
def test_a_stop_ends_the_outbox_between_two_mails_and_sends_none_twice(
    game: tuple[Settings, Store, Referee],
    tmp_path: Path,
    through: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGTERM in the middle of an outbox pass (docs/operations.md, "Stopping"): the mail in
    hand is recorded, the rest goes back unsent, and the next pass sends each once."""
    settings, store, referee = game
    halt = threading.Event()
    handler = Halting(halt)
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    folder = tmp_path / "sent"
    try:
        config = SmtpConfig(host="127.0.0.1", port=controller.port, security="none", concurrency=1)
        postman: Postman | MaildirPostman
        if through == "smtp":
            postman = Postman(store, referee.game_id, config, settings.game.address, halt=halt)
        else:
            postman = MaildirPostman(store, referee.game_id, folder, halt=halt)
            record = store.mark_outbox

            def then_stop(*args: Any, **kwargs: Any) -> None:  # the stop comes after 2 mails
                record(*args, **kwargs)
                if len(list(folder.glob("new/*"))) == 2:
                    halt.set()

            monkeypatch.setattr(store, "mark_outbox", then_stop)
        first = asyncio.run(postman.deliver_due(T0 + DAY))
        rows = store.outbox(referee.game_id)
        assert first.sent == 2 and len(rows) == 6
        # what it claimed and did not send goes back when the game is released, as `run` does
        assert store.unclaim(referee.game_id) == len(rows) - first.sent
        halt.clear()
        second = asyncio.run(postman.deliver_due(T0 + DAY))
        assert first.sent + second.sent == 6
        if through == "smtp":
            assert sorted(handler.accepted) == sorted(r.recipient for r in rows)
        else:
            ids = [m["Message-ID"] for m in mailbox.Maildir(str(folder), create=False)]
            assert len(ids) == len(set(ids)) == 6
    finally:
        controller.stop()
        store.close()


def test_deadlines_that_fell_due_while_off_fire_once(game: tuple[Settings, Store, Referee]) -> None:
    settings, store, referee = game
    service = Service(settings, store)
    service.referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    off_for = T0 + 16 * DAY  # the machine was off past the debate and the vote deadline
    assert service.run_once(off_for).deadlines >= 2
    kinds = [r.kind for r in store.outbox(referee.game_id)]
    assert kinds.count("vote_result") == 3  # once, to each player
    again = Service(settings, store)  # a restart
    assert again.run_once(off_for).deadlines == 0
    assert [r.kind for r in store.outbox(referee.game_id)].count("vote_result") == 3
    store.close()


def test_several_games_share_one_database(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'shared.db'}"
    referees = []
    stores = []
    for name in ("Nomic One", "Nomic Two"):
        folder = tmp_path / name.replace(" ", "")
        folder.mkdir()
        text = CONFIG.format(language="en").replace('name = "Test Nomic"', f'name = "{name}"')
        text = text.replace('url = "sqlite:///nomic.db"', f'url = "{database}"')
        (folder / "game.toml").write_text(text, encoding="utf-8")
        settings = load_settings(folder / "game.toml")
        store = Store(settings.database_url)
        stores.append(store)
        referees.append(Referee.create(store, settings, T0))
    referees[0].receive(mail(CARLA, "PROPOSE ENACT\nOne.\nEND"), T0 + DAY / 24)
    assert referees[0].state.current_proposal == 301
    assert referees[1].state.current_proposal is None
    reopened = Referee.open(stores[1], referees[1].settings)
    assert reopened.game_id != referees[0].game_id and reopened.state == referees[1].state
    for store in stores:
        store.close()


def test_logs_name_each_mail_and_redact_addresses(
    game: tuple[Settings, Store, Referee], caplog: pytest.LogCaptureFixture
) -> None:
    settings, store, referee = game
    caplog.set_level(logging.INFO, logger="referee")
    referee.receive(mail(BOB, "VOTE 301 YES", message_id="<log-1@example.org>"), T0 + DAY / 24)
    lines = [r.getMessage() for r in caplog.records]
    assert any("<log-1@example.org>" in line and "b***@example.org" in line for line in lines)
    assert any("<log-1@example.org>: vote -> unknown_proposal (refused)" in line for line in lines)
    assert not any(BOB in line for line in lines)
    strict = replace(settings, auth=replace(settings.auth, required=True))
    guarded = Referee(store, referee.game_id, strict)
    caplog.clear()
    guarded.receive(mail(CARLA, "STATUS", message_id="<log-2@example.org>"), T0 + DAY / 12)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings and all(CARLA not in w for w in warnings)
    store.close()
