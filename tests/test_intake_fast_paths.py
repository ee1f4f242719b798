"""The short cuts that make reading a mail fast give what the long way gives (107, 212, 213).

Each shortcut taken for speed in intake (issue 19) is held here to the slower code it stands
for, on the same input, so a replay reads every mail as the live service read it (213): the
header table to the stdlib's `Message.get` and `get_all`, the body's relaxed digest to its
line-by-line form, the ASCII `fold` to the Unicode one, the END and quoted-history prefilters
to the exact line-by-line checks they skip, and the log's Message-ID to its slow cleaning.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from email import message_from_bytes, policy
from email.message import Message

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.desk.logged import shown as _shown
from referee.mail import commands, parse, quotes

NAMES = ["From", "from", "To", "Cc", "CC", "Subject", "Date", "Content-Type", "DKIM-Signature"]
VALUES = [
    "Ada <ada@example.org>",
    "=?utf-8?q?Ad=C3=A0?= <ada@example.org>",
    "VOTE 301 YES",
    "a\n folded\n\tvalue",
    'text/plain; charset="ISO-8859-1"',
    "text/plain; charset*=utf-8''%55TF-8",
    "multipart/mixed; boundary=x",
    "v=1; a=rsa-sha256; d=example.org; b=abcdefghijklmnopqrstuvwxyz0123456789",
    "",
    "   ",
]


def _message(headers: list[tuple[str, bytes]]) -> bytes:
    return b"\r\n".join([*(name.encode() + b": " + value for name, value in headers), b"", b"x"])


def _same(fast: object, slow: object) -> bool:
    """The same header value: a string, or a Header (8-bit bytes) of the same text."""
    return type(fast) is type(slow) and str(fast) == str(slow)


def _slow_text(message: Message, name: str) -> str:
    """A header's decoded text as parse read it before the table: `Message.get` each time."""
    return parse._decoded(message.get(name))


header_value = st.one_of(
    st.sampled_from(VALUES).map(str.encode),  # folded ones too
    st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b"")),
)
header_list = st.lists(st.tuples(st.sampled_from(NAMES), header_value), max_size=8)


@settings(max_examples=300, deadline=None)
@given(header_list)
def test_the_header_table_reads_what_message_get_reads(headers: list[tuple[str, bytes]]) -> None:
    raw = _message(headers)
    message = message_from_bytes(raw, policy=policy.compat32)
    heads = parse.Headers(message)
    for name in {*NAMES, "X-Absent"}:
        assert _same(heads.first(name), message.get(name))
        got, want = heads.every(name), message.get_all(name, [])
        assert len(got) == len(want) and all(map(_same, got, want))
        assert heads.text(name) == _slow_text(message, name)
    charset = parse._charset(message)
    assert charset == message.get_content_charset()


def _slow_relaxed(body: bytes) -> str:
    lines = body.split(b"\n")
    canonical = b"\n".join(re.sub(rb"[ \t]+", b" ", line).rstrip(b" ") for line in lines)
    return hashlib.sha256(canonical.rstrip(b"\n")).hexdigest()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b" ", b"\t", b"\n", b"\r", b"a", b"b c", b"  \t "]), max_size=30))
def test_the_relaxed_digest_of_the_whole_body_is_the_line_by_line_one(pieces: list[bytes]) -> None:
    body = b"".join(pieces)
    assert parse._relaxed_digest(body) == _slow_relaxed(body)


def _slow_fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).upper()


@given(st.text(max_size=20))
def test_fold_of_any_word_is_the_unicode_one(word: str) -> None:
    assert commands.fold(word) == _slow_fold(word)


def test_fold_of_every_ascii_character_is_the_unicode_one() -> None:
    everything = "".join(chr(c) for c in range(128))
    assert commands.fold(everything) == _slow_fold(everything)


LINES = [
    "END",
    "end",
    " > END ",
    ">>FINE",
    "fine\t",
    "\x0bEND",
    "END\x0c",
    "\x1cEND",
    "ÉND",
    "ＥＮＤ",
    "x END",
    "ENDS",
    "PROPOSE ENACT",
    "> PROPOSE ENACT",
    "SAY hi",
    "VOTE 301 YES",
    "",
    "On Mon, Jan 1, 2024 at 10:00 AM Carla <c@example.org> wrote:",
    "> hello",
    "-- ",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=9), st.sampled_from(["\n", "\r\n", "\r"]))
def test_the_end_prefilter_agrees_with_reading_every_line(lines: list[str], end: str) -> None:
    body = end.join(lines)
    for own in (quotes.strip_reply(body), "", lines[0] if lines else "x"):
        assert commands.ends_in_history(body, own) == commands._history_ends(body, own)


HISTORY = [
    "-----Original Message-----",
    "--- Messaggio originale ---",
    "[Original Message processed by david",
    "Begin forwarded message:",
    "Sent from my iPhone",
    "Von meinem iPhone gesendet",
    "________________",
    "From: Carla <carla@example.org>",
    "Sent: Monday, 1 January 2024 10:00",
    "To: all",
    "Da: Ada",
    "A: tutti",
    "差出人: 山田",
    "送信日時: 2024年1月1日 10:00",
    "ſent from my phone",
    "SENT FROM MY",
    "hello",
    "VOTE 301 NO",
    "",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(HISTORY), min_size=1, max_size=8), st.data())
def test_the_history_prefilter_lets_through_every_line_that_starts_history(
    lines: list[str], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(lines) - 1))
    exact = quotes._history_starts_exactly(lines, index)
    assert quotes._other_history_starts(lines, index) == exact


@given(st.text(max_size=300))
def test_the_logged_message_id_is_the_slow_cleaning(message_id: str) -> None:
    cleaned = "".join(c if c.isprintable() else "?" for c in message_id[:200])
    assert _shown(message_id) == cleaned + ("..." if len(message_id) > 200 else "")
