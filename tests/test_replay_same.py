"""Replay, made fast, still reaches the live service's state and mail byte for byte (213).

`replay` commits its whole run once (`Store.batch`), writes its mbox from the bytes it made and
wraps each paragraph once; none of that may change a decision or a byte. The example game is
played through the live service (Maildir in, one transaction per mail, `sent/` out) and
replayed from the same mail: the states are equal and every mail the service queued is, byte
for byte, the mail the replay writes. A unit of work that fails inside the batch is undone
alone, as a live transaction would be.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from examples.make_examples import START, build
from referee.config import Settings, load_settings
from referee.core.model import GameState
from referee.mail.parse import InboundMail
from referee.replay import replay, write_mbox
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store, StoreError, UnitOfWork
from tests.sink import game_config

Mail = list[tuple[bytes, datetime, str]]  # raw, delivered at, sender


def archive(path: Path, mails: Mail) -> None:
    write_mbox(path, [(raw, at) for raw, at, _ in mails], "player@example.org")


def test_live_service_and_replay_reach_the_same_state_and_bytes(tmp_path: Path) -> None:
    settings = load_settings(game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}"))
    _, mails = build("en")
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, START)
        service = Service(settings, store)
        new = settings.maildir / "new"
        new.mkdir(parents=True, exist_ok=True)
        for index, (raw, at, _sender) in enumerate(mails):
            path = new / f"{index:04d}.mail"
            path.write_bytes(raw)
            os.utime(path, (at.timestamp(), at.timestamp()))  # delivered at the game's time
            assert service.run_once(at).processed == 1
        live_state = service.referee.state
        live_mail = [(row.raw, row.created_at) for row in store.outbox(service.game_id)]
    finally:
        store.close()
    assert live_state.over and len(live_mail) > 100

    archive(tmp_path / "inbound.mbox", mails)
    replayed = replay(
        settings, tmp_path / "inbound.mbox", until=mails[-1][1], out=tmp_path / "replayed.mbox"
    )
    assert replayed.state == live_state
    write_mbox(tmp_path / "live.mbox", live_mail, settings.game.address)
    assert (tmp_path / "replayed.mbox").read_bytes() == (tmp_path / "live.mbox").read_bytes()


def logged(
    settings: Settings, mails: Mail, fail: bytes = b""
) -> tuple[list[tuple[int, dict[str, Any]]], int, GameState]:
    """Feed `mails` to a fresh game in one batch; `fail` raises after its events are written.
    What the store holds after: the event log and the inbound mail recorded."""
    store = Store("sqlite://")
    try:
        referee = Referee.create(store, settings, START)
        with store.batch():
            for raw, at, _ in mails:
                if raw == fail:
                    with pytest.raises(RuntimeError):
                        referee.receive(raw, at)
                else:
                    referee.receive(raw, at)
        events = [(seq, payload) for seq, _, _, payload in store.event_log(referee.game_id)]
        return events, store.inbound_count(referee.game_id), referee.state
    finally:
        store.close()


def test_a_unit_that_fails_inside_the_batch_is_undone_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(game_config(tmp_path, "sqlite:///unused.db"))
    _, mails = build("en")
    mails = mails[:6]
    failing = mails[3][0]  # a player's mail whose commands are obeyed: events, then the reply
    expected = logged(settings, [m for m in mails if m[0] != failing])
    original = Referee._reply

    def reply(self: Referee, work: UnitOfWork, mail: InboundMail, *args: Any, **kwargs: Any) -> int:
        if f"Message-ID: {mail.message_id}".encode() in failing:
            raise RuntimeError("a failure after the mail's events were written")
        return original(self, work, mail, *args, **kwargs)

    monkeypatch.setattr(Referee, "_reply", reply)
    assert logged(settings, mails, fail=failing) == expected
    assert len(expected[0]) > 3


def test_only_a_store_in_memory_batches_its_commits(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'file.db'}")
    try:
        with pytest.raises(StoreError), store.batch():
            pass
    finally:
        store.close()
