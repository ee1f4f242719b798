"""Replay, made fast, still reaches the live service's state and mail byte for byte (213).

`replay` commits its whole run once (`Store.batch`), writes its mbox from the bytes it made and
wraps each paragraph once; none of that may change a decision or a byte. The example game is
played through the live service (Maildir in, one transaction per mail, `sent/` out) and
replayed from the same mail: the states are equal and every mail the service queued is, byte
for byte, the mail the replay writes. A unit of work that fails inside the batch is undone
alone, as a live transaction would be. The batch's units read back less than the live ones
(what the batch wrote is known to them) and write the game's row once, at the end: the rows
they leave are, column by column, the ones the live service's transactions leave.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import SQLModel

from examples.make_examples import START, build
from referee.config import Settings, load_settings
from referee.core.model import GameState
from referee.mail.parse import InboundMail
from referee.replay import replay, write_mbox
from referee.runner import Service
from referee.service import Referee
from referee.store import store as stored
from referee.store.store import Store, StoreError, UnitOfWork
from tests.helpers import ADA, BOB, CARLA
from tests.sender_mail import raw_mail
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


GAME_TABLES = ("games", "events", "inbound", "outbox", "chain", "strangers", "confirmations")


def rows_of(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the game's tables, each column in the models' order."""
    with store.engine.connect() as connection:
        return {
            name: [tuple(row) for row in connection.execute(select(table).order_by(table.c.id))]
            for name, table in SQLModel.metadata.tables.items()
            if name in GAME_TABLES
        }


@pytest.mark.parametrize("every", [1, 3])
def test_a_batch_leaves_the_rows_the_live_services_transactions_leave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, every: int
) -> None:
    """The same mail, one transaction each on a database file and in one batch in memory:
    the same rows, chain head and state. Tight daily limits make the senders' days count
    (refusals, the notes to a stranger), a copy of a mail already applied is a duplicate, a
    unit that fails after its mail, events and snapshot were written is undone in both (the
    same mail, sent again, is then applied), and frequent snapshots make the games' row move."""
    monkeypatch.setattr(stored, "SNAPSHOT_EVERY", every)
    settings = load_settings(game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}"))
    limits = replace(settings.limits, mails_per_day=3, empty_replies_per_day=1, commands_per_day=4)
    settings = replace(settings, limits=replace(limits, stranger_notes_per_day=1))
    _, mails = build("en")
    base = mails[2][1]
    extra = [
        (raw_mail(ADA, "Hello, is anyone there?", at=base, message_id="<e1@x>"), base, ADA),
        (raw_mail(ADA, "Nothing to say.", at=base, message_id="<e2@x>"), base, ADA),
        (raw_mail(BOB, "STATUS", at=base, message_id="<e3@x>"), base, BOB),
        (raw_mail(BOB, "STATUS", at=base, message_id="<e4@x>"), base, BOB),
        (raw_mail(BOB, "STATUS", at=base, message_id="<e5@x>"), base, BOB),
        (raw_mail(BOB, "STATUS", at=base, message_id="<e6@x>"), base, BOB),
        (raw_mail(CARLA, "VOTE 301 YES", at=base, message_id="<fail@x>"), base, CARLA),
        (raw_mail(BOB, "STATUS", at=base, message_id="<e7@x>"), base, BOB),
        (raw_mail("who@else.org", "hi", at=base, message_id="<s1@x>"), base, "who@else.org"),
        (raw_mail("who@other.org", "hi", at=base, message_id="<s2@x>"), base, "who@other.org"),
        mails[1],  # a copy of a mail applied already
    ]
    step = timedelta(minutes=1)
    mails = [*mails[:3], *((raw, base + step * i, who) for i, (raw, _, who) in enumerate(extra))]
    failing = next(mail for mail in mails if b"<fail@x>" in mail[0])
    mails += [(failing[0], mails[-1][1] + step, CARLA), *build("en")[1][3:]]
    original = Referee._chain
    failed: list[bytes] = []  # this play's failure, once

    def chain(self: Referee, work: UnitOfWork, kind: str, *args: Any) -> tuple[int, str]:
        if kind == "mail" and args[1] == failing[0] and not failed:
            failed.append(args[1])
            raise RuntimeError("a failure after the mail, its events and snapshot were written")
        return original(self, work, kind, *args)

    monkeypatch.setattr(Referee, "_chain", chain)

    def play(store: Store, batched: bool) -> tuple[int, str, GameState]:
        failed.clear()
        referee = Referee.create(store, settings, START)
        with store.batch() if batched else contextlib.nullcontext():
            for raw, at, _ in mails:
                try:
                    referee.receive(raw, at)
                except RuntimeError:
                    assert b"<fail@x>" in raw
            referee.advance(mails[-1][1] + timedelta(days=3))
        return referee.link, referee.head, referee.state

    live_store, batch_store = Store(settings.database_url), Store("sqlite://")
    try:
        live, batched = play(live_store, False), play(batch_store, True)
        assert batched == live
        live_rows, batch_rows = rows_of(live_store), rows_of(batch_store)
    finally:
        live_store.close()
        batch_store.close()
    assert batch_rows == live_rows
    refused = [row for row in live_rows["inbound"] if row[7] == "refused"]
    assert failed and refused and live_rows["strangers"] and live_rows["games"][0][8] > 3
