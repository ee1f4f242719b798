"""`doctor` on a game with [lmtp] (direct delivery, issue 17): the port is free for `run`, is
served by a running referee, or is taken by another program, each said in one line."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mailstack import free_port
from tests.sink import Sink, recording_sink, start_run
from tests.test_bounces import CLI
from tests.test_lmtp import lmtp_game, taking
from tests.test_owners import stop

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def sink() -> Iterator[Sink]:
    with recording_sink() as server:
        yield server


def lmtp_line(config: Path) -> tuple[int, str]:
    done = subprocess.run(
        [*CLI, "doctor", str(config)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    found = [line for line in done.stdout.splitlines() if " lmtp: " in line]
    assert len(found) == 1, done.stdout + done.stderr
    return done.returncode, found[0]


def test_the_lmtp_port_free_served_by_the_referee_or_taken(tmp_path: Path, sink: Sink) -> None:
    port = free_port()
    config = lmtp_game(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", port, sink.port)
    init = subprocess.run([*CLI, "init", str(config)], capture_output=True, text=True, cwd=ROOT)
    assert init.returncode == 0, init.stderr

    code, line = lmtp_line(config)
    assert line == f"OK   lmtp: 127.0.0.1:{port} is free: run will take mail from the MTA there"
    assert code == 0

    log = tmp_path / "run.log"
    process = start_run([config], log)
    try:
        taking(log)
        code, line = lmtp_line(config)
        assert line.startswith(f"OK   lmtp: 127.0.0.1:{port} is served by a running referee (220")
        assert "nomic-referee" in line and code == 0
    finally:
        stop(process, log)

    other = socket.socket()
    other.bind(("127.0.0.1", port))
    other.listen()

    def greet() -> None:
        connection, _ = other.accept()
        with connection:
            connection.sendall(b"220 mail.example ESMTP Postfix\r\n")

    answering = threading.Thread(target=greet, daemon=True)
    answering.start()
    try:
        code, line = lmtp_line(config)
    finally:
        other.close()
    assert line.startswith(
        f"FAIL lmtp: 127.0.0.1:{port} is taken by another program (220 mail.example ESMTP Postfix)"
    )
    assert "fix: choose a free port in [lmtp] port" in line and code == 1
