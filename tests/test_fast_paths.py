"""The short cuts that make replay and verify fast give what the long way gives (213, 107).

A replay proves a result only if it makes the same state, chain and mail as the live service
(213): each short cut taken for speed (issue 19) is held here to the slower code it replaces,
on the same input. The SQL statements run on SQLite's own connection read exactly the rows
SQLAlchemy reads (dates, bytes and IN lists included); the multipart body written directly
is byte for byte the stdlib's MIMEMultipart (107: every reply and notice goes out in it); the
HTML part sanitised and the plain part made a block at a time are the whole made at once,
player text of any kind in them; a template changed on disk is compiled again though compiled
templates are kept.
"""

from __future__ import annotations

import re
import shutil
import time
from collections import OrderedDict, namedtuple
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jinja2
import pytest

from referee.config import Settings
from referee.core.printable import printable, printable_data
from referee.mail.markup import Markup, Parsed, filled, sanitise, to_html, to_plain
from referee.mail.outgoing import alternative, alternative_by_the_stdlib
from referee.mail.render import Renderer, _Environment, templates_folder
from referee.mail.worddiff import Change, Piece, WordDiff
from referee.record import mbox_entry
from referee.service import Referee
from referee.store import store as stored
from referee.store.store import Store, UnitOfWork
from tests.helpers import ADA, BOB, CARLA, DAY, T0
from tests.sender_mail import raw_mail
from tests.test_mail_view import _gallery

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


# ------------------------------------------------------------------ rendering (107, 205)


def _whole_sanitised(parsed: Parsed, values: Sequence[object]) -> str:
    """The long way: the whole fragment filled in, then sanitised by one call of nh3.clean."""
    return sanitise(filled(parsed.html, values))


HOSTILE = [
    "<script>alert(1)</script>",
    "</p></table></ul><pre>",
    "<p><table><tr><td>",
    "a & b &amp; &lt;i&gt; \u00a0 non-breaking",
    "two\r\nlines\rand\nmore",
    "\x00 NUL \x1b ESC \x85 NEL \u202e RLO",
    "<!-- a comment --> <![CDATA[ x ]]>",
    "\"quoted\" 'single' `back`",
    "<a href='javascript:alert(1)'>x</a>",
    "<b><i>misnested</b></i>",
    "",
]

SHAPES = [
    "# zq0qz\n\nzq1qz\n\n| a | zq2qz |\n|---|--:|\n| zq3qz | zq4qz |\n\n- zq5qz\n- **zq6qz**\n",
    "zq0qz\n\n> zq1qz\n>\n> zq2qz\n\n```\nzq3qz\n```\n\n    zq4qz\n\n---\n\nzq5qz\n",
    "1. zq0qz\n\n   zq1qz\n2. `zq2qz` *zq3qz*\n\n## zq4qz\n\nzq5qz  \nzq6qz\n",
    "- a\n  - zq0qz\n    > zq1qz\n\n<p>zq2qz</p>\n\n[zq3qz](https://example.org/zq4qz)\n",
    "zq0qz\nzq1qz\n\n### zq2qz\n\n#### zq3qz\n\n***zq4qz***\n\nzq5qz zq6qz\n",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_html_sanitised_a_block_at_a_time_is_the_whole_sanitised(shape: str) -> None:
    markup = Markup({"Done.": "good"})
    parsed = markup.parse(shape)
    assert len(parsed.blocks) > 1 and "".join(parsed.blocks) == parsed.html
    diff = WordDiff((Piece(Change.DELETED, "<old>"), Piece(Change.INSERTED, "new & \x00")))
    for start in range(len(HOSTILE)):
        values: list[object] = [HOSTILE[(start + at) % len(HOSTILE)] for at in range(7)]
        values[start % 7] = diff
        long_way = (_whole_sanitised(parsed, values), to_plain(parsed, values))
        assert to_html(parsed, values) == long_way[0]
        assert markup.parts(parsed, values) == long_way
        assert markup.parts(parsed, values) == long_way  # kept, the same
    others: list[list[object]] = [["x"], [str(diff)] * 7, [diff] * 7]  # "x": the rest missing
    for values in others:
        assert markup.parts(parsed, values) == (
            _whole_sanitised(parsed, values),
            to_plain(parsed, values),
        )


@pytest.mark.parametrize("language", ["en", "it"])
def test_every_mail_of_a_game_is_made_as_the_long_way_makes_it(
    language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every HTML and plain part the gallery's game renders, in each language, made the short
    way (block by block, cached; HTML by a `Cleaner` made once) is the long way's."""
    blocks: list[int] = []

    kept = Markup.parts

    def parts(self: Markup, parsed: Parsed, values: Sequence[object]) -> tuple[str, str]:
        fast = kept(self, parsed, values)
        assert fast == (_whole_sanitised(parsed, values), to_plain(parsed, values))
        blocks.append(len(parsed.blocks))
        return fast

    monkeypatch.setattr(Markup, "parts", parts)
    _gallery().play(language)
    assert len(blocks) > 50 and max(blocks) > 10


def test_the_multipart_body_is_the_stdlibs_for_every_length() -> None:
    """The HTML part's base64, cut every 76 characters, at each length around a line's 57."""
    boundary = "=_nomic_0123456789abcdef01234567"
    for length in [*range(0, 200), 1_000, 4_321]:
        html = ("<p>ü</p>" * 700)[:length]
        assert alternative("t", html, boundary) == alternative_by_the_stdlib("t", html, boundary)


def test_a_template_changed_on_disk_is_compiled_again(tmp_path: Path) -> None:
    """The compiled templates a process keeps are the source's as it reads now."""
    folder = tmp_path / "templates"
    shutil.copytree(templates_folder(), folder)
    context = {"subject": "", "limit": "1 MB"}
    first = Renderer("en", "UTC", "Nomic", "ref@example.org", folder).render("stranger", context)
    template = folder / "en" / "stranger.md.j2"
    template.write_text(template.read_text() + "\nA line added since.\n")
    again = Renderer("en", "UTC", "Nomic", "ref@example.org", folder).render("stranger", context)
    assert "A line added since." in again.text and "A line added since." not in first.text
    assert again.text.startswith(first.text.rstrip("\n"))


def _printable_the_long_way(value: Any) -> Any:
    """`printable_data` as it was first written: a call for every value in the data."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Mapping):
        return {_printable_the_long_way(k): _printable_the_long_way(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable_the_long_way(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_printable_the_long_way(v) for v in value)
    return value


def _alike(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (a dict's keys included, in order)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return _alike(list(a), list(b)) and _alike(list(a.values()), list(b.values()))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_alike(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_printable_data_is_printable_applied_to_every_string() -> None:
    """A view's data made printable in one loop per dict or list is the value by value way's,
    for controls in keys and values, moments, tuples, named tuples and other mappings."""
    pair = namedtuple("pair", "a b")
    moment = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    texts = ["plain", "NUL\x00", "ESC\x1b[31m", "C1\x85", "\u202e52\u202c", "tab\tand\nline", ""]
    data: dict[Any, Any] = {
        **{text: text for text in texts},
        "numbers": [1, 2.5, True, None, moment, date(2026, 12, 1), *texts],
        "nested": [{"text": t, "at": moment, "list": [t, (t, 1)]} for t in texts],
        "tuple": (texts[1], pair(texts[2], 3), [texts[4]]),
        "ordered": OrderedDict([(texts[1], texts[2])]),
        ("key\x00", 1): {None: texts[3], 7: [OrderedDict(a=texts[1])]},
    }
    for value in (data, [data, texts], texts, texts[1], moment, pair(*texts[:2])):
        assert _alike(printable_data(value), _printable_the_long_way(value))


def _entry_the_long_way(raw: bytes, at: datetime, sender: str) -> bytes:
    body = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    body = re.sub(rb"(?m)^(>*From )", rb">\1", body)
    if not body.endswith(b"\n"):
        body += b"\n"
    stamp = at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)
    return f"From {sender} {time.asctime(stamp.timetuple())}\n".encode() + body + b"\n"


def test_an_mbox_entry_is_the_long_ways() -> None:
    """Line ends made `\\n` (a lone CR too), `From ` lines escaped, the last line ended, and the
    `From ` line dated in UTC whatever offset the same moment is given at."""
    moment = datetime(2026, 12, 1, 9, 0, 5, tzinfo=UTC)
    later = moment.astimezone(timezone(timedelta(hours=2)))
    raws = [b"", b"a", b"a\r\nb\r\n", b"a\rb\r\r\n\n", b"From x\r\n>From y\r\nz", b"x\n\r"]
    for raw in raws:
        for at in (moment, later, moment.replace(tzinfo=None), moment + timedelta(seconds=1)):
            assert mbox_entry(raw, at, "ref@example.org") == _entry_the_long_way(
                raw, at, "ref@example.org"
            )


def test_a_templates_dict_lookup_is_jinjas() -> None:
    """`x.name` on a dict reads its item unless a dict has that attribute, as Jinja reads it."""
    ours, theirs = _Environment(), jinja2.Environment()
    data = {"items": 1, "name": "n", "get": 2, "__class__": 3}
    for attribute in ("items", "name", "get", "__class__", "missing", "keys"):
        mine, jinjas = ours.getattr(data, attribute), theirs.getattr(data, attribute)
        assert type(mine) is type(jinjas)
        if not isinstance(mine, jinja2.Undefined):
            assert mine == jinjas
    template = "{{ d.name }} {{ d.items is callable }} {{ d.missing is defined }}"
    assert ours.from_string(template).render(d=data) == "n True False"
