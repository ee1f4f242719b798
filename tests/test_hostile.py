"""Hostile mail: fuzzed and malformed MIME never crashes the service or goes missing (107, 212)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.config import Settings, load_settings
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import REFEREE, live_config, write_config
from tests.helpers import CARLA, T0, mail
from tests.mailstack import MailStack


def nested(depth: int) -> bytes:
    """A multipart nested `depth` deep: Python's parser gives up with a RecursionError."""
    head = (
        b"From: bob@example.org\r\nSubject: deep\r\nMessage-ID: <deep@x>\r\nMIME-Version: 1.0\r\n"
    )
    opening = b"".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n'.encode()
        for i in range(depth)
    )
    closing = b"".join(f"\r\n--b{i}--\r\n".encode() for i in reversed(range(depth)))
    return head + opening + b"Content-Type: text/plain\r\n\r\nVOTE 301 YES\r\n" + closing


MALFORMED: list[bytes] = [
    b"",
    b"\x00\x01\x02 not a mail at all \xff\xfe",
    b"From: carla@example.org\r\n\r\n",
    b"From: carla@example.org\r\nContent-Type: multipart/mixed\r\n\r\nno boundary given\r\n",
    b'From: carla@example.org\r\nContent-Type: multipart/mixed; boundary="x"\r\n\r\n--x\r\n'
    b"Content-Type: text/plain\r\n\r\nSTATUS\r\n",  # never closed
    b"From: carla@example.org\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64!!!\r\n",
    b"From: carla@example.org\r\nContent-Type: text/plain; charset=utf-99\r\n\r\nSTATUS\r\n",
    b"From: carla@example.org\r\nSubject: " + b"A" * 100_000 + b"\r\n\r\nSTATUS\r\n",
    b"From: carla@example.org\r\nSubject: =?utf-8?q?broken=ZZ?=\r\n\r\nSTATUS\r\n",
    b"From: carla@example.org\r\nSubject: \xe8 8-bit \xff\r\n\r\nVOTO 301 S\xc3\xac\r\n",
    b"From: carla@example.org\r\nMessage-ID: <x>\r\nMessage-ID: <y>\r\n\r\nSTATUS\r\n",
    b"From: carla@example.org, bob@example.org\r\n\r\nSTATUS\r\n",  # two senders: no one
    b"From: =?utf-8?b?Q2FybGE=?= <carla@example.org>\r\nContent-Type: text/html\r\n\r\n"
    b"<p>STATUS<script>alert(1)</script><img src=x onerror=alert(1)></p>",
    b"From: carla@example.org\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\x02",
    b"From: carla@example.org\r\n" + b"X-Junk: y\r\n" * 5000 + b"\r\nSTATUS\r\n",
    nested(2000),
]


@pytest.fixture
def maildir_game(tmp_path: Path) -> Iterator[tuple[Settings, Store, Service]]:
    settings = load_settings(write_config(tmp_path))
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        yield settings, store, Service(settings, store)
    finally:
        store.close()


def drop(settings: Settings, name: str, raw: bytes) -> None:
    folder = settings.maildir / "new"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.hostile").write_bytes(raw)


def kept(settings: Settings, folder: str) -> int:
    return len(os.listdir(settings.maildir / f".{folder}" / "cur"))


def test_malformed_mail_is_processed_or_set_aside_never_lost(
    maildir_game: tuple[Settings, Store, Service],
) -> None:
    settings, store, service = maildir_game
    service.run_once(T0)  # make the Maildir
    for index, raw in enumerate(MALFORMED):
        drop(settings, f"{index:03d}", raw)
    drop(settings, "999", mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"))
    summary = service.run_once(T0 + timedelta(hours=1))
    assert summary.processed + summary.failed == len(MALFORMED) + 1
    assert summary.failed == 1  # only the 2,000-deep nesting defeats the parser
    assert kept(settings, "Quarantine") == 1 and kept(settings, "Processed") == len(MALFORMED)
    assert not os.listdir(settings.maildir / "new") and not os.listdir(settings.maildir / "cur")
    assert store.counts(service.referee.game_id)["quarantined"] == 1
    assert service.referee.state.current_proposal == 301  # the good mail still worked


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.binary(max_size=2000)
    | st.builds(
        lambda cut, flips: bytes(
            b ^ flips[i % len(flips)] if i % 7 == 0 else b
            for i, b in enumerate(mail(CARLA, "VOTE 301 YES\nSTATUS")[:cut])
        ),
        st.integers(min_value=0, max_value=600),
        st.binary(min_size=1, max_size=8),
    )
)
def test_fuzzed_mail_never_crashes_the_referee(
    maildir_game: tuple[Settings, Store, Service], raw: bytes
) -> None:
    _, _, service = maildir_game
    receipt = service.referee.receive(raw, T0)  # must not raise
    assert receipt.status in ("processed", "duplicate", "ignored", "stranger", "refused")


def test_hostile_mail_through_imap_goes_to_quarantine_not_away(
    tmp_path: Path, stack: MailStack
) -> None:
    settings = load_settings(live_config(tmp_path, stack, f"sqlite:///{tmp_path / 'h.db'}"))
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        for raw in MALFORMED[1:]:  # Dovecot refuses an empty message over LMTP
            stack.deliver(REFEREE, raw)
        summary = service.run_once(T0 + timedelta(hours=1))
        assert summary.failed == 1
    finally:
        store.close()
    assert len(stack.read(REFEREE)) == 0
    assert len(stack.read(REFEREE, "Quarantine")) == 1
    assert len(stack.read(REFEREE, "Processed")) == len(MALFORMED) - 2
