"""A mail the referee cannot read is kept and its sender told, in a word, once a day (issue 15).

A mail nested deeper than any mail client writes (or whose body the parser gives up on) is set
aside in quarantine, whole. Its headers still say who sent it: a player the receiving server
vouches for is answered in the mail's thread with what went wrong and what to do (send it
again as plain text); anyone else, or a player whose mail cannot be shown to be his, gets at
most the short note strangers get, once a day per address. Nothing of the mail is quoted, a
machine is never answered, the note goes through the outbox like any mail, `run --once` exits
0 for such a handled mail, and `verify` (a replay) makes the same note byte for byte.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import Settings, load_settings
from referee.replay import write_mbox
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from referee.store.tables import OutboxRow
from referee.verify import verify
from tests.conftest import write_config
from tests.helpers import BOB, CARLA, T0, mail
from tests.sender_mail import SERVER, vouched

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]
SECRET = "PLANTED-WORDS"  # in the unreadable mail's subject and text: never sent back
STRANGER = "mallory@elsewhere.example"


def deep(
    sender: str,
    mid: str,
    depth: int = 150,
    headers: tuple[tuple[str, str], ...] = (),
) -> bytes:
    """A mail of `depth` multiparts one inside the other (more than the referee reads)."""
    head = "".join(f"{name}: {value}\r\n" for name, value in headers)
    head += (
        f"From: {sender}\r\nTo: referee@nomic.example\r\nSubject: {SECRET} subject\r\n"
        f"Message-ID: {mid}\r\nDate: Tue, 01 Dec 2026 12:00:00 +0000\r\nMIME-Version: 1.0\r\n"
    )
    opening = "".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n' for i in range(depth)
    )
    closing = "".join(f"\r\n--b{i}--\r\n" for i in reversed(range(depth)))
    text = f"Content-Type: text/plain\r\n\r\nVOTE 301 YES\r\n{SECRET} body\r\n"
    return (head + opening + text + closing).encode()


def parsed(row: OutboxRow) -> EmailMessage:
    message = message_from_bytes(row.raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def text_of(message: EmailMessage) -> str:
    """The plain part's words, its lines joined (the mail is wrapped at 72 columns)."""
    part = message.get_body(("plain",))
    assert part is not None
    return " ".join(str(part.get_content()).split())


def drop(settings: Settings, name: str, raw: bytes, at: datetime) -> None:
    path = settings.maildir / "new" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    os.utime(path, (at.timestamp(), at.timestamp()))


def quarantined(settings: Settings) -> list[bytes]:
    folder = settings.maildir / ".Quarantine" / "cur"
    return [p.read_bytes() for p in sorted(folder.iterdir())] if folder.is_dir() else []


def told(store: Store, game_id: int, kinds: tuple[str, ...]) -> list[OutboxRow]:
    return [r for r in store.outbox(game_id) if r.kind in kinds]


@pytest.fixture
def game(tmp_path: Path) -> Iterator[tuple[Path, Settings, Store, int]]:
    """The example game, its mail from the Maildir, without sender authentication."""
    config = write_config(tmp_path)
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        game_id = Referee.create(store, settings, T0).game_id
        yield config, settings, store, game_id
    finally:
        store.close()


def test_a_players_unreadable_mail_is_kept_and_answered_and_run_once_exits_0(
    game: tuple[Path, Settings, Store, int],
) -> None:
    config, settings, store, game_id = game
    raw = deep(CARLA, "<deep-carla@example.org>")
    at = T0 + timedelta(hours=3)
    drop(settings, "1.deep", raw, at)
    done = subprocess.run(
        [*CLI, "run", str(config), "--once", "--now", at.isoformat()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr  # handled: kept, told, logged, counted
    assert "processed 0 mails, 1 set aside (1 unreadable)" in done.stdout
    assert "set aside in quarantine: Unreadable: more than 100 nested MIME parts" in done.stderr
    assert "WARNING" in done.stderr and "ERROR" not in done.stderr
    assert quarantined(settings) == [raw]  # kept whole
    assert store.counts(game_id)["quarantined"] == 1

    (row,) = told(store, game_id, ("unreadable", "unreadable_note"))
    assert row.kind == "unreadable" and row.recipient == CARLA and row.status == "sent"
    answer = parsed(row)
    assert answer["Subject"] == "[Test Nomic] Your mail could not be read"  # the game's tag
    assert answer["In-Reply-To"] == "<deep-carla@example.org>"  # in the mail's own thread
    text = text_of(answer)
    assert text.startswith("Hello Carla De Santis,")
    assert "more than 100 parts inside one another" in text
    assert "as plain text" in text
    assert SECRET not in row.raw.decode("ascii", "replace") and SECRET not in text
    link, head = str(answer["X-Nomic-Chain"]).split()  # the link the game stands at
    assert {(c.seq, c.head) for c in store.chain(game_id)} >= {(int(link), head)}
    assert "VOTE" not in text and store.inbound_count(game_id) == 1  # nothing in it was read


def test_strangers_and_machines_get_at_most_the_days_short_note(
    game: tuple[Path, Settings, Store, int],
) -> None:
    _, settings, store, game_id = game
    service = Service(settings, store)
    at = T0 + timedelta(hours=3)
    drop(settings, "1.deep", deep(STRANGER, "<s1@elsewhere.example>"), at)
    drop(settings, "2.again", deep(STRANGER, "<s2@elsewhere.example>"), at + timedelta(hours=1))
    robot = (("Auto-Submitted", "auto-replied"),)
    drop(settings, "3.robot", deep("robot@elsewhere.example", "<r@x>", headers=robot), at)
    drop(settings, "4.nobody", deep("a@x.example, b@x.example", "<n@x>"), at)
    summary = service.run_once(at + timedelta(hours=2))
    assert (summary.failed, summary.unreadable) == (4, 4)
    assert len(quarantined(settings)) == 4

    (note,) = told(store, game_id, ("unreadable", "unreadable_note"))
    assert note.kind == "unreadable_note" and note.recipient == STRANGER
    message = parsed(note)
    assert message["Subject"] == "[Test Nomic] A mail could not be read"
    assert message["In-Reply-To"] is None  # not even its Message-ID goes back
    text = text_of(message)
    assert "could not be read" in text and "more than 100 parts inside one another" in text
    assert "at most once a day" in text and SECRET not in note.raw.decode("ascii", "replace")
    stranger = Referee.open(store, settings).letters.renderer.render("stranger", {"subject": ""})
    assert len(text) <= len(stranger.text)  # no longer than the note strangers get

    drop(settings, "5.tomorrow", deep(STRANGER, "<s3@elsewhere.example>"), at + timedelta(days=1))
    service.run_once(at + timedelta(days=1))
    notes = told(store, game_id, ("unreadable_note",))
    assert len(notes) == 2 and len({n.message_id for n in notes}) == 2  # one a day


def test_the_same_unreadable_mail_read_again_is_answered_once(
    game: tuple[Path, Settings, Store, int],
) -> None:
    """A crash after the answer is committed and before the mail is moved: read again."""
    _, settings, store, game_id = game
    service = Service(settings, store)
    raw = deep(BOB, "<deep-bob@example.org>")
    at = T0 + timedelta(hours=3)
    drop(settings, "1.deep", raw, at)
    drop(settings, "2.same", raw, at)
    service.run_once(at)
    assert len(told(store, game_id, ("unreadable",))) == 1
    assert quarantined(settings) == [raw, raw]  # neither copy lost


def test_a_parser_that_gives_up_on_a_body_is_named_too(
    game: tuple[Path, Settings, Store, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any failure of the parser on a body (a bug, a case it cannot take) is `Unreadable`."""
    import referee.mail.intake as intake
    from referee.mail.parse import parse_message as real

    def failing(raw: bytes, headers_only: bool = False) -> object:
        if not headers_only and b"TRIPS-THE-PARSER" in raw:
            raise RecursionError("maximum recursion depth exceeded")
        return real(raw, headers_only)

    monkeypatch.setattr(intake, "parse_message", failing)
    _, settings, store, game_id = game
    drop(settings, "1.odd", mail(BOB, "TRIPS-THE-PARSER"), T0 + timedelta(hours=1))
    summary = Service(settings, store).run_once(T0 + timedelta(hours=1))
    assert (summary.failed, summary.unreadable) == (1, 1)
    (row,) = told(store, game_id, ("unreadable",))
    text = text_of(parsed(row))
    assert "its contents could not be taken apart into text" in text
    assert "TRIPS" not in row.raw.decode("ascii", "replace")


def guarded(folder: Path, auth: str, language: str = "en") -> Path:
    config = write_config(folder, language)
    config.write_text(config.read_text(encoding="utf-8") + f"\n[auth]\n{auth}\n", "utf-8")
    return config


@pytest.mark.parametrize("language", ["en", "it"])
def test_only_a_player_the_server_vouches_for_is_answered_and_verify_agrees(
    tmp_path: Path, language: str
) -> None:
    auth = f'required = true\ntrusted_authserv_id = "{SERVER}"\nverify_dkim = false'
    config = guarded(tmp_path, auth, language)
    settings = load_settings(config)
    passed = vouched("dkim=pass header.d=example.org")
    inbound = [
        (deep(BOB, "<deep-bob@example.org>", headers=passed), T0 + timedelta(hours=2)),
        (deep(CARLA, "<deep-carla@example.org>"), T0 + timedelta(hours=3)),  # no server's word
        (mail(CARLA, "STATUS", headers=dict(passed)), T0 + timedelta(hours=4)),
    ]
    store = Store(settings.database_url)
    try:
        game_id = Referee.create(store, settings, T0).game_id
        service = Service(settings, store)
        for index, (raw, at) in enumerate(inbound):
            drop(settings, f"{index}.mail", raw, at)
            service.run_once(at)
        answers = told(store, game_id, ("unreadable", "unreadable_note"))
        sent = [(r.raw, r.created_at) for r in store.outbox(game_id)]
    finally:
        store.close()
    assert [(r.kind, r.recipient) for r in answers] == [
        ("unreadable", BOB),
        ("unreadable_note", CARLA),
    ]
    subjects = [str(parsed(r)["Subject"]) for r in answers]
    texts = [text_of(parsed(r)) for r in answers]
    if language == "en":
        assert subjects == [
            "[Test Nomic] Your mail could not be read",
            "[Test Nomic] A mail could not be read",
        ]
        assert "as plain text" in texts[0]
    else:
        assert subjects == [
            "[Test Nomic] Non è stato possibile leggere la tua mail",
            "[Test Nomic] Non è stato possibile leggere una mail",
        ]
        assert texts[0].startswith("Ciao Bob Rossi,")
        assert "più di 100 parti una dentro l'altra" in texts[0]
        assert "come testo semplice" in texts[0] and "al più una volta al giorno" in texts[1]
    assert all(SECRET not in r.raw.decode("ascii", "replace") for r in answers)

    write_mbox(tmp_path / "inbound.mbox", inbound, "player@example.org")
    write_mbox(tmp_path / "sent.mbox", sent, settings.game.address)
    verdict = verify(settings, tmp_path / "inbound.mbox", tmp_path / "sent.mbox")
    assert verdict.ok, verdict.divergence  # the replay makes the same answers, byte for byte
    assert verdict.sent_checked == len(sent) and verdict.sent_missing == 0


def test_a_player_shown_only_by_a_signature_checked_here_gets_the_short_note(
    tmp_path: Path,
) -> None:
    """With only DKIM checked here, a mail that cannot be read is not shown to be the
    player's (its verdict would be in no link for `verify`): the short note, capped."""
    settings = load_settings(guarded(tmp_path, "required = true"))
    store = Store(settings.database_url)
    try:
        game_id = Referee.create(store, settings, T0).game_id
        drop(settings, "1.deep", deep(CARLA, "<deep@example.org>"), T0 + timedelta(hours=1))
        Service(settings, store).run_once(T0 + timedelta(hours=1))
        (row,) = told(store, game_id, ("unreadable", "unreadable_note"))
        assert (row.kind, row.recipient) == ("unreadable_note", CARLA)
    finally:
        store.close()


def test_verify_of_an_export_passes_when_an_unreadable_mail_was_answered(
    game: tuple[Path, Settings, Store, int],
) -> None:
    """Such a mail makes no link, so `export-mail` does not hold it; its answer is named in a
    note, not taken for a mail the rules never make (new-user review)."""
    config, settings, store, game_id = game
    at = T0 + timedelta(hours=3)
    drop(settings, "1.deep", deep(CARLA, "<deep-carla@example.org>"), at)
    drop(settings, "2.status", mail(BOB, "STATUS"), at + timedelta(hours=1))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)

    done = cli("run", str(config), "--once", "--now", (at + timedelta(hours=1)).isoformat())
    assert done.returncode == 0, done.stderr
    assert told(store, game_id, ("unreadable",))
    record = settings.folder / "record.mbox"
    done = cli("export-mail", str(config), "--out", str(record), "--sent")
    assert done.returncode == 0, done.stderr
    done = cli(
        "verify", str(config), str(record), "--sent", str(settings.folder / "record.sent.mbox")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout
    assert "note: 1 answer(s) to mail that could not be read not checked" in done.stdout
