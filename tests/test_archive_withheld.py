"""ARCHIVE end to end with strangers (213, 201): a player's archive replays to the live head.

A game where one stranger joins (JOIN, a confirming yes, the King's ADMIT) and another never
does (a hello and a JOIN never confirmed). A player mails ARCHIVE; the attachment is unpacked
as a player would, and `nomic-referee verify` and `replay` (the CLI) reach the live game's
chain head: each withheld mail is a stand-in holding none of its words, sender or subject,
and the newcomer's request and confirmation are shared whole. Past `[limits] archive_bytes`
the record goes to the site folder under its SHA-256, linked from no page, and its bytes
replay to the same head (`replay --site` writes the same files).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mailbox
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path

import pytest

from referee.config import Settings, load_settings
from referee.replay import write_mbox
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import CONFIG
from tests.helpers import ADA, BOB, T0, files_of, flat_text, mail
from tests.sender_mail import SERVER, vouched

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]
DAN = "dan@newcomer.example"  # joins
EVE = "eve@stranger.example"  # never joins
URL = "https://nomic.example/game"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True)


def config_with_site(folder: Path, language: str = "en", archive_bytes: int = 5_000_000) -> Path:
    text = CONFIG.format(language=language).replace(
        '\nstart = "2026-12-01T09:00:00+00:00"\n',
        f'\nstart = "2026-12-01T09:00:00+00:00"\nsite = "site"\nsite_url = "{URL}"\n',
        1,
    )
    text += f"archive_bytes = {archive_bytes}\n"  # [limits] is the config's last table
    path = folder / "game.toml"
    path.write_text(text, encoding="utf-8")
    return path


def in_reply(raw: bytes, message_id: str) -> bytes:
    head = f"In-Reply-To: {message_id}\nReferences: {message_id}\nSubject:".encode()
    return raw.replace(b"Subject:", head, 1)


def outbox(referee: Referee, kind: str, to: str = "") -> list[EmailMessage]:
    found = []
    for row in referee.store.outbox(referee.game_id):
        if row.kind == kind and (not to or row.recipient == to):
            parsed = message_from_bytes(row.raw, policy=policy.default)
            assert isinstance(parsed, EmailMessage)
            found.append(parsed)
    return found


def play(referee: Referee) -> str:
    """The game with its two strangers, then BOB's ARCHIVE; the Message-ID of that mail."""
    times = iter(T0 + timedelta(minutes=m) for m in range(1, 100))

    def send(raw: bytes) -> None:
        referee.receive(raw, next(times))

    send(mail(ADA, "STATUS", message_id="<ada-status@example.org>"))
    send(mail(EVE, "hello, may I see the rules?", "Eve's secret subject", message_id="<e1@x>"))
    send(mail(DAN, "JOIN Dan Newman", "joining", message_id="<dan-join@newcomer.example>"))
    confirm = outbox(referee, "confirm", DAN)
    assert len(confirm) == 1
    send(
        in_reply(
            mail(DAN, "yes", "Re: confirm", message_id="<dan-yes@x>"), confirm[0]["Message-ID"]
        )
    )
    prompt = outbox(referee, "join_prompt")
    assert len(prompt) == 1  # the King is asked
    send(in_reply(mail(ADA, "ADMIT 1 YES", "Re: join"), prompt[0]["Message-ID"]))
    assert referee.state.player(DAN) is not None  # Dan plays now
    send(mail(EVE, "JOIN Eve Secretname", "Eve's other subject", message_id="<e2@x>"))
    assert len(outbox(referee, "confirm", EVE)) == 1  # never confirmed
    send(mail(DAN, "SCORES", message_id="<dan-scores@x>"))
    send(mail(BOB, "ARCHIVE", message_id="<bob-archive@example.org>"))
    return "<bob-archive@example.org>"


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Referee, Settings]]:
    settings = load_settings(config_with_site(tmp_path))
    store = Store(settings.database_url)
    try:
        yield Referee.create(store, settings, T0), settings
    finally:
        store.close()


def reply(referee: Referee, message_id: str) -> EmailMessage:
    replies = [m for m in outbox(referee, "reply") if str(m["In-Reply-To"]) == message_id]
    assert len(replies) == 1
    return replies[0]


def head_before_archive(referee: Referee) -> str:
    """The chain head the ARCHIVE mail found: the link before its own."""
    links = referee.store.chain(referee.game_id)
    assert links[-1].kind == "mail"
    return links[-2].head


def unpack(folder: Path, files: dict[str, bytes]) -> tuple[Path, Path]:
    folder.mkdir()
    (folder / "game.toml").write_bytes(files["game.toml"])
    (folder / "mail.mbox").write_bytes(gzip.decompress(files["mail.mbox.gz"]))
    return folder / "game.toml", folder / "mail.mbox"


def assert_nothing_of_eve(data: bytes) -> None:
    lowered = data.lower()
    for word in (b"eve@", b"stranger.example", b"secretname", b"secret subject", b"may i see"):
        assert word not in lowered


def test_archive_with_a_newcomer_and_a_stranger_verifies_to_the_live_head(
    live: tuple[Referee, Settings], tmp_path: Path
) -> None:
    referee, _settings = live
    asked = play(referee)
    answer = reply(referee, asked)
    said = flat_text(answer)
    assert "Done." in said and "The 2 other mails the game received" in said  # Eve's two
    files = files_of(answer)
    assert set(files) == {"mail.mbox.gz", "game.toml"}
    config, mbox = unpack(tmp_path / "player", files)
    assert_nothing_of_eve(mbox.read_bytes())
    box = mailbox.mbox(str(mbox), create=False)
    ids = [str(box[k]["Message-ID"]) for k in box.iterkeys() if box[k]["Message-ID"]]
    assert "<dan-join@newcomer.example>" in ids and "<dan-yes@x>" in ids  # the newcomer's, whole
    assert "<dan-scores@x>" in ids and "<ada-status@example.org>" in ids
    stand_ins = [box[k] for k in box.iterkeys() if box[k]["X-Withheld-Digest"]]
    assert len(stand_ins) == 2
    box.close()

    live_head = head_before_archive(referee)
    checked = run("verify", str(config), str(mbox), "--no-database", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    verdict = json.loads(checked.stdout)
    assert verdict["ok"] is True and verdict["head"] == live_head
    assert verdict["withheld"] == 2
    assert any("2 mail(s) of people not playing were withheld" in n for n in verdict["notes"])
    replayed = run("replay", str(config), str(mbox), "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["chain"]["head"] == live_head
    assert "2 mails withheld from the record" in replayed.stderr


def test_a_stand_in_changed_by_hand_changes_the_head(
    live: tuple[Referee, Settings], tmp_path: Path
) -> None:
    referee, _settings = live
    config, mbox = unpack(tmp_path / "player", files_of(reply(referee, play(referee))))
    text = mbox.read_bytes()
    start = text.index(b"X-Withheld-Digest: ") + len(b"X-Withheld-Digest: ")
    forged = text[:start] + (b"0" if text[start : start + 1] != b"0" else b"1") + text[start + 1 :]
    mbox.write_bytes(forged)
    checked = run("verify", str(config), str(mbox), "--no-database", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["head"] != head_before_archive(referee)


def test_export_mail_players_only_verifies_against_the_database(
    live: tuple[Referee, Settings], tmp_path: Path
) -> None:
    referee, settings = live
    play(referee)
    out = tmp_path / "players.mbox"
    config = tmp_path / "game.toml"
    done = run("export-mail", str(config), "--out", str(out), "--players-only")
    assert done.returncode == 0, done.stderr
    assert "(2 of them stand-ins)" in done.stdout
    assert_nothing_of_eve(out.read_bytes())
    checked = run("verify", str(config), str(out), "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    verdict = json.loads(checked.stdout)
    assert verdict["ok"] is True and verdict["database_links"] == verdict["links"]
    assert verdict["head"] == referee.store.chain(referee.game_id)[-1].head
    assert verdict["withheld"] == 2
    del settings


@pytest.mark.parametrize(("language", "words"), [("en", "no page links"), ("it", "nessuna pagina")])
def test_a_record_past_the_limit_is_linked_on_the_site_and_replays_to_the_same_head(
    tmp_path: Path, language: str, words: str
) -> None:
    settings = load_settings(config_with_site(tmp_path, language, archive_bytes=200))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        answer = reply(referee, play(referee))
        live_head = head_before_archive(referee)
        last = referee.store.chain(referee.game_id)[-2].seq
    finally:
        store.close()
    assert not files_of(answer)
    said = flat_text(answer)
    assert words in said
    ends = {"en": "The record ends at link", "it": "L'archivio finisce all'anello"}[language]
    assert f"{ends} {last}" in said and live_head in said  # the head verify must reach
    site = tmp_path / "site"
    folders = [p for p in (site / "archive").iterdir() if p.is_dir()]
    assert len(folders) == 1
    packed = (folders[0] / "mail.mbox.gz").read_bytes()
    digest = hashlib.sha256(packed).hexdigest()
    assert folders[0].name == digest
    assert f"{URL}/archive/{digest}/mail.mbox.gz" in said
    assert f"{URL}/archive/{digest}/game.toml" in said
    listing = (site / "archive" / "index.html").read_text(encoding="utf-8")
    assert digest not in listing

    # the site's own pages, written now as `run` and `nomic-referee site` write them, keep the
    # files and never link them
    built = run("site", str(tmp_path / "game.toml"), "--out", str(site))
    assert built.returncode == 0, built.stderr
    assert (folders[0] / "mail.mbox.gz").read_bytes() == packed
    for page in site.rglob("*"):
        if page.is_file() and digest not in str(page.relative_to(site)):
            assert digest.encode() not in page.read_bytes(), page

    # the bytes fetched from the link replay to the live head; `replay --site` writes the same
    config, mbox = unpack(
        tmp_path / "player",
        {
            "game.toml": (folders[0] / "game.toml").read_bytes(),
            "mail.mbox.gz": packed,
        },
    )
    assert_nothing_of_eve(mbox.read_bytes())
    checked = run("verify", str(config), str(mbox), "--no-database", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["head"] == live_head

    again = tmp_path / "again"
    whole = tmp_path / "whole.mbox"
    assert run("export-mail", str(tmp_path / "game.toml"), "--out", str(whole)).returncode == 0
    done = run("replay", str(tmp_path / "game.toml"), str(whole), "--site", str(again))
    assert done.returncode == 0, done.stderr
    assert (again / "archive" / digest / "mail.mbox.gz").read_bytes() == packed
    assert (again / "archive" / digest / "game.toml").read_bytes() == (
        folders[0] / "game.toml"
    ).read_bytes()


def test_without_a_site_the_record_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = config_with_site(tmp_path, archive_bytes=200)
    text = path.read_text(encoding="utf-8").replace(f'site_url = "{URL}"\n', "")
    path.write_text(text, encoding="utf-8")
    settings = load_settings(path)
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        answer = reply(referee, play(referee))
    finally:
        store.close()
    assert not files_of(answer)
    said = flat_text(answer)
    assert "Refused." in said and "export-mail" in said
    assert not (tmp_path / "site" / "archive").exists()


def test_verify_reads_the_archive_as_saved_and_makes_no_database(
    live: tuple[Referee, Settings], tmp_path: Path
) -> None:
    """mail.mbox.gz is read as the player saved it (gzip), and a verify run without
    --no-database leaves no empty nomic.db behind (213, verify review)."""
    referee, _settings = live
    files = files_of(reply(referee, play(referee)))
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "game.toml").write_bytes(files["game.toml"])
    (folder / "mail.mbox.gz").write_bytes(files["mail.mbox.gz"])
    checked = run("verify", str(folder / "game.toml"), str(folder / "mail.mbox.gz"), "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    verdict = json.loads(checked.stdout)
    assert verdict["ok"] is True and verdict["head"] == head_before_archive(referee)
    assert verdict["database_links"] == 0
    assert any("no database at" in note for note in verdict["notes"])
    assert sorted(p.name for p in folder.iterdir()) == ["game.toml", "mail.mbox.gz"]


def test_the_log_names_the_check_that_stopped_a_strangers_mail_plainly(
    live: tuple[Referee, Settings], caplog: pytest.LogCaptureFixture
) -> None:
    referee, _settings = live
    with caplog.at_level("WARNING", logger="referee"):
        referee.receive(mail(EVE, "hello", "Eve's subject", message_id="<e9@x>"), T0)
    lines = [r.getMessage() for r in caplog.records if "<e9@x>" in r.getMessage()]
    assert len(lines) == 1
    assert lines[0].endswith(
        "stopped by the player check (the sender is not a player of this game)"
    ), lines[0]
    assert "unbelieved" not in lines[0] and EVE not in lines[0]


def guarded(folder: Path) -> Settings:
    """The game with sender authentication on: the receiving server vouches for players."""
    path = config_with_site(folder)
    text = path.read_text(encoding="utf-8")
    text += f'\n[auth]\nrequired = true\ntrusted_authserv_id = "{SERVER}"\nverify_dkim = false\n'
    path.write_text(text, encoding="utf-8")
    return load_settings(path)


def test_the_players_check_of_his_inbox_notes_what_the_record_cannot_remake(
    tmp_path: Path,
) -> None:
    """Bob checks the referee's mail he received against his archive (--sent INBOX): the reply
    to ARCHIVE comes after the record, the note about a forgery in his name answers a withheld
    mail; both are counted and named, not failed. A mail moved to another time fails."""
    settings = guarded(tmp_path)
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        passed = dict(vouched("dkim=pass header.d=example.org"))
        times = iter(T0 + timedelta(minutes=m) for m in range(1, 100))
        referee.receive(mail(ADA, "STATUS", headers=passed), next(times))
        referee.receive(mail(BOB, "VOTE 301 NO", "forged", message_id="<forged@x>"), next(times))
        referee.receive(mail(EVE, "hello", "Eve's subject", message_id="<e1@x>"), next(times))
        referee.receive(mail(BOB, "STATUS", headers=passed), next(times))
        asked = "<bob-archive@example.org>"
        referee.receive(mail(BOB, "ARCHIVE", message_id=asked, headers=passed), next(times))
        rows = [r for r in store.outbox(referee.game_id) if r.recipient == BOB]
        notes = [r for r in rows if r.kind == "unbelieved"]
        assert len(notes) == 1  # "A mail in your name was not obeyed"
        answer = reply(referee, asked)
        live_head = head_before_archive(referee)
        last = referee.store.chain(referee.game_id)[-2].seq
    finally:
        store.close()
    said = flat_text(answer)
    assert f"The record ends at link {last} of the game's hash chain, head" in said
    assert live_head in said and "names it in its" in said and "X-Nomic-Chain" in said
    config, mbox = unpack(tmp_path / "player", files_of(answer))
    inbox = tmp_path / "player" / "INBOX"
    write_mbox(inbox, [(r.raw, r.created_at) for r in rows], settings.game.address)

    checked = run("verify", str(config), str(mbox), "--no-database", "--sent", str(inbox))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out = checked.stdout
    assert f"the record ends at link {last}, head {live_head}" in out
    assert f"X-Nomic-Chain: {last} {live_head}" in out
    assert "after the record: 1 mail not checked" in out
    assert "answers to withheld mail: 1 mail not checked" in out
    assert "PASS" in out
    verdict = json.loads(
        run(
            "verify", str(config), str(mbox), "--no-database", "--sent", str(inbox), "--json"
        ).stdout
    )
    assert verdict["sent_after_record"] == 1 and verdict["sent_answers_withheld"] == 1
    assert verdict["last_link"] == last and verdict["head"] == live_head
    assert verdict["sent_checked"] == len(rows) - 2

    # the operator's check of the players' record against the database passes as well
    players = tmp_path / "players.mbox"
    game = str(tmp_path / "game.toml")
    assert run("export-mail", game, "--out", str(players), "--players-only").returncode == 0
    against = run("verify", game, str(players), "--json")
    assert against.returncode == 0, against.stdout + against.stderr
    assert json.loads(against.stdout)["sent_answers_withheld"] == 1  # the note to Bob

    # the note moved a minute later answers no withheld mail: the rules never make it
    note = notes[0].raw
    date = message_from_bytes(note)["Date"]
    moved = format_datetime(parsedate_to_datetime(date) + timedelta(minutes=1))
    forged = [
        (r.raw.replace(date.encode(), moved.encode(), 1) if r.raw == note else r.raw) for r in rows
    ]
    write_mbox(inbox, [(raw, T0) for raw in forged], settings.game.address)
    failed = run("verify", str(config), str(mbox), "--no-database", "--sent", str(inbox))
    assert failed.returncode == 1, failed.stdout
    assert (
        "FAIL at sent mail" in failed.stdout and "the rules never make this mail" in failed.stdout
    )
