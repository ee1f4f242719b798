"""Backup during a burst, restore into a fresh database: the same game, outbox and archive;
mail that arrived after the backup is read again and nothing is sent twice (205, 213)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.archive import Keeper
from referee.config import load_settings
from referee.service import Referee
from referee.store.backup import backup, restore
from referee.store.store import Store, StoreError, dump_state
from referee.store.tables import InboundStatus
from tests.conftest import CONFIG, PLAYER_ADDRESSES, REFEREE, _postgres_database
from tests.helpers import T0

ROOT = Path(__file__).resolve().parents[1]
BURST = 45


def appeal(index: int) -> bytes:
    m = EmailMessage()
    m["From"] = PLAYER_ADDRESSES[index % 3]
    m["To"], m["Subject"] = REFEREE, f"question {index}"
    m["Message-ID"] = f"<backup-{index}@example.org>"
    m.set_content(f"APPEAL\nQuestion #{index}: is this legal?\nEND")
    return m.as_bytes()


@pytest.fixture
def fresh_url(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> Iterator[str]:
    """A second, empty database of the same kind as `database_url`."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'restored.db'}"
    else:
        yield from _postgres_database()


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def test_backup_during_a_burst_and_restore(
    database_url: str, fresh_url: str, tmp_path: Path
) -> None:
    config = tmp_path / "game.toml"
    config.write_text(
        CONFIG.format(language="en").replace('"sqlite:///nomic.db"', f'"{database_url}"')
    )
    settings = load_settings(config)
    mails = [(appeal(i), T0 + timedelta(minutes=i + 1)) for i in range(BURST)]
    store = Store(database_url)
    file = tmp_path / "game.backup"
    try:
        game = Referee.create(store, settings, T0)
        begun = threading.Event()

        def burst() -> None:
            for index, (raw, at) in enumerate(mails):
                game.receive(raw, at)
                if index == 5:
                    begun.set()

        worker = threading.Thread(target=burst)
        worker.start()
        assert begun.wait(120)
        copied = backup(database_url, file)  # while the burst goes on writing
        worker.join(300)
        assert copied.games == 1
        with pytest.raises(StoreError, match="never overwrites"):
            backup(database_url, file)

        restored_store = Store(fresh_url)
        try:
            restore(file, fresh_url)
            again = Referee.open(restored_store, settings)
            assert 0 < again.state.events <= game.state.events
            # The inbox is read again: what the backup had is a duplicate, the rest is applied.
            statuses = [again.receive(raw, at).status for raw, at in mails]
            assert statuses.count(InboundStatus.DUPLICATE) >= 6
            assert dump_state(again.state) == dump_state(game.state)
            before = [(r.message_id, r.recipient, r.raw) for r in store.outbox(game.game_id)]
            after = [(r.message_id, r.recipient, r.raw) for r in restored_store.outbox()]
            assert sorted(after) == sorted(before)  # each Message-ID once: nothing sent twice
            assert len({m for m, _, _ in after}) == len(after)
            Keeper(settings, store, game.game_id).write_archive(tmp_path / "a1", git=False)
            Keeper(settings, restored_store, again.game_id).write_archive(
                tmp_path / "a2", git=False
            )
            assert files(tmp_path / "a1") == files(tmp_path / "a2")
            with pytest.raises(StoreError, match="holds 1 game"):
                restore(file, fresh_url)  # never over a game
        finally:
            restored_store.close()
    finally:
        store.close()


def test_the_commands(tmp_path: Path) -> None:
    config = tmp_path / "game.toml"
    config.write_text(CONFIG.format(language="en"))

    def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "referee", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )

    missing = cli("backup", config, tmp_path / "b.db")
    assert missing.returncode != 0 and "not initialised" in missing.stderr
    assert cli("init", config).returncode == 0
    done = cli("backup", config, tmp_path / "b.db")
    assert done.returncode == 0 and "backed up 1 game" in done.stdout, done.stderr
    refused = cli("restore", config, tmp_path / "b.db")
    assert refused.returncode != 0 and "holds 1 game" in refused.stderr
    (tmp_path / "nomic.db").unlink()
    for leftover in tmp_path.glob("nomic.db-*"):
        leftover.unlink()
    back = cli("restore", config, tmp_path / "b.db")
    assert back.returncode == 0 and "restored 1 game" in back.stdout, back.stderr
    status = cli("status", config)
    assert status.returncode == 0 and "outbox: 6 waiting" in status.stdout
