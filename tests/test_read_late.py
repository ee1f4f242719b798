"""A mail read after a later event takes effect at that event's time, says so, and replays
(issue 15; rules 112, 203, 213; docs/operations.md, "One clock per run").

A game is played through the live service as cron runs it (Maildir in, `run --once` at the
game's own times). The debate on a proposal closes before the proposer's revision, delivered a
minute earlier, reaches the Maildir; a vote is delivered before another player's vote was
applied but read after it. Each takes effect at the later event's time, and its reply says so,
in the game's time zone and to the second; a mail read on time says nothing of the kind. The
inbound table keeps both times, the hash chain binds them, `export-mail` writes them, and
`replay` and `verify` reproduce every link and every reply byte for byte. The game's times
carry fractions of a second (a file's mtime, a clock), which the export keeps too.
"""

from __future__ import annotations

import json
import mailbox
import os
import subprocess
import sys
from datetime import datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlmodel import Session, select

from referee.config import Settings, load_settings
from referee.core.model import ProposalStatus
from referee.replay import replay
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from referee.store.tables import InboundRow
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, T0, mail
from tests.sink import game_config

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]
FRACTION = timedelta(microseconds=250000)  # a quarter of a second: exact in a float mtime
MINUTE = timedelta(minutes=1)


def drop(settings: Settings, raw: bytes, at: datetime, name: str) -> None:
    """Deliver into the game's Maildir as an MTA would at `at` (the file's mtime)."""
    new = settings.maildir / "new"
    new.mkdir(parents=True, exist_ok=True)
    path = new / f"{name}.mail"
    path.write_bytes(raw)
    os.utime(path, (at.timestamp(), at.timestamp()))


def replies(store: Store, game_id: int, to: str) -> list[str]:
    """The plain text of every reply queued to `to`, in order, on one line each."""
    out = []
    for row in store.outbox(game_id):
        message = message_from_bytes(row.raw, policy=policy.default)
        assert isinstance(message, EmailMessage)
        if row.kind == "reply" and message["To"].addresses[0].addr_spec == to:
            body = message.get_body(("plain",))
            assert body is not None
            out.append(" ".join(str(body.get_content()).split()))
    return out


def inbound(store: Store, message_id: str) -> tuple[datetime, datetime | None]:
    """When the mail with `message_id` took effect and when it was delivered, as stored."""
    with Session(store.engine) as session:
        row = session.exec(select(InboundRow).where(InboundRow.message_id == message_id)).one()
        return row.received_at, row.delivered_at


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True)


def test_mail_read_after_a_later_event_says_so_and_replays_byte_for_byte(tmp_path: Path) -> None:
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        game_id = service.game_id
        proposed = T0 + timedelta(hours=1) + FRACTION
        drop(
            settings, mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", message_id="<p@x>"), proposed, "1"
        )
        service.run_once(proposed)
        ends = service.referee.state.proposals[0].debate_ends
        assert ends == proposed + timedelta(days=7)  # the debate's end: 11:00:00.25 in Rome

        service.run_once(ends + 5 * MINUTE)  # the deadline fires; the Maildir is empty
        assert service.referee.state.proposals[0].status is ProposalStatus.VOTING
        # Delivered a minute before the debate closed, but in the Maildir only after.
        revise = mail(CARLA, "REVISE 301\nBe very kind.\nEND", message_id="<revise@x>")
        drop(settings, revise, ends - MINUTE, "2")
        service.run_once(ends + 10 * MINUTE)

        voted = ends + 20 * MINUTE
        drop(settings, mail(ADA, "VOTE 301 YES", message_id="<ada@x>"), voted, "3")
        service.run_once(voted)
        # Delivered after the debate closed, before Ada's vote was applied, read after it.
        drop(settings, mail(BOB, "VOTE 301 NO", message_id="<bob@x>"), ends + 15 * MINUTE, "4")
        service.run_once(ends + 30 * MINUTE)

        carla, ada, bob = (replies(store, game_id, who)[-1] for who in (CARLA, ADA, BOB))
        assert (
            "Read late. Your mail was delivered on Tuesday 8 December 2026, 10:59:00 CET but "
            "read only after the debate on proposal 301 had closed (Tuesday 8 December 2026, "
            "11:00:00 CET). It took effect on Tuesday 8 December 2026, 11:00:00 CET, as if it "
            "had been delivered then. This is what the referee"  # a new sentence, capitalised
        ) in carla
        assert "Hello Ada Lovelace, this is what the referee" in ada
        assert "> REVISE 301 Refused." in carla  # the debate was over when it took effect
        assert (
            "Read late. Your mail was delivered on Tuesday 8 December 2026, 11:15:00 CET but "
            "read only after another event of the game had been logged (Tuesday 8 December "
            "2026, 11:20:00 CET). It took effect on Tuesday 8 December 2026, 11:20:00 CET"
        ) in bob
        assert "> VOTE 301 NO Done." in bob
        assert "Read late" not in ada and "delivered on" not in ada  # read on time

        assert inbound(store, "<revise@x>") == (ends, ends - MINUTE)
        assert inbound(store, "<bob@x>") == (voted, ends + 15 * MINUTE)
        assert inbound(store, "<ada@x>") == (voted, voted)
        records = [json.loads(link.record) for link in store.chain(game_id)]
        late = [r for r in records if "delivered" in r]
        assert [(r["at"], r["delivered"]) for r in late] == [
            (ends.isoformat(), (ends - MINUTE).isoformat()),
            (voted.isoformat(), (ends + 15 * MINUTE).isoformat()),
        ]
        live = store.chain_head(game_id)
    finally:
        store.close()

    out = tmp_path / "record.mbox"
    done = run("export-mail", config, "--out", out, "--sent")
    assert done.returncode == 0, done.stderr
    box = mailbox.mbox(str(out), create=False)
    lines = [box.get_bytes(key, from_=True).split(b"\n", 1)[0].decode() for key in box.iterkeys()]
    assert lines[0].endswith(f"2026 effective={proposed.isoformat()}")  # the quarter second
    assert lines[1].endswith(
        f"2026 effective={ends.isoformat()} delivered={(ends - MINUTE).isoformat()}"
    )
    assert lines[2].endswith(f" 2026 effective={voted.isoformat()}")  # Ada's, on time
    assert lines[3].endswith(
        f" 2026 effective={voted.isoformat()} delivered={(ends + 15 * MINUTE).isoformat()}"
    )

    again = replay(load_settings(config), out, until=ends + 30 * MINUTE)
    assert (again.link, again.head) == live
    sent = tmp_path / "record.sent.mbox"
    checked = run("verify", config, out, "--sent", sent)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    alone = run("verify", config, out, "--sent", sent, "--no-database")
    assert alone.returncode == 0, alone.stdout + alone.stderr


@pytest.mark.parametrize(
    ("language", "said"),
    [
        (
            "en",
            "Read late. Your mail was delivered on Tuesday 8 December 2026, 10:58:30 CET but "
            "read only after the debate on proposal 301 had closed (Tuesday 8 December 2026, "
            "11:00:00 CET). It took effect on Tuesday 8 December 2026, 11:00:00 CET, as if it "
            "had been delivered then. This is what the referee of",
        ),
        (
            "it",
            "Letta in ritardo. La tua mail è stata consegnata martedì 8 dicembre 2026, 10:58:30 "
            "CET ma letta solo dopo che si era chiuso il dibattito sulla proposta 301 (martedì "
            "8 dicembre 2026, 11:00:00 CET). Ha avuto effetto martedì 8 dicembre 2026, 11:00:00 "
            "CET, come se fosse stata consegnata allora. Ecco che cosa ha fatto l'arbitro",
        ),
    ],
)
def test_a_mail_given_an_earlier_time_than_the_last_event_is_told_when_it_took_effect(
    tmp_path: Path, language: str, said: str
) -> None:
    """`Referee.receive` given a delivery time before the last event (the service's clock
    fired the deadline first): the revision takes effect after the debate closed, and its
    reply says so, even a second late: a vote delivered at 10:59:59 and read after the close
    at 11:00 is what a player disputes (new-user review); under a second says nothing."""
    settings = load_settings(write_config(tmp_path, language))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + timedelta(hours=1))
        ends = referee.state.proposals[0].debate_ends
        assert referee.advance(ends + MINUTE) == 1  # the debate closes; the vote opens
        revise = mail(CARLA, "REVISE 301\nBe very kind.\nEND", message_id="<c@x>")
        referee.receive(revise, ends - 90 * timedelta(seconds=1))
        referee.receive(mail(ADA, "VOTE 301 YES", message_id="<a@x>"), ends - timedelta(seconds=1))
        referee.receive(mail(BOB, "VOTE 301 NO", message_id="<b@x>"), ends - timedelta(seconds=0.5))
        carla = replies(store, referee.game_id, CARLA)[-1]
        ada = replies(store, referee.game_id, ADA)[-1]
        bob = replies(store, referee.game_id, BOB)[-1]
        assert inbound(store, "<c@x>") == (ends, ends - 90 * timedelta(seconds=1))
        assert inbound(store, "<a@x>") == (ends, ends - timedelta(seconds=1))
        assert referee.state.proposals[0].text == "Be kind."  # the revision came too late
    finally:
        store.close()
    assert said in carla
    assert "10:59:59" in ada and ("Read late" in ada or "ritardo" in ada)
    assert "Read late" not in bob and "ritardo" not in bob
