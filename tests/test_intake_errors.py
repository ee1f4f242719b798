"""Intake never stops silently (212): bad entries, deep and huge mail, unsendable rows, dead DBs.

Each mail that cannot be read or processed is set aside in quarantine and logged, and the
intake goes on; `replay` sets the same mail aside; an outbox row that cannot be sent fails
alone; a database that cannot be written stops the service with one clear line, with the mail
left in the inbox and nothing sent twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from referee.config import Settings, load_settings
from referee.core import view
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import POSTGRES_ADMIN, REFEREE, _postgres_database, live_config
from tests.helpers import BOB, CARLA, T0, mail
from tests.mailstack import MailStack, running
from tests.sink import Sink, eventually, game_config, recording_sink, start_run
from tests.test_hostile import nested

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]


@pytest.fixture
def sink() -> Iterator[Sink]:
    with recording_sink() as server:
        yield server


def entries(settings: Settings, folder: str) -> list[str]:
    path = settings.maildir / (folder if folder in ("new", "cur") else f".{folder}/cur")
    return sorted(os.listdir(path))


def new_mail(settings: Settings, name: str, raw: bytes, at: datetime | None = None) -> Path:
    path = settings.maildir / "new" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    if at is not None:  # delivered at the game's time (the referee applies it then)
        os.utime(path, (at.timestamp(), at.timestamp()))
    return path


def test_bad_entries_are_set_aside_and_the_running_intake_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(game_config(tmp_path, f"sqlite:///{tmp_path / 'g.db'}"))
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        new = settings.maildir / "new"
        new.mkdir(parents=True, exist_ok=True)
        with caplog.at_level(logging.INFO), running(service):
            (new / "1.a-directory").mkdir()
            (new / "2.dangling").symlink_to(tmp_path / "nowhere")
            (new / "3.empty").write_bytes(b"")
            (new / "4.deep").write_bytes(nested(2000))
            eventually(lambda: not os.listdir(new), what="the bad entries leave new/")
            new_mail(settings, "5.good", mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"))
            eventually(lambda: service.referee.state.current_proposal == 301, what="proposal")
            new_mail(settings, "6.good", mail(BOB, "VOTE 301 YES"))
            eventually(lambda: len(entries(settings, "Processed")) == 3, what="all processed")
        quarantined = entries(settings, "Quarantine")
        assert [q.split(":")[0] for q in quarantined] == ["1.a-directory", "2.dangling", "4.deep"]
        assert [p.split(":")[0] for p in entries(settings, "Processed")] == [
            "3.empty",
            "5.good",
            "6.good",
        ]
        assert not os.listdir(new) and not os.listdir(settings.maildir / "cur")
        assert store.counts(service.game_id)["quarantined"] == 3
        notes = [r.getMessage() for r in caplog.records if "set aside in quarantine" in r.message]
        assert len(notes) == 3 and any("more than 100 nested MIME parts" in n for n in notes)
        assert any("1.a-directory" in n and "not a regular file" in n for n in notes)
        proposal = Referee.open(store, settings).state.proposal(301)
        assert proposal is not None and proposal.vote_of(BOB) is True
    finally:
        store.close()


def big_mail(size: int) -> bytes:
    return mail(CARLA, "PROPOSE ENACT\n" + "x" * size + "\nEND", message_id="<huge@example.org>")


def test_a_huge_mail_in_the_maildir_is_refused_from_its_headers(tmp_path: Path) -> None:
    config = game_config(
        tmp_path, f"sqlite:///{tmp_path / 'g.db'}", game_extra="max_mail_bytes = 1000000"
    )
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        new_mail(settings, "1.huge", big_mail(30_000_000))
        service = Service(settings, store)
        tracemalloc.start()
        try:
            summary = service.run_once(T0 + timedelta(hours=1))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert summary.processed == 1 and summary.failed == 0
        assert peak < 10_000_000, f"{peak} bytes: the 30 MB mail was read whole"
        reply = [r for r in store.outbox(service.game_id) if r.kind == "reply"]
        assert len(reply) == 1 and reply[0].recipient == CARLA
        assert b"larger than 1 MB" in reply[0].raw
        assert service.referee.state.current_proposal is None
    finally:
        store.close()


def test_a_huge_mail_over_imap_is_fetched_only_up_to_its_headers(
    tmp_path: Path, stack: MailStack
) -> None:
    config = live_config(tmp_path, stack, f"sqlite:///{tmp_path / 'h.db'}")
    config.write_text(
        config.read_text().replace("[game]\n", "[game]\nmax_mail_bytes = 1000000\n", 1)
    )
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        stack.deliver(REFEREE, big_mail(12_000_000))
        service = Service(settings, store)
        tracemalloc.start()
        try:
            summary = service.run_once(T0 + timedelta(hours=1))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert summary.processed == 1 and summary.failed == 0
        assert peak < 8_000_000, f"{peak} bytes: the 12 MB mail was fetched whole"
    finally:
        store.close()
    answers = [m for m in stack.read(CARLA) if str(m["In-Reply-To"]) == "<huge@example.org>"]
    assert len(answers) == 1
    assert len(stack.read(REFEREE, "Processed")) == 1


def test_replay_sets_aside_what_the_live_service_quarantines(tmp_path: Path) -> None:
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'g.db'}")
    settings = load_settings(config)
    inbound = [
        mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", at=T0 + timedelta(minutes=5)),
        nested(2000),
        mail(BOB, "VOTE 301 YES", at=T0 + timedelta(minutes=10)),
    ]
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        for index, raw in enumerate(inbound):
            delivered = T0 + timedelta(minutes=5 * (index + 1))
            new_mail(settings, f"{index}.mail", raw, delivered)
            summary = service.run_once(delivered)
        live = view.public_state(service.referee.state, T0 + timedelta(minutes=15))
        chain = {"link": service.referee.link, "head": service.referee.head}  # the record (213)
        assert store.counts(service.game_id)["quarantined"] == 1 and summary.processed == 1
    finally:
        store.close()
    with (tmp_path / "archive.mbox").open("wb") as box:  # by hand: the stdlib cannot parse it
        for index, raw in enumerate(inbound):
            stamp = (T0 + timedelta(minutes=5 * (index + 1))).strftime("%a %b %d %H:%M:%S %Y")
            box.write(f"From player@example.org {stamp}\n".encode() + raw.replace(b"\r\n", b"\n"))
            box.write(b"\n")
    until = (T0 + timedelta(minutes=15)).isoformat()
    done = subprocess.run(
        [*CLI, "replay", str(config), str(tmp_path / "archive.mbox"), "--json", "--until", until],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert "1 message could not be processed" in done.stderr
    assert "<deep@x>" in done.stderr  # named, as the live service's log names it
    replayed = json.loads(done.stdout)
    assert replayed.pop("chain") == chain  # what was set aside is in neither record
    assert replayed == json.loads(json.dumps(live, ensure_ascii=False))


def test_an_unsendable_row_fails_alone_and_is_not_retried(tmp_path: Path, sink: Sink) -> None:
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", smtp_port=sink.port)
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        game = Referee.create(store, settings, T0).game_id
        # The parser no longer lets such a sender through; whatever else makes a row that the
        # SMTP client refuses outright (here, a control character in its recipient) fails alone.
        with store.unit(game) as work:
            work.enqueue("<bad@x>", "a\x01b@evil.example", "stranger", b"Subject: x\r\n\r\nx", T0)
        proposal = mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", message_id="<c@x>")
        new_mail(settings, "2.carla", proposal)
        service = Service(settings, store)
        summary = service.run_once(T0 + timedelta(hours=1))
        assert summary.processed == 1 and summary.undeliverable == 1
        assert summary.sent == len(sink.mails) >= 7  # the opening, Carla's reply, the proposal
        assert "<c@x>" in sink.answered()
        failed = store.outbox(service.game_id, "failed")
        assert len(failed) == 1 and "control character" in failed[0].last_error
        again = Service(settings, store).run_once(T0 + timedelta(days=1))
        assert (again.sent, again.undeliverable, again.deferred) == (0, 0, 0)
        counts = store.counts(service.game_id)
        assert counts.get("pending", 0) == 0 and counts.get("sending", 0) == 0
    finally:
        store.close()


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if "nomic-referee: error:" in line]
    assert len(lines) == 1, output
    assert "Traceback" not in output, output
    return lines[0]


@pytest.mark.parametrize("once", [True, False], ids=["once", "forever"])
def test_a_read_only_sqlite_database_stops_the_service_without_touching_mail(
    tmp_path: Path, sink: Sink, once: bool
) -> None:
    path = tmp_path / "g.db"
    settings = load_settings(game_config(tmp_path, f"sqlite:///{path}", smtp_port=sink.port))
    store = Store(settings.database_url)
    Referee.create(store, settings, T0)
    store.close()
    url = f"sqlite:///file:{path}?mode=ro&uri=true"
    read_only = game_config(tmp_path / "ro", url, smtp_port=sink.port)
    ro_settings = load_settings(read_only)
    new_mail(ro_settings, "1.carla", mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"))
    done = subprocess.run(
        [*CLI, "run", str(read_only), *(["--once"] if once else [])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "database" in one_error_line(done.stderr)
    assert entries(ro_settings, "new") == ["1.carla"]  # still waiting, not quarantined
    assert not (ro_settings.maildir / ".Quarantine").exists() or not entries(
        ro_settings, "Quarantine"
    )
    assert sink.mails == []  # the pending opening mails were not sent (and so not resent)


def test_an_unreachable_database_is_one_clear_line(tmp_path: Path) -> None:
    from tests.mailstack import free_port

    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nowhere"
    config = game_config(tmp_path, url)
    done = subprocess.run([*CLI, "run", str(config)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "database" in one_error_line(done.stderr)


def test_postgresql_turning_read_only_while_running_stops_the_service(
    tmp_path: Path, sink: Sink
) -> None:
    url = next(iter_db := _postgres_database())
    try:
        name = url.rsplit("/", 1)[1]
        config = game_config(tmp_path, url, smtp_port=sink.port)
        settings = load_settings(config)
        store = Store(url)
        Referee.create(store, settings, T0)
        store.close()
        log = tmp_path / "run.log"
        process = start_run([config], log)
        try:
            new_mail(settings, "1.carla", mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"))
            eventually(lambda: entries(settings, "new") == [], what="the first mail is taken")
            with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
                admin.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
            new_mail(settings, "2.bob", mail(BOB, "VOTE 301 YES"))
            code = process.wait(60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
        output = log.read_text()
        assert code == 2, output[-3000:]
        assert "read-only" in one_error_line(output)
        assert entries(settings, "new") == ["2.bob"]  # kept for the next start, not quarantined
        assert not entries(settings, "Quarantine")
        sent = len(sink.mails)
        time.sleep(1)
        assert len(sink.mails) == sent  # nothing resent after the stop
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = off')
        for _ in iter_db:
            pass


def test_mail_is_handled_off_the_event_loop(tmp_path: Path) -> None:
    """While a mail is being processed, the event loop (IDLE, SMTP, deadlines) still runs:
    the processing below waits for a coroutine on the loop, which would never run if the
    mail were handled on the loop itself."""
    settings = load_settings(game_config(tmp_path, f"sqlite:///{tmp_path / 'g.db'}"))
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        gate, threads = threading.Event(), []
        apply = service.process

        def slow(raw: bytes, at: datetime, size: int | None = None) -> None:
            threads.append(threading.current_thread().name)
            assert gate.wait(30), "the event loop was blocked while a mail was processed"
            apply(raw, at, size)

        service.process = slow  # type: ignore[method-assign]

        async def main() -> None:
            stop = asyncio.Event()
            serving = asyncio.create_task(service.run_forever(stop))
            new_mail(settings, "1.carla", mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"))
            while not threads:  # the loop runs while the mail is in hand
                await asyncio.sleep(0.05)
            gate.set()
            while service.referee.state.current_proposal != 301:
                await asyncio.sleep(0.05)
            stop.set()
            await serving

        asyncio.run(asyncio.wait_for(main(), 60))
        assert threads == ["game-1_0"]  # the game's own worker thread
    finally:
        store.close()
