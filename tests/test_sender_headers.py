"""Dedupe that cannot be used against a player, Message-IDs of any kind, and clean headers we write.

Storage tests run on SQLite and PostgreSQL; the live/replay agreement runs the command line as
an operator does (`run --once`, `status --json`, `replay --json`, `replay --out`).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from referee.config import ConfigError, Settings, load_settings
from referee.mail.outgoing import header_value
from referee.mail.parse import parse_message
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import CONFIG, write_config
from tests.helpers import ADA, BOB, CARLA, DAY, T0
from tests.sender_mail import outbox, raw_mail, reply_text
from tests.test_cli import cli

LATER = T0 + DAY / 12


@pytest.fixture
def game_on(settings: Settings, database_url: str) -> Referee:
    """The standard game on SQLite, then on PostgreSQL, with proposal 301 in debate."""
    on = replace(settings, database_url=database_url)
    referee = Referee.create(Store(database_url), on, T0)
    referee.receive(raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    return referee


def bobs_vote(referee: Referee) -> bool | None:
    proposal = referee.state.proposal(301)
    assert proposal is not None
    return proposal.vote_of(BOB)


# ----- dedupe --------------------------------------------------------------------------------


def test_a_message_id_taken_first_by_someone_else_does_not_silence_a_player(
    game_on: Referee,
) -> None:
    try:
        taken = "<bob-will-use-this@example.org>"
        squatter = raw_mail("mallory@evil.example", "hello", message_id=taken)
        assert game_on.receive(squatter, LATER).status == "stranger"
        # With authentication off a forged From is believed, but even then the squatter's
        # different body does not make Bob's own mail a duplicate.
        forged = raw_mail(BOB, "VOTE 301 YES", message_id=taken)
        assert game_on.receive(forged, LATER).status == "processed"
        real = raw_mail(BOB, "VOTE 301 NO", message_id=taken)
        receipt = game_on.receive(real, LATER + DAY / 24)
        assert receipt.status == "processed" and receipt.sent == 1
        assert bobs_vote(game_on) is False
        # The same mail delivered twice is still applied once.
        assert game_on.receive(real, LATER + DAY / 12).status == "duplicate"
    finally:
        game_on.store.close()


@pytest.mark.parametrize(
    "message_id",
    [
        "<" + "x" * 4_000 + "@example.org>",  # past PostgreSQL's btree row limit
        "<" + "é" * 3_000 + "@exämple.org>",
        "no angle brackets at all \x7f",
    ],
)
def test_message_ids_of_any_length_and_bytes_are_stored_and_deduplicated(
    game_on: Referee, message_id: str
) -> None:
    try:
        mail = raw_mail(BOB, "VOTE 301 NO", message_id=message_id)
        assert game_on.receive(mail, LATER).status == "processed"
        assert bobs_vote(game_on) is False
        assert game_on.receive(mail, LATER).status == "duplicate"
        reply = outbox(game_on, "reply")[-1]
        assert reply["In-Reply-To"] is None or len(str(reply["In-Reply-To"])) < 998
    finally:
        game_on.store.close()


def test_the_migration_keeps_the_mail_already_applied(database_url: str, tmp_path: Path) -> None:
    """A database made before 0002: its rows still count as applied after the upgrade."""
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from referee.store.store import MIGRATIONS

    store = Store(database_url)
    try:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with store.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "0001")
            connection.execute(
                sa.text(
                    "INSERT INTO games (name, address, language, created_at, initial_state, "
                    "state, snapshot_seq, events) "
                    "VALUES ('g', 'a@b.cd', 'en', :t, '{}', '{}', 0, 0)"
                ),
                {"t": T0},
            )
            connection.execute(
                sa.text(
                    "INSERT INTO inbound (game_id, message_id, sender, received_at, status, note) "
                    "VALUES (1, '<old@example.org>', :s, :t, 'processed', '')"
                ),
                {"s": BOB, "t": T0},
            )
        store.create_schema()  # 0002
        from referee.store.store import UnitOfWork

        old = parse_message(raw_mail(BOB, "VOTE 301 NO", message_id="<old@example.org>"))
        new = parse_message(raw_mail(BOB, "VOTE 301 NO", message_id="<new@example.org>"))
        with store.unit(1) as work:
            assert isinstance(work, UnitOfWork)
            assert work.seen(old) and not work.seen(new)
            work.record_inbound(new, T0, "processed")
        with store.unit(1) as work:
            assert work.seen(new)
    finally:
        store.close()


# ----- live, replay --json and replay --out agree -------------------------------------------


def hostile_threading() -> list[bytes]:
    return [
        raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", message_id="<plain@example.org>"),
        raw_mail(
            BOB,
            "VOTE 301 NO",
            message_id="<vötè@exämple.org>",
            headers=(("References", "<ü@x.example> <plain@example.org> <日本@例え.jp>"),),
        ),
        raw_mail(
            ADA,
            "VOTE 301 YES",
            message_id="<" + "y" * 5_000 + "@example.org>",
            headers=(("In-Reply-To", "<ñ@example.org>"),),
        ),
    ]


def comparable(stdout: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(stdout)
    data.pop("now", None)
    data.pop("mail", None)
    data.pop("roster", None)  # the config against the game: status's own check
    return data


def test_non_ascii_message_ids_agree_live_and_in_replay(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    settings = load_settings(config)
    new = settings.maildir / "new"
    new.mkdir(parents=True, exist_ok=True)
    at = T0 + DAY / 24
    mbox = tmp_path / "archive.mbox"
    with mbox.open("wb") as archive:
        for index, raw in enumerate(hostile_threading()):
            (new / f"{index}.mail").write_bytes(raw)
            archive.write(
                b"From referee@nomic.example " + at.strftime("%a %b %d %H:%M:%S %Y").encode()
            )
            archive.write(b"\n" + raw.replace(b"\r\n", b"\n") + b"\n")
    done = cli("run", config, "--once", "--now", at.isoformat())
    assert done.returncode == 0, done.stderr
    status = cli("status", config, "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["mail"].get("quarantined", 0) == 0
    live = comparable(status.stdout)
    as_json = cli("replay", config, mbox, "--json")
    sent = tmp_path / "sent.mbox"
    with_out = cli("replay", config, mbox, "--json", "--out", sent)
    assert as_json.returncode == with_out.returncode == 0, as_json.stderr + with_out.stderr
    assert "could not be processed" not in as_json.stderr + with_out.stderr
    assert live == comparable(as_json.stdout) == comparable(with_out.stdout)
    players = {p["email"]: p for p in live["players"]}
    assert set(players) == {ADA, BOB, CARLA}
    replies = [
        m for m in sent.read_bytes().split(b"\nFrom ") if b"Auto-Submitted: auto-replied" in m
    ]
    assert len(replies) == 3  # every mail answered, in replay as live


# ----- headers we write ----------------------------------------------------------------------


def header_block(raw: bytes) -> list[bytes]:
    head = raw.split(b"\r\n\r\n", 1)[0]
    return head.split(b"\r\n")


def assert_clean(raw: bytes) -> None:
    for line in header_block(raw):
        assert len(line) <= 998, len(line)
        assert not re.search(rb"[\x00-\x08\x0a-\x1f\x7f]", line), line[:80]
        assert line.isascii()


@pytest.mark.parametrize(
    "subject",
    [
        "VOTE\x07 301 \x1b[31mYES\x00",
        "Proposal 301\x0bBcc: everyone@example.org",
        "A" * 5_000,
        "word " * 1_600,  # 8,000 characters
        "è" * 8_000,
    ],
)
def test_reply_headers_are_clean_whatever_the_subject(referee: Referee, subject: str) -> None:
    raw = raw_mail(BOB, "SCORES", subject=subject)
    # past [limits] max_header_chars the mail is refused: its reply's headers are clean too
    read = len(subject) <= referee.settings.limits.max_header_chars
    assert referee.receive(raw, LATER).status == ("processed" if read else "refused")
    row = referee.store.outbox(referee.game_id)[-1]
    assert row.kind == "reply"
    assert_clean(row.raw)
    written = str(outbox(referee, "reply")[-1]["Subject"])
    assert not re.search(r"[\x00-\x1f\x7f]", written)
    assert not any(line.lower().startswith(b"bcc") for line in header_block(row.raw))
    assert len(written) <= 410


def test_long_references_are_folded_and_foreign_ones_dropped(referee: Referee) -> None:
    references = " ".join(f"<{'r' * 90}.{i}@example.org>" for i in range(80)) + " <ü@x>"
    raw = raw_mail(BOB, "SCORES", headers=(("References", references),))
    referee.receive(raw, LATER)
    reply = referee.store.outbox(referee.game_id)[-1].raw
    assert_clean(reply)
    assert b"<\xc3\xbc@x>" not in reply


def test_a_stranger_with_a_control_character_in_from_gets_nothing_and_blocks_nothing(
    referee: Referee,
) -> None:
    before = len(referee.store.outbox(referee.game_id))
    raw = raw_mail("eve\x01@evil.example", "VOTE 301 YES")
    assert referee.receive(raw, LATER).status == "refused"
    assert len(referee.store.outbox(referee.game_id)) == before
    referee.receive(raw_mail(BOB, "SCORES"), LATER)
    assert "Bob" in reply_text(referee)


def test_header_value_is_the_one_sanitiser() -> None:
    assert header_value("Re: a\r\nBcc: x@y") == "Re: a Bcc: x@y"
    assert header_value("  many   spaces\t") == "many spaces"
    for text in ("x" * 8_000, "è" * 8_000, "w " * 4_000):
        assert all(len(line) <= 78 for line in header_value(text).split("\n"))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "Bob Rossi\\nBcc: everyone@example.org"),
        ("name", "Bob\\u0007"),
        ("surname", "Rossi\\r"),
    ],
)
def test_a_control_character_in_a_configured_name_is_a_config_error(
    tmp_path: Path, field: str, value: str
) -> None:
    text = CONFIG.format(language="en").replace(
        'name = "Bob Rossi"',
        f'name = "Bob Rossi"\n{field} = "{value}"' if field == "surname" else f'name = "{value}"',
    )
    path = tmp_path / "game.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="control character"):
        load_settings(path)


def test_a_control_character_in_the_game_name_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "game.toml"
    path.write_text(
        CONFIG.format(language="en").replace('name = "Test Nomic"', 'name = "Test\\nNomic"'),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"\[game\] name: contains a control character"):
        load_settings(path)
