"""The command line as users drive it: init, status, replay of the README's games (213)."""

from __future__ import annotations

import json
import mailbox
import os
import shutil
import socket
import subprocess
import sys
import tomllib
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import T0

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=120,
    )


def test_init_then_status(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    done = cli("init", config)
    assert done.returncode == 0, done.stderr
    assert "first turn: Carla De Santis <carla@example.org>" in done.stdout
    for sub in ("new", "cur", "tmp"):  # a mail can be dropped in before the first run
        assert (tmp_path / "maildir" / sub).is_dir() and (tmp_path / "sent" / sub).is_dir()
    status = cli("status", config, "--json")
    assert status.returncode == 0, status.stderr
    state = json.loads(status.stdout)
    assert state["turn"] == {
        "player": "carla@example.org",
        "phase": "propose",
        "proposal": None,
        "deadline": None,
    }
    assert state["king"] == "ada@example.org" and state["round"] == 1
    assert [r["number"] for r in state["rules"]][:2] == [101, 102] and len(state["rules"]) == 32
    assert state["parameters"]["winning_score"] == 100
    assert state["mail"] == {  # no [smtp]: the opening waits for the next run
        "pending": 6,
        "quarantined": 0,
        "delivery": f"no [smtp]: written to the Maildir {tmp_path / 'sent'} "
        "(open it with a mail client)",
    }
    human = cli("status", config)
    assert "Carla De Santis" in human.stdout
    assert "outbox: 6 waiting, 0 sent, 0 undeliverable; 0 mails in quarantine" in human.stdout
    assert f"mail: no [smtp]: written to the Maildir {tmp_path / 'sent'}" in human.stdout
    again = cli("init", config)
    assert again.returncode != 0 and "already initialised" in again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("status", "missing.toml"), "config file not found"),
        (("replay", "missing.toml", "x.mbox"), "config file not found"),
        (("replay", EXAMPLES / "game-en.toml", "no.mbox"), "mbox not found"),
        (
            ("replay", EXAMPLES / "game-en.toml", EXAMPLES / "game-en.mbox", "--until", "soon"),
            "--until",
        ),
        (("status",), "Missing argument"),
        (("frobnicate",), "No such command"),
    ],
)
def test_errors_are_one_line_without_traceback(args: tuple[str, ...], message: str) -> None:
    done = cli(*args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_status_before_init_says_so(tmp_path: Path) -> None:
    done = cli("status", write_config(tmp_path))
    assert done.returncode != 0 and "nomic-referee init" in done.stderr


@pytest.mark.parametrize("language", ["en", "it"])
def test_replay_of_the_readme_game_reaches_a_winner(language: str, tmp_path: Path) -> None:
    out = tmp_path / "sent.mbox"
    done = cli(
        "replay",
        EXAMPLES / f"game-{language}.toml",
        EXAMPLES / f"game-{language}.mbox",
        "--json",
        "--out",
        out,
    )
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout)
    assert state["over"] and state["winner"] == "bob@example.org"
    assert state["adoption"] == "majority"  # 204 switched after round two
    scores = {p["email"]: p["score"] for p in state["players"]}
    assert scores == {"carla@example.org": 19, "ada@example.org": 13, "bob@example.org": 27}
    statuses = [(p["number"], p["status"]) for p in state["proposals"]]
    assert statuses == [
        (301, "adopted"),
        (302, "rejected"),
        (303, "adopted"),
        (304, "adopted"),
        (305, "rejected"),
        (306, "adopted"),
        (307, "adopted"),
    ]
    rule = next(r for r in state["rules"] if r["number"] == 304)
    assert [h["number"] for h in rule["history"]] == [209, 301, 304]  # 109
    box = mailbox.mbox(str(out))
    subjects = [str(m["Subject"]) for m in box]
    winner = "Bob Rossi wins" if language == "en" else "Vince Bob Rossi"
    assert sum(winner in s for s in subjects) == 3  # to every player
    assert all(m["Auto-Submitted"] for m in box)


def test_replay_is_deterministic_and_until_stops_midway(tmp_path: Path) -> None:
    first, second = tmp_path / "a.mbox", tmp_path / "b.mbox"
    config, mbox = EXAMPLES / "game-en.toml", EXAMPLES / "game-en.mbox"
    cli("replay", config, mbox, "--out", first)
    cli("replay", config, mbox, "--out", second)
    assert first.read_bytes() == second.read_bytes()
    early = cli("replay", config, mbox, "--json", "--until", "2026-12-10T00:00:00+00:00")
    state = json.loads(early.stdout)
    assert not state["over"] and state["turn"]["player"] == "ada@example.org"
    assert state["now"] == "2026-12-10T00:00:00+00:00"


def test_the_shipped_examples_are_what_the_script_writes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, EXAMPLES / "make_examples.py", tmp_path],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.returncode == 0
    for name in ("game-en.toml", "game-en.mbox", "game-it.toml", "game-it.mbox"):
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes(), name


# ----- issue 6: the first run, the sent Maildir, clear answers ---------------------------------

PYPROJECT = ROOT / "pyproject.toml"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_version_is_the_package_version() -> None:
    done = cli("--version")
    assert done.returncode == 0
    version = tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    assert done.stdout.strip() == f"nomic-referee {version}"
    module = subprocess.run(  # python -m referee, the console script's own entry
        [sys.executable, "-m", "referee", "--version"], capture_output=True, text=True, cwd=ROOT
    )
    assert module.returncode == 0 and module.stdout == done.stdout


def test_init_without_a_config_offers_the_starter(tmp_path: Path) -> None:
    line = one_line_error(cli("init", "game.toml", cwd=tmp_path))
    assert "config file not found" in line
    assert "nomic-referee init --write-config game.toml" in line
    assert not (tmp_path / "nomic.db").exists()
    wrote = cli("init", "--write-config", "game.toml", cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    assert "nomic-referee init game.toml" in wrote.stdout
    text = (tmp_path / "game.toml").read_text()
    assert text.startswith("#") and "king = true" in text
    assert "already" in one_line_error(cli("init", "--write-config", "game.toml", cwd=tmp_path))
    done = cli("init", "game.toml", cwd=tmp_path)  # the starter is a valid game as it stands
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "maildir" / "new").is_dir()


def test_a_failed_init_leaves_nothing_and_a_second_init_works(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    (tmp_path / "maildir").write_text("a file where the inbox should be")
    assert "init" in one_line_error(cli("init", config))
    assert "nomic-referee init" in one_line_error(cli("status", config))  # no half-made game
    (tmp_path / "maildir").unlink()
    done = cli("init", config)
    assert done.returncode == 0, done.stderr


def test_a_game_that_fails_while_being_created_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(write_config(tmp_path))
    store = Store(settings.database_url)
    try:

        def broken(*_args: object, **_kwargs: object) -> None:
            raise RuntimeError("disk full while writing the opening mail")

        with monkeypatch.context() as patch:
            patch.setattr(Referee, "_emit", broken)
            with pytest.raises(RuntimeError):
                Referee.create(store, settings, T0)
        assert store.game_id(settings.game.key) is None
        assert store.outbox() == []
        referee = Referee.create(store, settings, T0)  # a second init starts clean
        assert store.counts(referee.game_id)["pending"] == 6
    finally:
        store.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "is a folder"),
        (b"", "0 messages read"),
        (b"Hello,\nthis is a letter, not an mbox.\n", "is not an mbox file"),
        (bytes(range(256)) * 8, "is not an mbox file"),
    ],
)
def test_replay_of_what_is_not_an_mbox(tmp_path: Path, content: bytes | None, message: str) -> None:
    target = tmp_path / "mail"
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    assert message in one_line_error(cli("replay", EXAMPLES / "game-en.toml", target))


def test_replay_says_how_many_messages_it_read(tmp_path: Path) -> None:
    config, mbox = EXAMPLES / "game-en.toml", EXAMPLES / "game-en.mbox"
    early = cli("replay", config, mbox, "--until", "2026-11-01T00:00:00+00:00")
    assert early.returncode == 0 and f"0 messages read from {mbox}" in early.stderr
    whole = cli("replay", config, mbox, "--out", tmp_path / "sent.mbox")
    count = len(mailbox.mbox(str(mbox)))
    written = len(mailbox.mbox(str(tmp_path / "sent.mbox")))
    assert f"{count} messages read from {mbox}; {written} mails written" in whole.stderr


def test_unreachable_postgresql_is_one_line_naming_the_server(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path)
    config.write_text(
        config.read_text().replace(
            'url = "sqlite:///nomic.db"',
            f'url = "postgresql+psycopg://ref:secret@127.0.0.1:{port}/x"',
        )
    )
    for command in ("init", "status", "run", "outbox"):
        args = (command, config, "--once") if command == "run" else (command, config)
        line = one_line_error(cli(*args))
        assert f"127.0.0.1:{port}" in line and "secret" not in line, line


def test_unreachable_imap_is_one_line_naming_the_server(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path)
    config.write_text(
        config.read_text() + f'\n[imap]\nhost = "127.0.0.1"\nport = {port}\nsecurity = "none"\n'
    )
    assert cli("init", config).returncode == 0
    line = one_line_error(cli("run", config, "--once"))
    assert line.startswith(f"nomic-referee: error: IMAP server 127.0.0.1:{port}:"), line


def test_status_shows_names_and_local_times_at_now(tmp_path: Path) -> None:
    config = write_config(tmp_path)  # Europe/Rome; the game starts 2026-12-01 09:00 UTC
    assert cli("init", config).returncode == 0
    proposed = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    drop(
        tmp_path / "maildir", "carla@example.org", "PROPOSE ENACT\nBe kind.\nEND", "<p@x>", proposed
    )
    ran = cli("run", config, "--once", "--now", "2026-12-01T10:00:00+00:00")
    assert ran.returncode == 0, ran.stderr
    before = cli("status", config, "--now", "2026-12-02T12:00:00+01:00")
    assert before.returncode == 0, before.stderr
    lines = before.stdout.splitlines()
    assert lines[0] == "Test Nomic at Wed 02 Dec 2026 12:00 CET (Europe/Rome)"
    assert lines[1] == (
        "round 1, phase debate, turn of Carla De Santis, proposal 301, "
        "until Tue 08 Dec 2026 11:00 CET"
    )
    assert lines[2].startswith("King Ada Lovelace;")
    after = cli("status", config, "--now", "2026-12-09T00:00:00+00:00")
    assert "(past: the next run fires it)" in after.stdout
    assert "--now" in one_line_error(cli("status", config, "--now", "tomorrow"))


def drop(maildir: Path, sender: str, body: str, mid: str, at: datetime | None = None) -> None:
    message = EmailMessage()
    message["From"], message["To"] = sender, "referee@nomic.example"
    message["Subject"], message["Message-ID"] = "Nomic", mid
    message.set_content(body)
    key = mailbox.Maildir(str(maildir), create=False).add(message)
    if at is not None:  # delivered at the game's time: the time in its name, and its mtime
        moved = maildir / "new" / f"{int(at.timestamp())}.{key}"
        (maildir / "new" / key).rename(moved)
        os.utime(moved, (at.timestamp(), at.timestamp()))


def test_without_smtp_run_writes_the_sent_maildir_and_outbox_exports(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    drop(tmp_path / "maildir", "carla@example.org", "PROPOSE ENACT\nBe kind.\nEND", "<p@x>")
    ran = cli("run", config, "--once", "--now", "2026-12-01T10:00:00+00:00")
    assert ran.returncode == 0, ran.stderr
    assert "written to sent/ 10" in ran.stdout  # opening (6), reply, proposal 301 to all (3)
    sent = mailbox.Maildir(str(tmp_path / "sent"), create=False)
    recipients = sorted(str(m["To"]) for m in sent)
    assert len(recipients) == 10 and any("carla@example.org" in r for r in recipients)
    assert "outbox: 0 waiting, 10 sent" in cli("status", config).stdout
    listed = cli("outbox", config, "--status", "sent")
    assert listed.returncode == 0, listed.stderr
    assert len([line for line in listed.stdout.splitlines() if "  sent  " in line]) == 10
    assert "[Test Nomic] Proposal 301" in listed.stdout
    export = tmp_path / "export.mbox"
    done = cli("outbox", config, "--export", export)
    assert done.returncode == 0 and len(mailbox.mbox(str(export))) == 10
    assert cli("outbox", config, "--export", export).returncode == 0  # an export is replaced
    precious = tmp_path / "notes.txt"
    precious.write_text("mine")
    assert "not an mbox" in one_line_error(cli("outbox", config, "--export", precious))
    assert precious.read_text() == "mine"
    assert "--status" in one_line_error(cli("outbox", config, "--status", "lost"))


def test_sent_maildir_that_cannot_be_written_keeps_the_mail_waiting(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    shutil.rmtree(tmp_path / "sent")
    (tmp_path / "sent").write_text("not a folder")
    ran = cli("run", config, "--once", "--now", "2026-12-01T10:00:00+00:00")
    assert "written to sent/ 0, deferred 6" in ran.stdout, ran.stdout + ran.stderr
    (tmp_path / "sent").unlink()
    again = cli("run", config, "--once", "--now", "2026-12-01T10:01:00+00:00")
    assert "written to sent/ 6" in again.stdout


@pytest.mark.parametrize("language", ["en", "it"])
def test_demo_plays_a_game_to_its_winner(tmp_path: Path, language: str) -> None:
    done = cli("demo", "--language", language, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "nomic-demo"
    assert "Winner: Bob Rossi." in done.stdout
    sent = len(mailbox.Maildir(str(folder / "sent"), create=False))
    assert f"{sent} mails the referee sent are in the Maildir" in done.stdout and sent > 30
    assert (folder / "game.toml").read_text().startswith("# The game of `nomic-referee demo`")
    assert (folder / "maildir" / "new").is_dir() and not any((folder / "maildir" / "new").iterdir())
    assert any((folder / "archive").iterdir())
    state = json.loads(cli("status", folder / "game.toml", "--json").stdout)
    assert state["over"] and state["winner"] == "bob@example.org"
    assert [p["status"] for p in state["proposals"]] == ["adopted", "rejected", "adopted"]
    assert state["mail"]["sent"] == sent and state["mail"].get("pending", 0) == 0
    turn = "turn" if language == "en" else "turno"  # Bob's out-of-turn proposal is refused
    assert any(turn in t and "201" in t for t in _replies(folder / "sent", "bob@example.org"))
    # the players' mail as the referee took it, dated at the game's time, verifies (213)
    processed = folder / "maildir" / ".Processed"
    checked = cli("verify", folder / "game.toml", processed, "--sent", folder / "sent")
    assert checked.returncode == 0 and "PASS" in checked.stdout, checked.stdout + checked.stderr
    again = cli("demo", "--language", language, cwd=tmp_path)  # a second run starts afresh
    assert again.returncode == 0, again.stderr
    assert len(mailbox.Maildir(str(folder / "sent"), create=False)) == sent


def _replies(folder: Path, recipient: str) -> list[str]:
    """The plain text of every reply (Re:) to `recipient` in a Maildir."""
    texts: list[str] = []
    for message in mailbox.Maildir(str(folder), create=False):
        if recipient in str(message["To"]) and str(message["Subject"]).startswith("Re:"):
            part = next(p for p in message.walk() if p.get_content_type() == "text/plain")
            payload = part.get_payload(decode=True)
            assert isinstance(payload, bytes)
            texts.append(payload.decode(part.get_content_charset() or "utf-8"))
    return texts


def test_demo_never_overwrites_a_folder_that_is_not_a_demo(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert "not empty" in one_line_error(cli("demo", tmp_path))
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert "--language" in one_line_error(cli("demo", tmp_path / "x", "--language", "fr"))


def test_demo_never_clears_a_game_made_from_its_config(tmp_path: Path) -> None:
    """A demo's game.toml copied in place and made a real game (another name, its players)
    keeps the demo's first line; the demo run again there refuses and leaves it whole
    (new-user review: it wiped the game's database and mail)."""
    folder = tmp_path / "g2"
    assert cli("demo", folder).returncode == 0
    config = folder / "game.toml"
    text = config.read_text(encoding="utf-8").replace('name = "Nomic demo"', 'name = "Game Two"')
    config.write_text(text, encoding="utf-8")
    (folder / "nomic.db").write_bytes(b"my game")
    refused = one_line_error(cli("demo", folder))
    assert "names another game" in refused
    assert (folder / "nomic.db").read_bytes() == b"my game"
    assert 'name = "Game Two"' in config.read_text(encoding="utf-8")
