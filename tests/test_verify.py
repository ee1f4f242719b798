"""`nomic-referee verify`: a one-byte change to any record is found and named (213).

A game is played through the live service (Maildir in, `sent/` out); a player holds the mail
the referee received and the mail it sent. `verify` passes on the untouched record, and fails,
naming the first divergence, after one byte is changed in: a stored inbound message, a stored
event, a link's record, a stored outbox mail, a sent mail the player holds, and the inbound
mail the player gives.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from examples.make_examples import START, build
from referee.config import Settings, load_settings
from referee.replay import write_mbox
from referee.service import Referee
from referee.store.store import Store
from referee.verify import verify
from tests.sink import game_config, play_by_maildir

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]


def one_byte(data: bytes) -> bytes:
    """The same bytes with the case of the last letter swapped: one byte, still valid JSON."""
    for index in range(len(data) - 1, -1, -1):
        if chr(data[index]).isalpha() and data[index] < 128:
            return data[:index] + chr(data[index]).swapcase().encode() + data[index + 1 :]
    raise AssertionError("no letter to change")


@pytest.fixture
def game(tmp_path: Path) -> Iterator[tuple[Path, Settings]]:
    """A game of ten mails played live; the player's copies in inbound.mbox and sent.mbox."""
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = load_settings(config)
    _, mails = build("en")
    mails = mails[:10]
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        sent = [(row.raw, row.created_at) for row in store.outbox(game_id)]
    finally:
        store.close()
    write_mbox(tmp_path / "inbound.mbox", [(raw, at) for raw, at, _ in mails], "player@x.org")
    write_mbox(tmp_path / "sent.mbox", sent, settings.game.address)
    yield tmp_path, settings


def change_row(folder: Path, table: str, column: str, row: int) -> None:
    with sqlite3.connect(folder / "live.db") as db:
        ids = [r[0] for r in db.execute(f"SELECT id FROM {table} ORDER BY id")]
        (value,) = db.execute(f"SELECT {column} FROM {table} WHERE id = ?", (ids[row],)).fetchone()
        changed = one_byte(value if isinstance(value, bytes) else value.encode())
        db.execute(
            f"UPDATE {table} SET {column} = ? WHERE id = ?",
            (changed if isinstance(value, bytes) else changed.decode(), ids[row]),
        )


def test_an_untouched_record_passes(game: tuple[Path, Settings]) -> None:
    folder, settings = game
    verdict = verify(settings, folder / "inbound.mbox", folder / "sent.mbox")
    assert verdict.ok, verdict.divergence
    assert verdict.database_links == verdict.links > 10
    assert verdict.sent_checked > 30 and verdict.sent_missing == 0
    done = subprocess.run(
        [
            *CLI,
            "verify",
            str(folder / "game.toml"),
            str(folder / "inbound.mbox"),
            "--sent",
            str(folder / "sent.mbox"),
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True


@pytest.mark.parametrize(
    ("table", "column", "row", "where"),
    [
        ("chain", "raw", 3, "link 4"),  # a stored inbound message (the start is link 1)
        ("events", "payload", 2, "event 3"),  # a stored event
        ("chain", "record", 5, "link 6"),  # a link's record
        ("outbox", "raw", 7, "outbox mail"),  # a stored mail of the referee's
    ],
)
def test_a_one_byte_change_in_the_database_is_named(
    game: tuple[Path, Settings], table: str, column: str, row: int, where: str
) -> None:
    folder, settings = game
    change_row(folder, table, column, row)
    verdict = verify(settings, folder / "inbound.mbox")
    assert not verdict.ok and verdict.divergence is not None
    assert verdict.divergence.where.startswith(where), verdict.divergence


def test_a_one_byte_change_in_a_sent_mail_is_named(game: tuple[Path, Settings]) -> None:
    folder, _settings = game
    box = folder / "sent.mbox"
    text = box.read_bytes()
    cut = text.index(b"\nFrom ", len(text) // 2)  # a mail in the middle, its last letter
    box.write_bytes(one_byte(text[:cut]) + text[cut:])
    done = subprocess.run(
        [
            *CLI,
            "verify",
            str(folder / "game.toml"),
            str(folder / "inbound.mbox"),
            "--sent",
            str(box),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL at sent mail <" in done.stdout
    assert "published: line" in done.stdout and "the rules give: line" in done.stdout


def test_a_one_byte_change_in_the_inbound_mail_given_is_named(
    game: tuple[Path, Settings],
) -> None:
    folder, settings = game
    box = folder / "inbound.mbox"
    text = box.read_bytes()
    cut = text.index(b"\nFrom ", len(text) // 2)
    box.write_bytes(one_byte(text[:cut]) + text[cut:])
    verdict = verify(settings, box)
    assert not verdict.ok and verdict.divergence is not None
    assert verdict.divergence.where.startswith("link ")
    assert "differs from the mail given" in verdict.divergence.what


def test_verify_judges_senders_as_intake_recorded_when_the_keys_are_gone(tmp_path: Path) -> None:
    """Each mail's link binds the sender's verdict intake found (213); `verify` decides with it,
    so a game whose players' DKIM keys have left the DNS still verifies, and a verdict changed
    in the database is found (its link no longer hashes to its head)."""
    from dataclasses import replace as replaced

    from referee.config import AuthConfig
    from tests.helpers import ADA, BOB, CARLA, DAY, T0
    from tests.sender_mail import dns_for, make_key, raw_mail, sign

    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = replaced(load_settings(config), auth=AuthConfig(True, ()))
    private, record = make_key(tmp_path)
    store = Store(settings.database_url)
    mails: list[tuple[bytes, datetime]] = []
    try:
        Referee.create(store, settings, T0)
        referee = Referee(store, 1, settings, dns=dns_for(record, "example.org"))
        moves = [
            (CARLA, "PROPOSE ENACT\nEvery player says hello.\nEND"),
            (ADA, "VOTE 301 YES"),
            (BOB, "VOTE 301 YES"),
        ]
        for index, (sender, body) in enumerate(moves, start=1):
            at = T0 + index * DAY / 24
            raw = sign(raw_mail(sender, body, at=at), private)
            referee.receive(raw, at)
            mails.append((raw, at))
        assert referee.state.proposal(301) is not None
        links = [json.loads(link.record) for link in store.chain(referee.game_id)]
    finally:
        store.close()
    assert [link["auth"]["ok"] for link in links if link["kind"] == "mail"] == [True] * 3
    assert all("dkim" in link["auth"]["why"].lower() for link in links if link["kind"] == "mail")
    write_mbox(tmp_path / "inbound.mbox", mails, "player@x.org")
    verdict = verify(settings, tmp_path / "inbound.mbox")  # no DNS here knows the key
    assert verdict.ok, verdict.divergence
    assert any("as intake recorded (3 verdicts)" in note for note in verdict.notes)

    with sqlite3.connect(tmp_path / "live.db") as db:  # a verdict turned in the database
        rows = list(db.execute("SELECT id, record FROM chain ORDER BY seq"))
        row_id, text = next((i, t) for i, t in rows if '"auth"' in t)
        db.execute(
            "UPDATE chain SET record = ? WHERE id = ?",
            (text.replace('"ok":true', '"ok":false', 1), row_id),
        )
    verdict = verify(settings, tmp_path / "inbound.mbox")
    assert not verdict.ok and verdict.divergence is not None
    assert "does not hash to its head" in verdict.divergence.what


def test_body_lines_starting_from_pass_through_the_mbox_untouched(tmp_path: Path) -> None:
    """A player's line "From now on ..." (and one already written ">From ...") goes into the
    mbox escaped and comes back byte for byte (mboxrd), so verify passes on an untouched game
    (attacker review: the mboxo escaping made replay read a different mail)."""
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = load_settings(config)
    _, mails = build("en")
    mails = [
        (raw.rstrip(b"\n") + b"\nFrom now on we play faster.\n>From the other side.\n", at, who)
        if index in (3, 6)
        else (raw, at, who)
        for index, (raw, at, who) in enumerate(mails[:10])
    ]
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        sent = [(row.raw, row.created_at) for row in store.outbox(game_id)]
    finally:
        store.close()
    write_mbox(tmp_path / "inbound.mbox", [(raw, at) for raw, at, _ in mails], "player@x.org")
    write_mbox(tmp_path / "sent.mbox", sent, settings.game.address)
    assert b"\n>From now on" in (tmp_path / "inbound.mbox").read_bytes()
    assert b"\n>>From the other side" in (tmp_path / "inbound.mbox").read_bytes()
    verdict = verify(settings, tmp_path / "inbound.mbox", tmp_path / "sent.mbox")
    assert verdict.ok, verdict.divergence
    assert verdict.database_links == verdict.links > 10


@pytest.mark.parametrize("database", [True, False])
def test_a_game_whose_last_event_is_a_deadline_passes(tmp_path: Path, database: bool) -> None:
    """The adoption at the vote's close, with no mail after it, is part of the record: verify
    runs the clock to the database's last link, or without it to the last mail sent
    (new-user review)."""
    from datetime import timedelta

    from referee.runner import Service

    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = load_settings(config)
    _, mails = build("en")
    mails = mails[:10]
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        before = len(store.chain(game_id))
        Service(settings, store).run_once(mails[-1][1] + timedelta(days=10))
        assert len(store.chain(game_id)) > before  # deadlines fired after the last mail
        sent = [(row.raw, row.created_at) for row in store.outbox(game_id)]
    finally:
        store.close()
    write_mbox(tmp_path / "inbound.mbox", [(raw, at) for raw, at, _ in mails], "player@x.org")
    write_mbox(tmp_path / "sent.mbox", sent, settings.game.address)
    verdict = verify(settings, tmp_path / "inbound.mbox", tmp_path / "sent.mbox", database)
    assert verdict.ok, verdict.divergence
    assert verdict.sent_missing == 0


def test_the_exported_record_keeps_a_players_own_from_lines(tmp_path: Path) -> None:
    """export-mail writes each mail as its player wrote it: a line ">From the other side" is
    the player's (a quote mark before "From"), so it goes out as ">>From" and comes back as
    ">From", never as "From" (attacker review: the record dropped that `>`, which turned a
    quoted line into the player's own and made the replay drop a counted vote)."""
    from referee.record import export_mail
    from referee.replay import read_mbox

    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = load_settings(config)
    _, mails = build("en")
    tail = b"\n>From the other side.\n>>From further still.\nFrom now on we play faster.\n"
    mails = [
        (raw.rstrip(b"\n") + tail if index in (3, 6) else raw, at, who)
        for index, (raw, at, who) in enumerate(mails[:10])
    ]
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        head = store.chain(game_id)[-1].head
        export_mail(store, settings, tmp_path / "record.mbox")
    finally:
        store.close()
    written = (tmp_path / "record.mbox").read_bytes()
    assert written.count(b"\n>>From the other side.\n") == 2
    assert written.count(b"\n>>>From further still.\n") == 2
    assert written.count(b"\n>From now on we play faster.\n") == 2
    back = [m.raw for m in read_mbox(tmp_path / "record.mbox")]
    assert sum(b"\n>From the other side.\n>>From further still.\nFrom now" in r for r in back) == 2
    verdict = verify(settings, tmp_path / "record.mbox", database=False)
    assert verdict.ok, verdict.divergence
    assert verdict.head == head


@pytest.mark.parametrize("folder_of", [lambda box: box / "cur", lambda box: box])
def test_verify_takes_a_maildir_or_its_cur_folder(
    game: tuple[Path, Settings], folder_of: Callable[[Path], Path]
) -> None:
    """The operator points verify at the Maildir the service moved the mail to, or at its cur/
    folder as a file manager shows it (new-user review: a raw error)."""
    folder, settings = game
    processed = settings.maildir / ".Processed"
    given = folder_of(processed)
    done = subprocess.run(
        [
            *CLI,
            "verify",
            str(folder / "game.toml"),
            str(given),
            "--sent",
            str(folder / "sent.mbox"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "Errno" not in done.stderr
    if given.name == "cur":
        assert f"is a folder of the Maildir {processed}: reading the whole Maildir" in done.stderr


def test_verify_of_a_folder_that_is_no_maildir_says_so(game: tuple[Path, Settings]) -> None:
    folder, _ = game
    (folder / "letters").mkdir()
    done = subprocess.run(
        [*CLI, "verify", str(folder / "game.toml"), str(folder / "letters")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "is a folder but not a Maildir (no cur/ and new/ in it)" in done.stderr
    assert "its cur/ or new/ folder" in done.stderr


def test_a_players_archive_checks_his_inbox_with_deadlines_around_the_request(
    tmp_path: Path,
) -> None:
    """Bob mails ARCHIVE after a deadline fired and before others fire; he checks the referee's
    mail he received (--sent) against the record: the replay's clock stops at his request
    (the reply carrying the record says when), so it reaches the head the reply names, and
    the mail of the later deadlines is after the record, not a failure (213)."""
    import gzip
    from datetime import UTC, timedelta
    from email import message_from_bytes, policy

    from referee.runner import Service
    from tests.helpers import BOB, mail

    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = load_settings(config)
    _, mails = build("en")
    mails = mails[:10]
    asked_at = datetime(2026, 12, 16, 9, tzinfo=UTC)
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        Service(settings, store).run_once(asked_at - timedelta(hours=1))  # a deadline fires
        record_end = store.chain(game_id)[-1]
        assert record_end.kind == "tick"
        referee = Referee(store, game_id, settings)
        referee.receive(mail(BOB, "ARCHIVE", message_id="<bob-archive@x>"), asked_at)
        Service(settings, store).run_once(asked_at + timedelta(days=60))  # and more after it
        assert [r.kind for r in store.chain(game_id)][-2:] == ["tick", "tick"]
        rows = [r for r in store.outbox(game_id) if r.recipient == BOB]
    finally:
        store.close()
    reply = next(r for r in rows if b"mail.mbox.gz" in r.raw)
    parsed = message_from_bytes(reply.raw, policy=policy.default)
    files: dict[str, bytes] = {}
    for part in parsed.iter_attachments():
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        files[str(part.get_filename())] = payload
    player = tmp_path / "player"
    player.mkdir()
    (player / "game.toml").write_bytes(files["game.toml"])
    (player / "mail.mbox.gz").write_bytes(files["mail.mbox.gz"])
    assert gzip.decompress(files["mail.mbox.gz"]).startswith(b"From ")
    write_mbox(player / "INBOX", [(r.raw, r.created_at) for r in rows], settings.game.address)

    def players_check(inbox: str) -> dict[str, Any]:
        """Bob's check, as he runs it: his archive against the mail in his `inbox`."""
        archive = (str(player / "game.toml"), str(player / "mail.mbox.gz"))
        sent = ("--no-database", "--sent", str(player / inbox), "--json")
        done = subprocess.run(
            [*CLI, "verify", *archive, *sent],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    verdict = players_check("INBOX")
    assert verdict["head"] == record_end.head and verdict["last_link"] == record_end.seq
    assert verdict["sent_after_record"] > 1  # the reply, and the later deadlines' mail
    assert verdict["sent_checked"] == len(rows) - verdict["sent_after_record"]
    assert not any("are not in the mail given" in note for note in verdict["notes"])
    # Bob's inbox without one mail to him: the check names it (new-user review: only a count
    # of mail to anyone moved)
    held = [r for r in rows if b"Proposal 301" not in r.raw.split(b"\n\n", 1)[0]]
    assert len(held) < len(rows)
    write_mbox(player / "SHORT", [(r.raw, r.created_at) for r in held], settings.game.address)
    notes = players_check("SHORT")["notes"]
    assert any(f"to {BOB} (whose mailbox" in note and "Proposal 301" in note for note in notes)


def _bare_cr_in_header(raw: bytes) -> bytes:
    return raw.replace(b"\nSubject:", b"\r\r\nSubject:", 1)


def _bare_cr_in_body(raw: bytes) -> bytes:
    return raw.rstrip(b"\n") + b"\nhello\rVOTE 301 NO\r\r\n"


def _no_message_id(raw: bytes) -> bytes:
    head, _, body = raw.partition(b"\n\n")
    kept = [line for line in head.split(b"\n") if not line.lower().startswith(b"message-id:")]
    return b"\n".join(kept) + b"\n\n" + body


@pytest.mark.parametrize(
    ("change", "crlf"),
    [(_bare_cr_in_header, False), (_bare_cr_in_body, False), (_no_message_id, True)],
    ids=["bare-cr-in-a-header", "bare-cr-in-the-body", "crlf-and-no-message-id"],
)
def test_mail_with_odd_line_ends_verifies_from_the_record(
    tmp_path: Path, change: Callable[[bytes], bytes], crlf: bool
) -> None:
    """A mail whose lines end in a bare CR, or one delivered with CRLF and no Message-ID, is
    read as the record keeps it, so the exported record and the player's own mbox of an
    untouched game both verify (attacker review: the answer's Message-ID was made from the
    bytes as delivered, and the replay made another)."""
    from referee.record import export_mail

    settings = load_settings(game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}"))
    _, mails = build("en")
    mails = [
        (change(raw), at, who) if index in (2, 3) else (raw, at, who)
        for index, (raw, at, who) in enumerate(mails[:10])
    ]
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails, crlf=crlf)
        sent = [(row.raw, row.created_at) for row in store.outbox(game_id)]
        export_mail(store, settings, tmp_path / "record.mbox", sent=True)
    finally:
        store.close()
    write_mbox(tmp_path / "inbound.mbox", [(raw, at) for raw, at, _ in mails], "player@x.org")
    write_mbox(tmp_path / "sent.mbox", sent, settings.game.address)
    for inbound, outbound in (("inbound", "sent"), ("record", "record.sent")):
        verdict = verify(settings, tmp_path / f"{inbound}.mbox", tmp_path / f"{outbound}.mbox")
        assert verdict.ok, (inbound, verdict.divergence)
        assert verdict.sent_checked > 20 and verdict.sent_missing == 0


def test_the_sent_mail_as_a_players_mailbox_holds_it_verifies(
    game: tuple[Path, Settings],
) -> None:
    """The referee's mail as it reaches a player carries header fields the referee never
    wrote (Received, Return-Path, Delivered-To from the servers; Status, X-Mozilla-Status from
    the client): set aside, the mail verifies; a field of the referee's own added or changed
    still fails (attacker review: every real inbox failed)."""
    import mailbox

    folder, settings = game
    held = mailbox.mbox(str(folder / "sent.mbox"), create=False)
    raws = [held.get_bytes(key) for key in held.iterkeys()]
    held.close()
    trace = (
        b"Return-Path: <referee@nomic.example>\nDelivered-To: bob@example.org\n"
        b"Received: from mx.example.org by imap.example.org\n\twith LMTP; Tue, 1 Dec 2026\n"
        b"X-Mozilla-Status: 0001\n"
    )

    def delivered(raw: bytes) -> bytes:
        head, _, body = raw.partition(b"\n\n")
        return trace + head + b"\nStatus: RO\nContent-Length: 1234\n\n" + body

    at = datetime(2026, 12, 1)
    write_mbox(folder / "inbox.mbox", [(delivered(r), at) for r in raws], "x@y.org")
    verdict = verify(settings, folder / "inbound.mbox", folder / "inbox.mbox")
    assert verdict.ok, verdict.divergence
    assert verdict.sent_checked == len(raws)
    assert any("header fields the referee did not write" in note for note in verdict.notes)

    forged = [delivered(r) for r in raws]
    forged[5] = b"Subject: [Nomic] Proposal 301 rejected\n" + forged[5]
    write_mbox(folder / "forged.mbox", [(r, at) for r in forged], "x@y.org")
    failed = verify(settings, folder / "inbound.mbox", folder / "forged.mbox")
    assert not failed.ok and failed.divergence is not None
    assert "Subject: [Nomic] Proposal 301 rejected" in failed.divergence.published


def _change_game(folder: Path, change: Callable[[sqlite3.Connection], object]) -> None:
    with sqlite3.connect(folder / "live.db") as db:
        change(db)


def _forge_score(db: sqlite3.Connection) -> None:
    (text,) = db.execute("SELECT state FROM games").fetchone()
    state = json.loads(text)
    state["players"][1]["score"] = 50
    db.execute("UPDATE games SET state = ?", (json.dumps(state),))


def _delete_a_notice(db: sqlite3.Connection) -> None:
    (row,) = db.execute("SELECT id FROM outbox WHERE kind != 'answer' ORDER BY id").fetchone()
    db.execute("DELETE FROM outbox WHERE id = ?", (row,))


def _redirect_a_notice(db: sqlite3.Connection) -> None:
    (row,) = db.execute("SELECT id FROM outbox ORDER BY id DESC").fetchone()
    db.execute("UPDATE outbox SET recipient = 'eve@evil.example' WHERE id = ?", (row,))


def _delete_an_inbound_row(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM inbound WHERE id = (SELECT MIN(id) FROM inbound)")


def _refuse_an_applied_mail(db: sqlite3.Connection) -> None:
    db.execute("UPDATE inbound SET status = 'refused' WHERE status = 'processed' AND id = 3")


def _forge_a_deciding_mail(db: sqlite3.Connection) -> None:
    db.execute("UPDATE events SET message_id = '<forged@evil.example>' WHERE seq = 4")


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (_forge_score, "the state the service opens"),
        (_delete_a_notice, "the database's outbox does not hold it"),
        (_redirect_a_notice, "not addressed to"),
        (_forge_a_deciding_mail, "time or mail is not the replay's"),
        (_delete_an_inbound_row, "the database does not record this mail"),
        (_refuse_an_applied_mail, "records this mail otherwise than the replay"),
    ],
    ids=[
        "forged-state-snapshot",
        "deleted-outbox-mail",
        "redirected-outbox-mail",
        "forged-deciding-mail",
        "deleted-inbound-row",
        "changed-inbound-status",
    ],
)
def test_a_changed_game_row_or_outbox_fails_verify(
    game: tuple[Path, Settings], change: Callable[[sqlite3.Connection], None], named: str
) -> None:
    """The state the service would open, and the outbox's rows (each mail the rules make,
    held and delivered to whom it is addressed), are checked against the chain (attacker
    review: a forged score in the snapshot passed and the live game used it; a result notice
    deleted or redirected passed)."""
    folder, settings = game
    _change_game(folder, change)
    verdict = verify(settings, folder / "inbound.mbox", folder / "sent.mbox")
    assert not verdict.ok and verdict.divergence is not None
    assert named in verdict.divergence.what


def test_outbox_mail_not_sent_is_noted(game: tuple[Path, Settings]) -> None:
    folder, settings = game
    _change_game(folder, lambda db: db.execute("UPDATE outbox SET status = 'failed' WHERE id = 3"))
    verdict = verify(settings, folder / "inbound.mbox")
    assert verdict.ok, verdict.divergence
    assert any(note.startswith("not sent (yet): 1 failed") for note in verdict.notes)


def test_the_sent_mail_of_another_game_is_named_as_such(
    game: tuple[Path, Settings], tmp_path: Path
) -> None:
    """The config of one game with the sent mail of another fails at once, naming both games
    (new-user review: it failed on a mail "the rules never make")."""
    folder, settings = game
    text = (folder / "sent.mbox").read_bytes().replace(b"<test-nomic.", b"<other-game.")
    (folder / "other.mbox").write_bytes(text)
    verdict = verify(settings, folder / "inbound.mbox", folder / "other.mbox")
    assert not verdict.ok and verdict.divergence is not None
    assert "holds no mail of this game" in verdict.divergence.what
    assert "'other-game'" in verdict.divergence.what
