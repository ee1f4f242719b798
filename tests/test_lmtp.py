"""Direct delivery over LMTP to a real `run` process (issue 17 item 6; rules 107, 203, 212).

An LMTP client hands mail over as Postfix would (`tests/sink.lmtp_deliver`, one answer per
recipient); the replies are read at the test SMTP server. Two games share one LMTP port, told
apart by their address; over-size mail gets 552, a mail that crashes is kept in quarantine and
acknowledged, a bounce tells the King, mail for a game held by another process gets 451 until
this one works it, and a SIGKILL loses no mail that was acknowledged.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlmodel import Session, select

from referee.config import ConfigError, load_settings
from referee.ownership import lease_now
from referee.service import Referee
from referee.store.store import Store
from referee.store.tables import InboundRow
from tests.helpers import ADA, BOB
from tests.mailstack import free_port
from tests.sink import Sink, eventually, game_config, lmtp_deliver, recording_sink
from tests.sink import start_run as _start_run
from tests.test_bounces import CLI, dsn
from tests.test_owners import appeal, check_once_each, holder_pid, stop

FIRST, SECOND = "referee@nomic.example", "second@nomic.example"


_launched: list[subprocess.Popen[bytes]] = []


def start_run(configs: list[Path], log: Path, *options: str) -> subprocess.Popen[bytes]:
    """`run` as its own process group, stopped at the test's end whatever happened."""
    process = _start_run(configs, log, *options)
    _launched.append(process)
    return process


@pytest.fixture(autouse=True)
def _no_run_left_behind() -> Iterator[None]:
    """A failed assertion must not leave a `run` process holding a port or a game."""
    yield
    while _launched:
        process = _launched.pop()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)


@pytest.fixture
def sink() -> Iterator[Sink]:
    with recording_sink() as server:
        yield server


def lmtp_game(
    folder: Path, url: str, port: int, smtp: int, name: str = "Test Nomic", address: str = FIRST
) -> Path:
    """A game taking its mail over LMTP on `port` and sending through `smtp`."""
    path = game_config(folder, url, name=name, smtp_port=smtp, game_extra="max_mail_bytes = 50000")
    text = path.read_text(encoding="utf-8").replace(
        f'address = "{FIRST}"', f'address = "{address}"'
    )
    text += (
        f"\n[lmtp]\nport = {port}\n\n[auth]\nrequired = false  # the test players sign nothing\n"
    )
    path.write_text(text, encoding="utf-8")
    return path


def taking(log: Path, games: int = 1) -> None:
    """Wait until `games` games of the `run` writing `log` take mail over LMTP."""
    eventually(lambda: log.read_text().count("taking mail over LMTP") >= games, 30, "taking mail")


def nested(depth: int) -> bytes:
    """A mail nested deeper than the referee reads (100 parts): processing it fails."""
    head = f"From: {BOB}\r\nTo: {FIRST}\r\nSubject: deep\r\nMessage-ID: <deep@x.org>\r\n"
    body = "hello\r\n"
    for level in range(depth):
        body = (
            f'Content-Type: multipart/mixed; boundary="b{level}"\r\n\r\n'
            f"--b{level}\r\n{body}\r\n--b{level}--\r\n"
        )
    return (head + body).encode()


def messages_in(store: Store, game: int) -> set[str]:
    with Session(store.engine) as session:
        rows = session.exec(select(InboundRow.message_id).where(InboundRow.game_id == game))
        return set(rows.all())


def test_two_games_take_mail_over_one_lmtp_port(tmp_path: Path, sink: Sink) -> None:
    url, port = f"sqlite:///{tmp_path / 'g.db'}", free_port()
    first = lmtp_game(tmp_path / "one", url, port, sink.port)
    second = lmtp_game(tmp_path / "two", url, port, sink.port, "Second Nomic", SECOND)
    settings = load_settings(first)
    store = Store(url)
    log = tmp_path / "run.log"
    try:
        games = [
            Referee.create(store, load_settings(c), datetime.now(UTC)).game_id
            for c in (first, second)
        ]
        process = start_run([first, second], log)
        for game in games:
            eventually(lambda g=game: holder_pid(store, g) == process.pid, 30, "games worked")  # type: ignore[misc]
        taking(log, 2)

        mid, raw = appeal("Test Nomic", 0)
        answers = lmtp_deliver(port, raw, [FIRST, "nobody@nomic.example", SECOND])
        assert [code for code, _ in answers] == [250, 550, 250], answers
        eventually(lambda: sink.answered().count(mid) == 2, 30, "each game answers")
        again = lmtp_deliver(port, raw, [FIRST])  # the MTA's retry: applied once only
        assert again[0][0] == 250

        large = appeal("Test Nomic", 1)[1] + (b"x" * 70 + b"\n") * 900
        huge = appeal("Test Nomic", 2)[1] + (b"y" * 70 + b"\n") * 3_000
        for too_big in (large, huge):
            answers = lmtp_deliver(port, too_big, [FIRST, SECOND])
            assert [code for code, _ in answers] == [552, 552], answers

        kept = lmtp_deliver(port, nested(120), [FIRST])
        assert kept[0][0] == 250 and "quarantine" in kept[0][1], kept
        quarantine = settings.maildir / ".Quarantine" / "cur"
        assert [p.read_bytes().endswith(b"--b119--\r\n") for p in quarantine.iterdir()] == [True]
        assert store.counts(games[0])["quarantined"] == 1

        # A DSN for the first game's reply to Ada, handed over with the null sender: the King
        # is told (Ada is the King: told all the same, at the address that may work again).
        reply = next(
            m
            for m in sink.parsed()
            if m["In-Reply-To"] == mid and m["From"].addresses[0].addr_spec == FIRST
        )
        bounce = dsn(reply, ADA, whole=False)
        bounced = lmtp_deliver(port, bounce, [FIRST], sender="")
        assert bounced[0][0] == 250
        eventually(
            lambda: any(
                "could not be delivered" in str(m["Subject"])
                and m["To"].addresses[0].addr_spec == ADA
                for m in sink.parsed()
            ),
            30,
            "the King is told of the bounce",
        )
        stop(process, log)
        state = Referee.open(store, settings).state
        assert [a.question for a in state.appeals] == ["Test Nomic question #0: is this legal?"]
    finally:
        store.close()


def test_mail_for_a_game_worked_elsewhere_waits_at_the_mta(tmp_path: Path, sink: Sink) -> None:
    port = free_port()
    config = lmtp_game(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", port, sink.port)
    settings = load_settings(config)
    store = Store(settings.database_url)
    log = tmp_path / "run.log"
    try:
        game = Referee.create(store, settings, datetime.now(UTC)).game_id
        elsewhere = "another-host:1:abc"
        assert store.acquire(game, elsewhere, lease_now(), 300)
        process = start_run([config], log)
        eventually(lambda: "standing by" in log.read_text(), 30, "the run stands by")
        mid, raw = appeal("Test Nomic", 0)
        answers = lmtp_deliver(port, raw, [FIRST])
        assert answers[0][0] == 451 and "try again later" in answers[0][1], answers
        assert messages_in(store, game) == set()
        store.release(game, elsewhere)
        eventually(lambda: holder_pid(store, game) == process.pid, 30, "the run takes the game")
        eventually(lambda: lmtp_deliver(port, raw, [FIRST])[0][0] == 250, 30, "taken now")
        eventually(lambda: mid in sink.answered(), 30, "answered")
        stop(process, log)
    finally:
        store.close()


def test_a_sigkill_loses_no_acknowledged_mail(tmp_path: Path, sink: Sink) -> None:
    port = free_port()
    config = lmtp_game(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", port, sink.port)
    settings = load_settings(config)
    store = Store(settings.database_url)
    log = tmp_path / "run.log"
    mails = [appeal("Test Nomic", i) for i in range(40)]
    acknowledged: list[str] = []
    done = threading.Event()

    def mta() -> None:
        """Postfix's queue: each mail is retried until it is acknowledged."""
        for mid, raw in mails:
            while True:
                try:
                    if lmtp_deliver(port, raw, [FIRST])[0][0] == 250:
                        acknowledged.append(mid)
                        break
                except (OSError, AssertionError):  # refused, reset mid-transaction: again
                    pass
                time.sleep(0.05)
        done.set()

    try:
        game = Referee.create(store, settings, datetime.now(UTC)).game_id
        first = start_run([config], log)
        eventually(lambda: holder_pid(store, game) == first.pid, 30, "the game is worked")
        taking(log)
        sender = threading.Thread(target=mta, daemon=True)
        sender.start()
        eventually(lambda: len(acknowledged) >= 15, 60, "mail taken")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        taken = list(acknowledged)
        assert set(taken) <= messages_in(store, game), "an acknowledged mail was lost"
        second = start_run([config], log)
        assert done.wait(120), "the MTA's queue empties"
        check_once_each(store, settings, game, [mid for mid, _ in mails])
        eventually(
            lambda: not {mid for mid, _ in mails} - set(sink.answered()), 60, "every mail answered"
        )
        stop(second, log)
    finally:
        store.close()


def test_lmtp_reply_text_is_a_real_message(tmp_path: Path, sink: Sink) -> None:
    """The reply a player gets to mail taken over LMTP is the usual one, in the game's thread."""
    port = free_port()
    config = lmtp_game(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", port, sink.port)
    settings = load_settings(config)
    store = Store(settings.database_url)
    log = tmp_path / "run.log"
    try:
        game = Referee.create(store, settings, datetime.now(UTC)).game_id
        process = start_run([config], log)
        eventually(lambda: holder_pid(store, game) == process.pid, 30, "the game is worked")
        taking(log)
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = BOB, FIRST, "status"
        message["Message-ID"] = "<status-1@example.org>"
        message.set_content("STATUS")
        assert lmtp_deliver(port, message.as_bytes(), [FIRST])[0][0] == 250
        eventually(lambda: "<status-1@example.org>" in sink.answered(), 30, "answered")
        reply = next(m for m in sink.parsed() if m["In-Reply-To"] == "<status-1@example.org>")
        assert reply["To"].addresses[0].addr_spec == BOB
        body = reply.get_body(("plain",))
        assert body is not None and "Phase" in str(body.get_content())
        stop(process, log)
    finally:
        store.close()


def test_a_port_in_use_or_a_bad_lmtp_section_is_one_clear_line(tmp_path: Path) -> None:
    port = free_port()
    config = lmtp_game(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", port, free_port())
    settings = load_settings(config)
    assert settings.lmtp is not None and settings.lmtp.port == port
    assert settings.lmtp.address == "127.0.0.1" and settings.auth.required is False
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, datetime.now(UTC))
    finally:
        store.close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = subprocess.run(
            [*CLI, "run", str(config)], capture_output=True, text=True, timeout=60
        )
    assert done.returncode != 0
    assert f"LMTP: cannot listen on 127.0.0.1:{port}" in done.stderr, done.stderr
    assert "[lmtp] address and port" in done.stderr and "Traceback" not in done.stderr

    text = config.read_text(encoding="utf-8")
    for wrong, said in (
        (f"port = {port}", "[lmtp] port must be between 1 and 65535"),
        (f"port = {port}\nhost = 'x'", "[lmtp]: unknown key 'host'"),
    ):
        bad = tmp_path / "bad.toml"
        bad.write_text(text.replace(f"port = {port}", wrong.replace(str(port), "0", 1)))
        with pytest.raises(ConfigError, match=re.escape(said)):
            load_settings(bad)
    # [lmtp] means mail from a real server: sender authentication is on unless turned off
    plain = tmp_path / "auth.toml"
    plain.write_text(text.replace("required = false", ""), encoding="utf-8")
    assert load_settings(plain).auth.required
