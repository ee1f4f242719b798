"""Fuzzed header and MIME structure: never a crash, one note a day per stranger, replay = live.

Hypothesis writes mail the way clients and attackers might: From headers with encoded words,
groups, two addresses, control characters; Subjects with commands and control characters;
Message-IDs missing, duplicated, non-ASCII or huge; forged Authentication-Results; auto-reply
markers; duplicated headers; multipart trees, HTML-only bodies, base64 and quoted-printable in
several charsets. Each run is fed to a live game and replayed from an mbox (rule 213); both must
reach the same state and decide the same number of mails.
"""

from __future__ import annotations

import base64
import quopri
import tempfile
import uuid
from collections import Counter
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from referee.config import load_settings
from referee.replay import replay
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, T0
from tests.sender_mail import outbox

PEOPLE = [ADA, BOB, CARLA, "eve@evil.example", "mallory@forged.example"]
COMMANDS = [
    "PROPOSE ENACT\nBe kind.\nEND",
    "VOTE 301 YES",
    "VOTE 301 NO",
    "SCORES",
    "APPEAL\nIs this legal?\nEND",
    "QUIT",
    "hello",
    "> VOTE 301 YES",
]

person = st.sampled_from(PEOPLE)
safe_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\r\n"),
    max_size=40,
)


def _q(text: str) -> str:
    encoded = (chr(b) if chr(b).isalnum() and b < 128 else f"={b:02X}" for b in text.encode())
    return "".join(encoded)[:200]


player = st.sampled_from([ADA, BOB, CARLA])
from_header = st.one_of(
    player,
    player,
    player,
    person,
    st.builds(lambda n, a: f"{n} <{a}>", st.sampled_from(["Bob", "Ada Lovelace", "Ünï"]), person),
    st.builds(lambda a, b: f"=?utf-8?q?{_q(a)}?= <{b}>", person, person),
    st.builds(lambda a, b: f"{a}, {b}", person, person),
    st.builds(lambda a: f"Friends: {a};", person),
    safe_text,
)
subject = st.one_of(
    st.sampled_from(
        ["move", "VOTE 301 YES", "Re: Proposal 301", "Automatic reply: x", "QUIT", "SCORES"]
    ),
    safe_text,
    st.builds(lambda n: "S" * n, st.integers(0, 3000)),
)
message_id = st.one_of(
    st.none(),
    st.builds(lambda n: f"<m{n}@example.org>", st.integers(0, 5)),
    st.sampled_from(["<vötè@exämple.org>", "<" + "x" * 4000 + "@example.org>", "garbage"]),
    safe_text,
)
extra = st.lists(
    st.sampled_from(
        [
            ("Auto-Submitted", "auto-replied"),
            ("X-Autoreply", "yes"),
            ("Precedence", "bulk"),
            ("Authentication-Results", "mx.nomic.example; dkim=pass header.d=example.org"),
            ("Subject", "VOTE 301 NO"),
            ("From", BOB),
            ("Message-ID", "<second@example.org>"),
            ("References", "<test-nomic.proposal-301@nomic.example> <ü@x>"),
            ("In-Reply-To", "<test-nomic.proposal-301@nomic.example>"),
            ("Return-Path", "<>"),
        ]
    ),
    max_size=2,
)


def leaf(text: str, kind: str, charset: str, encoding: str) -> bytes:
    data = text.encode(charset, "replace")
    if encoding == "base64":
        payload = base64.encodebytes(data)
    elif encoding == "quoted-printable":
        payload = quopri.encodestring(data)
    else:
        encoding, payload = "8bit", data
    head = f"Content-Type: {kind}; charset={charset}\r\nContent-Transfer-Encoding: {encoding}\r\n"
    return head.encode() + b"\r\n" + payload.replace(b"\n", b"\r\n") + b"\r\n"


@st.composite
def body(draw: st.DrawFn) -> bytes:
    text = "\n".join(draw(st.lists(st.sampled_from(COMMANDS), min_size=0, max_size=4)))
    charset = draw(st.sampled_from(["utf-8", "iso-8859-1", "utf-16", "x-unknown"]))
    charset = "utf-8" if charset == "x-unknown" and draw(st.booleans()) else charset
    encoding = draw(st.sampled_from(["8bit", "base64", "quoted-printable"]))
    shape = draw(st.sampled_from(["plain", "html", "alternative", "nested"]))
    html = "<div>" + text.replace("\n", "<br>") + "</div><blockquote>VOTE 301 YES</blockquote>"
    try:
        if shape == "plain":
            return leaf(text, "text/plain", charset, encoding)
        if shape == "html":
            return leaf(html, "text/html", charset, encoding)
    except LookupError:
        return leaf(text, "text/plain", "utf-8", encoding)
    depth = draw(st.integers(1, 30)) if shape == "nested" else 1
    inner = leaf(text, "text/plain", "utf-8", encoding)
    if shape == "alternative":
        inner = inner + b"--alt\r\n" + leaf(html, "text/html", "utf-8", encoding)
    part = inner
    for level in range(depth):
        boundary = f"b{level}".encode()
        kind = b"multipart/alternative" if shape == "alternative" else b"multipart/mixed"
        part = (
            b"Content-Type: "
            + kind
            + b'; boundary="'
            + boundary
            + b'"\r\n\r\n--'
            + boundary
            + b"\r\n"
            + part
            + b"\r\n--"
            + boundary
            + b"--\r\n"
        )
    return part.replace(b"--alt\r\n", b"--b0\r\n")


@st.composite
def raw_mail(draw: st.DrawFn) -> bytes:
    headers = [("From", draw(from_header)), ("To", "referee@nomic.example")]
    headers.append(("Subject", draw(subject)))
    mid = draw(message_id)
    if mid is not None:
        headers.append(("Message-ID", mid))
    headers += draw(extra)
    head = "".join(f"{name}: {value}\r\n" for name, value in headers).encode("utf-8")
    return head + b"MIME-Version: 1.0\r\n" + draw(body())


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(raw_mail(), min_size=1, max_size=6))
def test_fuzzed_headers_and_mime_never_crash_and_replay_equals_live(mails: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        game_settings = load_settings(write_config(root))
        store = Store(f"sqlite:///{root / uuid.uuid4().hex}.db")
        try:
            live = Referee.create(store, game_settings, T0)
            times = [T0 + timedelta(hours=6 * i + 1) for i in range(len(mails))]
            for raw, at in zip(mails, times, strict=True):
                receipt = live.receive(raw, at)  # never raises
                event(receipt.status)
                assert receipt.status in (
                    "processed",
                    "duplicate",
                    "ignored",
                    "stranger",
                    "refused",
                )
            live.advance(times[-1])
            notes = Counter(
                (str(m["To"].addresses[0].addr_spec), str(m["Date"])[:16])
                for m in outbox(live, "stranger")
            )
            assert all(n == 1 for n in notes.values())  # one note per stranger per day
            mbox = root / "archive.mbox"
            with mbox.open("wb") as archive:
                for raw, at in zip(mails, times, strict=True):
                    stamp = at.strftime("%a %b %d %H:%M:%S %Y").encode()
                    archive.write(b"From referee@nomic.example " + stamp + b"\n")
                    archive.write(raw.replace(b"\nFrom ", b"\n>From ") + b"\n\n")
            replayed = replay(game_settings, mbox, until=times[-1])
            assert replayed.failed == ()
            assert replayed.state == live.state
            assert replayed.sent == live.queued
        finally:
            store.close()
