"""Getting the record out (213): `export-mail` for the operator, ARCHIVE by mail for a player.

A game is played through the live service (Maildir in); the operator exports what the referee
received and sent with the CLI, and `verify` passes on it, with and without the database. A
player asks for the archive by mail and gets the players' mail (never a stranger's) as a gzipped
mbox and the config without secrets; once a day; a record past the size limit is not attached.
A replay makes the ARCHIVE reply again byte for byte (`verify` compares it with the outbox).
"""

from __future__ import annotations

import gzip
import json
import mailbox
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from examples.make_examples import START, build
from referee.config import Settings, load_settings
from referee.core.events import Enrol
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, T0, files_of, flat_text, mail
from tests.sink import game_config, play_by_maildir

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]
EVE = "eve@stranger.example"
SECRET = "hunter2-not-for-players"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True)


@pytest.fixture
def played(tmp_path: Path) -> Iterator[tuple[Path, Settings]]:
    """The example game's first ten mails and a player's ARCHIVE, played live from a Maildir."""
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = load_settings(config)
    _, mails = build("en")
    mails = mails[:10]
    last = mails[-1][1]
    mails.append(
        (mail(BOB, "ARCHIVE", at=last + timedelta(hours=1)), last + timedelta(hours=1), BOB)
    )
    store = Store(settings.database_url)
    try:
        play_by_maildir(store, settings, START, mails, crlf=True)
    finally:
        store.close()
    yield tmp_path, settings


def test_export_mail_writes_what_verify_passes_with_and_without_the_database(
    played: tuple[Path, Settings],
) -> None:
    folder, _settings = played
    config, out = folder / "game.toml", folder / "record.mbox"
    done = run("export-mail", str(config), "--out", str(out), "--sent")
    assert done.returncode == 0, done.stderr
    assert "11 mails received written to" in done.stdout
    sent = folder / "record.sent.mbox"
    assert sent.is_file() and "sent written to" in done.stdout
    box = mailbox.mbox(str(out), create=False)
    assert len(box) == 11
    _, mails = build("en")
    _raw, at, sender = mails[0]
    first = box.get_bytes(next(box.iterkeys()), from_=True).split(b"\n", 1)[0]
    assert first == f"From {sender} {time.asctime(at.timetuple())}".encode()  # when it took effect
    box.close()
    held = mailbox.mbox(str(sent), create=False)
    assert len(held) > 30
    archived = [m for m in held if "mail.mbox.gz" in m.as_string()]  # BOB's ARCHIVE reply
    assert len(archived) == 1  # verify below: a replay makes it again byte for byte
    for extra in ((), ("--no-database",)):
        checked = run("verify", str(config), str(out), "--sent", str(sent), "--json", *extra)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        verdict = json.loads(checked.stdout)
        assert verdict["ok"] is True and verdict["sent_missing"] == 0
        assert verdict["database_links"] == (0 if extra else verdict["links"])
    # with nothing to hold the mail against, the player is told to compare the head
    alone = run("verify", str(config), str(out), "--no-database")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "nothing to hold it against" in alone.stdout and "X-Nomic-Chain" in alone.stdout
    held_against = run("verify", str(config), str(out), "--sent", str(sent), "--no-database")
    assert "nothing to hold it against" not in held_against.stdout
    # careless mistakes are said plainly: a replay never writes over another file, a gzip cut
    # short is named as such (not "aborted"), a missing --sent names the option
    notes = folder / "notes.txt"
    notes.write_text("mine\n")
    refused = run("replay", str(config), str(out), "--out", str(notes))
    assert refused.returncode != 0 and "--out" in refused.stderr
    assert notes.read_text() == "mine\n"
    packed = gzip.compress(out.read_bytes())
    (folder / "cut.mbox.gz").write_bytes(packed[: len(packed) // 2])
    for command in ("replay", "verify"):
        cut = run(command, str(config), str(folder / "cut.mbox.gz"))
        assert cut.returncode == 2 and "damaged gzip file (cut short" in cut.stderr, cut.stderr
    missing = run("verify", str(config), str(out), "--sent", str(folder / "gone.mbox"))
    assert "verify --sent: mbox not found" in missing.stderr
    # a second export replaces the first, whole
    again = run("export-mail", str(config), "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert len(mailbox.mbox(str(out), create=False)) == 11


def test_export_mail_is_read_only_and_never_overwrites_another_file(tmp_path: Path) -> None:
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'none.db'}")
    done = run("export-mail", str(config), "--out", str(tmp_path / "x.mbox"))
    assert done.returncode != 0
    assert "not initialised" in done.stderr + done.stdout
    assert not (tmp_path / "none.db").exists()
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    refused = run("export-mail", str(config), "--out", str(notes))
    assert refused.returncode != 0 and notes.read_text() == "my notes\n"


# ----- ARCHIVE by mail ------------------------------------------------------------------------


def reply_to(referee: Referee, message_id: str) -> EmailMessage:
    replies = []
    for row in referee.store.outbox(referee.game_id):
        parsed = message_from_bytes(row.raw, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        if row.kind == "reply" and str(parsed["In-Reply-To"]) == message_id:
            replies.append(parsed)
    assert len(replies) == 1
    return replies[0]


@pytest.fixture
def secret_settings(tmp_path: Path) -> Settings:
    """The test game, its config also naming an SMTP server with a password."""
    path = write_config(tmp_path)
    text = path.read_text(encoding="utf-8")
    text += f'\n[smtp]\nhost = "smtp.secret.example"\nusername = "ref"\npassword = "{SECRET}"\n'
    path.write_text(text, encoding="utf-8")
    return load_settings(path)


@pytest.fixture
def game(secret_settings: Settings) -> Iterator[Referee]:
    store = Store(secret_settings.database_url)
    try:
        yield Referee.create(store, secret_settings, T0)
    finally:
        store.close()


def ask(referee: Referee, sender: str, at_hours: float, body: str = "ARCHIVE") -> EmailMessage:
    at = T0 + timedelta(hours=at_hours)
    message_id = f"<ask-{sender.split('@')[0]}-{at_hours}@example.org>"
    referee.receive(mail(sender, body, at=at, message_id=message_id), at)
    return reply_to(referee, message_id)


def test_archive_by_mail_sends_the_players_mail_and_a_config_without_secrets(
    game: Referee, tmp_path: Path
) -> None:
    game.receive(mail(ADA, "STATUS", message_id="<ada-status@example.org>"), T0)
    game.receive(mail(EVE, "hello, may I see?", message_id="<eve-1@example.org>"), T0)
    game.receive(mail(EVE, "JOIN Eve Stranger", message_id="<eve-2@example.org>"), T0)
    asked = [r for r in game.store.outbox(game.game_id) if r.kind == "confirm"]
    assert len(asked) == 1  # Eve confirms from her address: still a stranger's mail
    confirm_id = str(message_from_bytes(asked[0].raw)["Message-ID"])
    yes = mail(EVE, "yes", "Re: confirm", message_id="<eve-3@example.org>")
    yes = yes.replace(
        b"Subject:", f"In-Reply-To: {confirm_id}\nReferences: {confirm_id}\nSubject:".encode(), 1
    )
    game.receive(yes, T0)
    assert [r.status for r in game.store.outbox(game.game_id) if r.kind == "join_prompt"]
    elsewhere = mail(ADA, "VOTE 301 YES", message_id="<ada-to-bob@example.org>")
    elsewhere = elsewhere.replace(b"To: referee@nomic.example", b"To: bob@example.org", 1)
    game.receive(elsewhere, T0)  # Ada's mail to Bob, resent here: refused, and never shared
    game.receive(mail(CARLA, "SCORES", message_id="<carla-scores@example.org>"), T0)
    reply = ask(game, BOB, 2)
    assert "Done." in flat_text(reply) and "2 mails" in flat_text(reply)
    assert "The 4 other mails the game received" in flat_text(reply)  # stand-ins
    files = files_of(reply)
    assert set(files) == {"mail.mbox.gz", "game.toml"}

    unpacked = tmp_path / "mail.mbox"
    unpacked.write_bytes(gzip.decompress(files["mail.mbox.gz"]))
    box = mailbox.mbox(str(unpacked), create=False)
    ids = [str(box[key]["Message-ID"]) for key in box.iterkeys() if box[key]["Message-ID"]]
    assert ids == ["<ada-status@example.org>", "<carla-scores@example.org>"]  # no stranger
    held = [box[key] for key in box.iterkeys() if not box[key]["Message-ID"]]
    assert len(held) == 4 and all(m["X-Withheld-Digest"] for m in held)  # Eve's 3, Ada's to Bob
    packed = unpacked.read_bytes().lower()
    assert b"stranger.example" not in packed and b"<eve-" not in packed and b"eve@" not in packed
    assert b"Stranger" not in unpacked.read_bytes() and b"may I see" not in unpacked.read_bytes()

    config = files["game.toml"].decode()
    assert SECRET not in config and "smtp" not in config and "password" not in config
    data = tomllib.loads(config)
    assert set(data) <= {"game", "players", "parameters", "limits", "auth"}
    assert not {"archive", "site"} & set(data["game"])
    assert {p["email"] for p in data["players"]} == {ADA, BOB, CARLA}
    copy = tmp_path / "copy" / "game.toml"
    copy.parent.mkdir()
    copy.write_bytes(files["game.toml"])
    loaded = load_settings(copy)  # a config a player can replay with
    assert loaded.game.start == T0 and loaded.limits == game.settings.limits
    assert loaded.smtp is None and loaded.imap is None and loaded.dkim is None
    assert SECRET.encode() not in b"".join(r.raw for r in game.store.outbox(game.game_id))


def test_archive_once_a_day_then_again_tomorrow(game: Referee) -> None:
    assert set(files_of(ask(game, BOB, 1))) == {"mail.mbox.gz", "game.toml"}
    again = ask(game, BOB, 3, "ARCHIVIO")  # the Italian word too
    assert not files_of(again)
    assert "Refused." in flat_text(again) and "once a day" in flat_text(again)
    assert "Ask again from" in flat_text(again)
    other = ask(game, CARLA, 3)  # the cap is each player's own
    assert set(files_of(other)) == {"mail.mbox.gz", "game.toml"}
    tomorrow = ask(game, BOB, 24 + 1)
    assert set(files_of(tomorrow)) == {"mail.mbox.gz", "game.toml"}
    assert "ARCHIVE" in flat_text(ask(game, ADA, 26, "HELP"))  # HELP lists it, from the registry


def test_a_record_past_the_limit_is_not_attached_and_the_reply_says_whom_to_ask(
    secret_settings: Settings,
) -> None:
    small = replace(secret_settings, limits=replace(secret_settings.limits, archive_bytes=10))
    store = Store(small.database_url)
    try:
        referee = Referee.create(store, small, T0)
        referee.receive(mail(ADA, "STATUS"), T0)
        reply = ask(referee, BOB, 1)
        assert not files_of(reply)
        said = flat_text(reply)
        assert "Refused." in said and "export-mail" in said and "operator" in said
    finally:
        store.close()


def test_the_welcome_mail_says_the_players_mail_is_shared(game: Referee) -> None:
    opening = [
        message_from_bytes(r.raw, policy=policy.default)
        for r in game.store.outbox(game.game_id)
        if r.kind == "game_started"
    ]
    assert opening
    for message in opening:
        assert isinstance(message, EmailMessage)
        assert "shared with the table" in flat_text(message) and "ARCHIVE" in flat_text(message)


@pytest.mark.parametrize(
    ("language", "shared", "word"),
    [("en", "shared with the table", "ARCHIVE"), ("it", "condivisa con il tavolo", "ARCHIVIO")],
)
def test_a_player_who_joins_is_told_his_mail_is_shared(
    tmp_path: Path, language: str, shared: str, word: str
) -> None:
    settings = load_settings(write_config(tmp_path, language))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        referee.operate(Enrol("dan@example.org", "Dan Brown"), T0 + timedelta(hours=1))
        welcome = [r for r in store.outbox(referee.game_id) if r.kind == "welcome"]
        assert len(welcome) == 1
        message = message_from_bytes(welcome[0].raw, policy=policy.default)
        assert isinstance(message, EmailMessage)
        assert shared in flat_text(message) and f" {word} " in flat_text(message)
    finally:
        store.close()


def test_day_cap_is_the_engines_and_survives_a_replay(game: Referee) -> None:
    ask(game, BOB, 1)
    assert game.state.archived_at(BOB) == T0 + timedelta(hours=1)
    rebuilt = Referee(game.store, game.game_id, game.settings)
    assert rebuilt.state.archived_at(BOB) == T0 + timedelta(hours=1)
    assert rebuilt.state.archived_at(ADA) is None
