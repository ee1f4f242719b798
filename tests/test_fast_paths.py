"""The short cuts that make replay and verify fast give what the long way gives (213, 107).

A replay proves a result only if it makes the same state, chain and mail as the live service
(213): each short cut taken for speed (issue 19) is held here to the slower code it replaces,
on the same input. The SQL statements run on SQLite's own connection read exactly the rows
SQLAlchemy reads (dates, bytes and IN lists included); the multipart body written directly
is byte for byte the stdlib's MIMEMultipart (107: every reply and notice goes out in it).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from referee.config import Settings
from referee.mail.outgoing import alternative, alternative_by_the_stdlib
from referee.service import Referee
from referee.store import store as stored
from referee.store.store import Store, UnitOfWork
from tests.helpers import ADA, BOB, CARLA, DAY, T0
from tests.sender_mail import raw_mail

TEXTS = [
    ("", ""),
    ("a", ""),
    ("", "<p>b</p>"),
    ("Your vote on 301 is counted.\n", "<p>counted</p>\n"),
    ("CRLF\r\nand CR\rand LF\n", "<p>\r\n</p>\r"),
    ("trailing space \nand tab\t\nend", "ü" * 300),
    ("x" * 300 + "\n" + "=" * 120 + "\n\n\n", "\n\n"),
    ("è à ñ 中文 🙂 =3D =\n.\nFrom me\n", "<b>è</b>"),
    ("\x85 next line\u2028 separator\x0c form feed", "\x0b"),
    ("line with = at the end=\n" * 40, "<pre>" + "long " * 500 + "</pre>"),
]


@pytest.mark.parametrize(("text", "html"), TEXTS)
def test_the_multipart_body_is_the_stdlibs(text: str, html: str) -> None:
    boundary = "=_nomic_0123456789abcdef01234567"
    assert alternative(text, html, boundary) == alternative_by_the_stdlib(text, html, boundary)


def both(work: UnitOfWork, statement: Any, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The rows of `statement` run on SQLite's connection, after checking that SQLAlchemy's
    execution of it reads the very same rows."""
    fast = work._run(statement, params).all()
    assert work._connection is not None
    slow = [tuple(row) for row in work._connection.execute(statement, params).all()]
    assert [tuple(row) for row in fast] == slow
    return [tuple(row) for row in fast]


def played(referee: Referee) -> Referee:
    referee.receive(raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", message_id="<p@x>"), T0)
    referee.receive(raw_mail(BOB, "VOTE 301 YES\nSTATUS", at=T0 + DAY / 24), T0 + DAY / 24)
    referee.receive(raw_mail(ADA, "VOTE 301 NO", at=T0 + DAY / 12), T0 + DAY / 12)
    referee.advance(T0 + 3 * DAY)
    return referee


@pytest.mark.parametrize("batched", [False, True])
def test_the_statements_on_sqlites_connection_read_what_sqlalchemy_reads(
    settings: Settings, batched: bool
) -> None:
    store = Store("sqlite://" if batched else settings.database_url)
    try:
        if batched:
            referee = Referee.create(store, settings, T0)
            with store.batch():
                referee = played(referee)
                with store.unit(referee.game_id) as work:
                    check(work, referee)
        else:
            referee = played(Referee.create(store, settings, T0))
            with store.unit(referee.game_id) as work:
                check(work, referee)
    finally:
        store.close()


def check(work: UnitOfWork, referee: Referee) -> None:
    assert work.driver() is not None  # SQLite: the short cut is taken
    game = referee.game_id
    start = T0.replace(hour=0, minute=0)
    today = both(work, stored._TODAY, {"g": game, "a": BOB, "start": start, "end": start + DAY})
    assert today == [(1, 2, 0)]  # one mail of two commands
    links = both(work, stored._MAIL_LINKS, {"g": game})
    assert len(links) == 3 and links[0][1] == T0  # dates read back, in UTC
    assert isinstance(links[0][0], bytes)
    after = both(work, stored._LINKS_AFTER, {"g": game, "after": T0 + timedelta(minutes=30)})
    assert [kind for kind, _ in after] == ["mail", "mail"]
    outbox = referee.store.outbox(game) if not referee.store.memory else []
    ids = [row.message_id for row in outbox[:3]] or ["<none@x>"]
    both(work, stored._SENT_MAIL, {"g": game, "m": ids})
    keys = [row[0] for row in both(work, stored._PLAYERS_MAIL, {"g": game})]
    assert len(keys) == 3
    seen = both(work, stored._SEEN, {"g": game, "k": [*keys[:2], "nothing"]})
    assert len(seen) == 2
    assert both(work, stored._LAST_SEQ, {"g": game})[0][0] >= 4


def test_a_batch_numbers_events_as_the_log_does_even_with_a_unit_inside_another(
    settings: Settings,
) -> None:
    """A replay's batch keeps the last event's number between units instead of reading it:
    a unit opened inside another, or undone, must still leave the log numbered 1, 2, 3 …"""
    store = Store("sqlite://")
    try:
        referee = Referee.create(store, settings, T0)
        game = referee.game_id
        event = {"kind": "test"}
        with store.batch():
            with store.unit(game) as work:
                start = work.last_seq()
                work.append_event(event, T0, None)
            with store.unit(game) as outer:
                outer.append_event(event, T0, None)
                with store.unit(game) as inner:
                    inner.append_event(event, T0, None)
            with store.unit(game) as work:
                work.append_event(event, T0, None)
                work.save_state(referee.state)
            with pytest.raises(RuntimeError), store.unit(game) as work:
                work.append_event(event, T0, None)
                raise RuntimeError("undone")
            with store.unit(game) as work:
                work.append_event(event, T0, None)
        numbers = [seq for seq, _, _, _ in store.event_log(game)]
        assert numbers == list(range(1, start + 6))
    finally:
        store.close()
