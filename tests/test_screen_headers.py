"""Screening, round three (issue 15): a header twice, a verdict no receiving host wrote, and
headers too large to read. Real mail (DKIM with real RSA keys, Authentication-Results as a
receiving server writes them) goes through the parser, the screening chain and the service.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.config import Settings
from referee.service import Referee
from tests.helpers import BOB, CARLA, DAY, T0
from tests.sender_mail import (
    SERVER,
    guarded_game,
    inbound_note,
    make_key,
    outbox,
    raw_mail,
    reply_text,
    sign,
)

LATER = T0 + DAY / 12
OTHER_GAME = "referee@other-game.example"
PASSED = (
    ("Authentication-Results", f"{SERVER}; dkim=pass header.d=example.org"),
    ("Received", f"from mail.example.org by {SERVER} with ESMTPS id 1"),
)


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    return make_key(tmp_path_factory.mktemp("dkim"))


@pytest.fixture
def guarded(settings: Settings, key: tuple[bytes, bytes]) -> Iterator[Referee]:
    store, referee = guarded_game(settings, key[1])
    try:
        proposal = raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", top=PASSED)
        assert referee.receive(proposal, T0 + DAY / 24).status == "processed"
        yield referee
    finally:
        store.close()


def bobs_vote(referee: Referee) -> bool | None:
    proposal = referee.state.proposal(301)
    assert proposal is not None
    return proposal.vote_of(BOB)


def to_other_game(body: str) -> bytes:
    """Bob's mail to another game, as his client wrote it (signed below)."""
    return raw_mail(BOB, body).replace(
        b"To: referee@nomic.example\r\n", f"To: {OTHER_GAME}\r\n".encode()
    )


# ----- 1. a header twice ----------------------------------------------------------------------


@pytest.mark.parametrize("added", ["To", "Cc"])
def test_a_to_prepended_to_a_signed_mail_for_another_game_is_not_obeyed(
    guarded: Referee, key: tuple[bytes, bytes], added: str
) -> None:
    """Bob's signed vote in another game, resent here with a second To (or a Cc twice) put on
    top: the signature still verifies (DKIM reads the bottom To), but the mail is not read."""
    signed = sign(to_other_game("VOTE 301 NO"), key[0])
    if added == "To":
        resent = b"To: referee@nomic.example\r\n" + signed
    else:
        resent = b"Cc: referee@nomic.example\r\nCc: x@example.net\r\n" + signed
    receipt = guarded.receive(resent, LATER)
    assert receipt.status == "refused"
    assert bobs_vote(guarded) is None
    said = reply_text(guarded)
    assert f"header {added} more than once" in said
    assert "move" not in said.split("Re:")[0]  # nothing of the doubled mail is carried back
    # not counted against Bob: his own vote that day still counts
    own = sign(raw_mail(BOB, "VOTE 301 YES"), key[0])
    assert guarded.receive(own, LATER).status == "processed"
    assert bobs_vote(guarded) is True


def test_a_doubled_header_on_mail_not_shown_to_be_the_players_gets_only_the_note(
    guarded: Referee,
) -> None:
    """Unsigned, with To twice: the day's one wordless note, not a reply."""
    forged = b"To: referee@nomic.example\r\n" + to_other_game("VOTE 301 NO")
    for n in range(3):
        copy = forged.replace(b"<sender-", f"<copy{n}-".encode())
        assert guarded.receive(copy, LATER).status == "refused"
    assert bobs_vote(guarded) is None
    assert len(outbox(guarded, "unbelieved")) == 1
    assert not [m for m in outbox(guarded, "reply") if BOB in str(m["To"])]


def test_a_doubled_subject_is_never_quoted_back(guarded: Referee, key: tuple[bytes, bytes]) -> None:
    signed = sign(raw_mail(BOB, "VOTE 301 NO", subject="vote"), key[0])
    resent = b"Subject: Bob resigns, says he\r\n" + signed
    assert guarded.receive(resent, LATER).status == "refused"
    assert bobs_vote(guarded) is None
    assert "resigns" not in str(outbox(guarded, "reply")[-1]["Subject"])
    assert "header Subject more than once" in reply_text(guarded)


def test_a_cc_added_outside_the_signature_does_not_make_a_mail_ours(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    """One Cc naming the game, added on top of Bob's signed mail to another game: the signature
    does not cover Cc, so it is no proof that Bob wrote to this game."""
    signed = sign(to_other_game("VOTE 301 NO"), key[0])
    resent = b"Cc: referee@nomic.example\r\n" + signed
    assert guarded.receive(resent, LATER).status == "refused"
    assert bobs_vote(guarded) is None
    assert "does not sign, so anyone could have added it" in reply_text(guarded)
    # Bob's own mail with the game in a signed Cc acts
    copied = to_other_game("VOTE 301 YES").replace(
        b"Subject:", b"Cc: Nomic <referee@nomic.example>\r\nSubject:"
    )
    own = sign(copied, key[0], headers=(b"from", b"to", b"cc", b"subject", b"date", b"message-id"))
    assert guarded.receive(own, LATER).status == "processed"
    assert bobs_vote(guarded) is True


# ----- 2. only the receiving host's verdict ------------------------------------------------------


@pytest.mark.parametrize("where", ["top", "below"])
def test_a_verdict_no_received_line_shows_the_server_adding_is_not_believed(
    guarded: Referee, where: str
) -> None:
    """The attacker writes the trusted server's name into a verdict of his own; the mail went
    through other hosts only (or the Received lines were stripped): nothing shows the trusted
    server ever held it, so its "pass" is not believed, wherever it stands."""
    forged = ("Authentication-Results", f"{SERVER}; dkim=pass header.d=example.org")
    relayed = ("Received", "from evil.example by relay.evil.example with ESMTP id 9")
    if where == "top":
        mail = raw_mail(BOB, "VOTE 301 NO", top=(forged, relayed))
    else:
        mail = raw_mail(BOB, "VOTE 301 NO", headers=(forged,))
    assert guarded.receive(mail, LATER).status == "refused"
    assert bobs_vote(guarded) is None
    assert f"no Received line shows {SERVER} taking the mail in" in inbound_note(guarded)
    assert len(outbox(guarded, "unbelieved")) == 1  # the day's one wordless note


# ----- 3. headers too long to read -------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Subject", "x" * 36_000),  # one unbroken word
        ("Subject", "VOTE 301 NO " * 3_000),
        ("Subject", "=?utf-8?q?" + "=C3=A8" * 6_000 + "?="),
        ("To", ", ".join(f"p{n}@example.net" for n in range(400)) + ", referee@nomic.example"),
    ],
    ids=["word", "commands", "encoded", "to"],
)
def test_an_over_long_header_gets_a_reply_and_a_log_line(
    guarded: Referee, caplog: pytest.LogCaptureFixture, header: str, value: str
) -> None:
    """The attacker's 36,000-character Subject got no reply and no log line: it is refused
    whole, the reply names the header and its length, and never quotes it back."""
    mail = raw_mail(
        BOB, "VOTE 301 NO", subject=value if header == "Subject" else "vote", top=PASSED
    )
    if header == "To":
        mail = mail.replace(b"To: referee@nomic.example", f"To: {value}".encode())
    with caplog.at_level("WARNING", logger="referee"):
        assert guarded.receive(mail, LATER).status == "refused"
    assert bobs_vote(guarded) is None
    said = reply_text(guarded)
    assert f"Your mail's {header} header is" in said and "over the limit of 4,000" in said
    reply = outbox(guarded, "reply")[-1]
    assert len(str(reply["Subject"])) < 100 and len(reply.as_bytes()) < 20_000
    stopped = "stopped by the header_length check (a header is longer"
    assert any(stopped in r.getMessage() for r in caplog.records)
    assert f"header_too_long: {header}" in inbound_note(guarded)


def test_a_long_subject_a_client_writes_is_still_read(guarded: Referee) -> None:
    subject = "Re: " * 40 + "about proposal 301, and why I vote against it " * 20  # ~1,100
    assert guarded.receive(
        raw_mail(BOB, "VOTE 301 NO", subject=subject, top=PASSED), LATER
    ).status == ("processed")
    assert bobs_vote(guarded) is False
