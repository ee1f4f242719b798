"""The running service against real servers: IDLE push, outages, restarts (rules 107, 203, 205)."""

from __future__ import annotations

import smtplib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

from referee.config import load_settings
from referee.delivery.smtp import Postman
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import REFEREE, live_config
from tests.mailstack import MailStack, running


def message(sender: str, body: str, mid: str, subject: str = "move") -> bytes:
    m = EmailMessage()
    m["From"], m["To"], m["Subject"], m["Message-ID"] = sender, REFEREE, subject, mid
    m.set_content(body)
    return m.as_bytes()


def send(stack: MailStack, raw: bytes) -> None:
    with smtplib.SMTP("127.0.0.1", stack.smtp_port) as client:
        client.sendmail("player@example.org", [REFEREE], raw)


def eventually(check: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("the condition did not come true in time")


def replies_to(stack: MailStack, user: str, mid: str) -> int:
    return sum(1 for m in stack.read(user) if str(m["In-Reply-To"]) == mid)


def test_idle_push_outage_and_restart(tmp_path: Path, stack: MailStack, database_url: str) -> None:
    settings = load_settings(live_config(tmp_path, stack, database_url))
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, datetime.now(UTC))
        service = Service(settings, store)
        assert isinstance(service.postman, Postman)  # [smtp] is set
        service.postman.first_backoff = 0.5  # retries after 0.5 s, 1 s, 2 s ... not 30 s
        with running(service):
            # IDLE: a proposal is answered and circulated without any polling
            send(stack, message("carla@example.org", "PROPOSE ENACT\nBe kind.\nEND", "<p1@x>"))
            eventually(lambda: replies_to(stack, "carla@example.org", "<p1@x>") == 1)
            eventually(
                lambda: any(
                    str(m["Subject"]) == "[Test Nomic] Proposal 301"
                    for m in stack.read("bob@example.org")
                )
            )

            # SMTP down: mail is decided and kept, then sent when the server is back
            stack.stop_smtp()
            stack.deliver(REFEREE, message("bob@example.org", "VOTE 301 YES", "<v1@x>"))
            eventually(
                lambda: (
                    service.referee.state.proposal(301) is not None
                    and service.referee.state.proposal(301).vote_of("bob@example.org")  # type: ignore[union-attr]
                    is True
                )
            )
            eventually(lambda: store.counts(service.referee.game_id).get("pending", 0) >= 1)
            assert replies_to(stack, "bob@example.org", "<v1@x>") == 0
            stack.start_smtp()
            eventually(lambda: replies_to(stack, "bob@example.org", "<v1@x>") == 1, 60)

            # IMAP server restarted: the service reconnects by itself
            stack.stop_imap()
            time.sleep(0.5)
            stack.start_imap()
            send(stack, message("ada@example.org", "VOTE 301 YES", "<v2@x>"))
            eventually(lambda: replies_to(stack, "ada@example.org", "<v2@x>") == 1, 60)
        assert len(stack.read(REFEREE)) == 0
        assert len(stack.read(REFEREE, "Processed")) == 3
        assert store.counts(service.referee.game_id).get("failed", 0) == 0
    finally:
        store.close()


def test_a_server_without_idle_or_move_is_polled(tmp_path: Path) -> None:
    """Dovecot told to offer neither IDLE nor MOVE: the referee polls, and copies then expunges."""
    from tests.conftest import PLAYER_ADDRESSES

    plain = "protocol imap {\n  imap_capability = IMAP4rev1 LITERAL+ SASL-IR ID ENABLE UIDPLUS\n}\n"
    stack = MailStack(tmp_path / "stack", [REFEREE, *PLAYER_ADDRESSES], plain).start()
    try:
        settings = load_settings(live_config(tmp_path, stack, f"sqlite:///{tmp_path / 'p.db'}"))
        store = Store(settings.database_url)
        try:
            Referee.create(store, settings, datetime.now(UTC))
            service = Service(settings, store)
            with running(service):
                send(stack, message("carla@example.org", "PROPOSE ENACT\nBe kind.\nEND", "<q1@x>"))
                eventually(lambda: replies_to(stack, "carla@example.org", "<q1@x>") == 1)
        finally:
            store.close()
        assert len(stack.read(REFEREE)) == 0
        assert len(stack.read(REFEREE, "Processed")) == 1
    finally:
        stack.stop()
