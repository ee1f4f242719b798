"""Who sent it: each way issue 7 found to pass as another player, reproduced and refused.

Every mail goes through the real parser and the service; DKIM with real RSA keys (dkimpy) and a
DNS stub; Authentication-Results as a receiving server writes them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import dkim
import pytest

from referee.config import ConfigError, Settings, load_settings
from referee.mail.auth import aligned, organisational_domain, warning
from referee.mail.parse import parse_message
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import CONFIG
from tests.helpers import BOB, CARLA, DAY, T0
from tests.sender_mail import (
    SERVER,
    dns_for,
    guarded_game,
    inbound_note,
    make_key,
    outbox,
    raw_mail,
    refusal_text,
    reply_text,
    sign,
    vouched,
)

LATER = T0 + DAY / 12


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    return make_key(tmp_path_factory.mktemp("dkim"))


@pytest.fixture
def guarded(settings: Settings, key: tuple[bytes, bytes]) -> Iterator[Referee]:
    store, referee = guarded_game(settings, key[1])
    try:
        # Carla's proposal 301, vouched for by the server, so there is something to vote on.
        proposal = raw_mail(
            CARLA,
            "PROPOSE ENACT\nBe kind.\nEND",
            top=vouched("dkim=pass header.d=example.org"),
        )
        assert referee.receive(proposal, T0 + DAY / 24).status == "processed"
        yield referee
    finally:
        store.close()


def bobs_vote(referee: Referee) -> bool | None:
    proposal = referee.state.proposal(301)
    assert proposal is not None
    return proposal.vote_of(BOB)


# ----- From is parsed before anything is decoded ---------------------------------------------


def test_an_encoded_display_name_never_becomes_the_sender(referee: Referee) -> None:
    referee.receive(raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    forged = raw_mail(
        "=?utf-8?q?Bob_Rossi_=3Cbob=40example.org=3E=2C?= <mallory@evil.example>",
        "VOTE 301 NO",
        top=vouched("dmarc=pass header.from=evil.example"),
    )
    assert parse_message(forged).sender == "mallory@evil.example"
    receipt = referee.receive(forged, LATER)
    assert receipt.status == "stranger"
    assert bobs_vote(referee) is None
    notes = outbox(referee, "stranger")
    assert [m["To"].addresses[0].addr_spec for m in notes] == ["mallory@evil.example"]


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        ("=?utf-8?q?bob=40example.org?=", "malformed"),  # a display name, no address
        ("bob@example.org, carla@example.org", "2 addresses"),
        ("Bob <bob@example.org> <carla@example.org>", "malformed"),
        ("Players: bob@example.org;", "group"),
        ("Players:;", "group"),
        ("", "0 addresses"),
        ("bob\x01@example.org", "malformed"),
    ],
)
def test_a_from_without_exactly_one_mailbox_is_refused(
    referee: Referee, header: str, problem: str
) -> None:
    referee.receive(raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    before = len(outbox(referee))
    mail = raw_mail(header, "VOTE 301 NO")
    parsed = parse_message(mail)
    assert parsed.sender == "" and problem in parsed.sender_problem
    assert referee.receive(mail, LATER).status == "refused"
    assert bobs_vote(referee) is None
    assert len(outbox(referee)) == before  # no one to answer: nothing is sent to anyone


def test_two_from_headers_are_no_sender(referee: Referee) -> None:
    mail = raw_mail(BOB, "STATUS", headers=(("From", CARLA),))
    assert parse_message(mail).sender_problem == "two From headers"
    assert referee.receive(mail, LATER).status == "refused"


# ----- Authentication-Results: only the receiving server's own, topmost ---------------------


def test_a_forged_pass_below_the_servers_none_is_ignored(guarded: Referee) -> None:
    forged = raw_mail(
        BOB,
        "VOTE 301 NO",
        top=vouched("dkim=none"),
        headers=(("Authentication-Results", f"{SERVER}; dkim=pass header.d=example.org"),),
    )
    assert guarded.receive(forged, LATER).status == "refused"
    assert bobs_vote(guarded) is None
    assert f"{SERVER} reports dkim=none" in refusal_text(guarded)


def test_a_forged_header_below_the_servers_received_is_ignored(guarded: Referee) -> None:
    """A server that added no results of its own: the copy below its Received came with it."""
    forged = raw_mail(
        BOB,
        "VOTE 301 NO",
        top=(("Received", f"from evil.example by {SERVER} with ESMTPS id 1; {T0:%a, %d %b %Y}"),),
        headers=(("Authentication-Results", f"{SERVER}; dkim=pass header.d=example.org"),),
    )
    assert guarded.receive(forged, LATER).status == "refused"
    assert "came with the mail" in refusal_text(guarded)
    genuine = raw_mail(
        BOB,
        "VOTE 301 NO",
        top=(
            ("Authentication-Results", f"{SERVER}; dkim=pass header.d=example.org"),
            ("Received", f"from mail.example.org by {SERVER} with ESMTPS id 2"),
        ),
    )
    assert guarded.receive(genuine, LATER).status == "processed"
    assert bobs_vote(guarded) is False


def test_results_above_the_servers_own_do_not_count(guarded: Referee) -> None:
    forged = raw_mail(
        BOB,
        "VOTE 301 NO",
        top=(
            ("Authentication-Results", "spamfilter.nomic.example; dkim=pass header.d=example.org"),
            *vouched("dkim=fail header.d=example.org"),
        ),
    )
    assert guarded.receive(forged, LATER).status == "refused"


@pytest.mark.parametrize(
    "results",
    [
        "dkim=pass header.d=org",  # a public suffix is no one's organisation
        "dkim=pass header.d=evil.example",
        "dmarc=pass header.from=evil.example",  # DMARC for someone else's domain
        "spf=pass smtp.mailfrom=bob@example.org",  # SPF is about the envelope, not From
    ],
)
def test_results_not_aligned_with_from_are_refused(guarded: Referee, results: str) -> None:
    mail = raw_mail(BOB, "VOTE 301 NO", top=vouched(results))
    assert guarded.receive(mail, LATER).status == "refused"
    assert bobs_vote(guarded) is None


def test_a_wildcard_trusts_each_of_a_providers_servers(
    settings: Settings, key: tuple[bytes, bytes]
) -> None:
    store, referee = guarded_game(settings, key[1], trusted=("*.messagingengine.com",))
    try:
        results = (
            "mx6.messagingengine.com; arc=none (no signatures found); dkim=pass (2048-bit rsa "
            "key sha256) header.d=example.org header.i=@example.org header.s=fm1; "
            "dmarc=pass policy.published-domain-policy=none header.from=example.org"
        )
        mail = raw_mail(
            CARLA,
            "PROPOSE ENACT\nBe kind.\nEND",
            top=(
                ("Authentication-Results", results),
                # the line in which that host took the mail in: a wildcard needs it
                ("Received", "from out1.example.org by mx6.messagingengine.com with ESMTPS"),
            ),
        )
        assert referee.receive(mail, LATER).status == "processed"
    finally:
        store.close()


# ----- DKIM verified here --------------------------------------------------------------------


def test_a_signature_with_a_body_length_is_refused(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    genuine = sign(raw_mail(BOB, "STATUS"), key[0], length=True)
    extended = genuine + b"VOTE 301 NO\r\n"
    assert dkim.verify(extended, dnsfunc=guarded.dns)  # what fooled the referee before
    assert guarded.receive(extended, LATER).status == "refused"
    assert bobs_vote(guarded) is None
    assert "l=" in refusal_text(guarded)


def test_a_subject_prepended_to_a_signed_mail_is_not_read(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    genuine = sign(raw_mail(BOB, "Hello all", subject="hello"), key[0])
    forged = b"Subject: VOTE 301 NO\r\n" + genuine
    assert dkim.verify(forged, dnsfunc=guarded.dns)  # DKIM checks the last Subject only
    receipt = guarded.receive(forged, LATER)
    assert receipt.status == "refused" and bobs_vote(guarded) is None
    assert "whole_headers: duplicate_header" in inbound_note(guarded)
    assert "header Subject more than once" in reply_text(guarded)  # signed: Bob is told why


def test_a_signature_must_cover_from_subject_date_and_message_id(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    thin = sign(raw_mail(BOB, "VOTE 301 NO"), key[0], headers=(b"from", b"subject"))
    assert guarded.receive(thin, LATER).status == "refused"
    assert "does not sign to, date, message-id" in refusal_text(guarded)


def test_a_signature_from_a_public_suffix_is_not_aligned(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    assert not aligned("org", "example.org") and not aligned("co.uk", "example.co.uk")
    assert organisational_domain("mail.example.co.uk") == "example.co.uk"
    suffix = sign(raw_mail(BOB, "VOTE 301 NO"), key[0], domain=b"org")
    assert dkim.verify(suffix, dnsfunc=guarded.dns)
    assert guarded.receive(suffix, LATER).status == "refused"
    assert "d=org not aligned" in refusal_text(guarded)


def test_a_signature_by_a_subdomain_of_the_senders_organisation_passes(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    mail = sign(raw_mail(BOB, "VOTE 301 NO"), key[0], domain=b"mail.example.org")
    assert guarded.receive(mail, LATER).status == "processed"
    assert bobs_vote(guarded) is False


def test_a_signed_mail_from_two_addresses_is_nobodys(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    mail = sign(raw_mail(f"{BOB}, {CARLA}", "VOTE 301 NO"), key[0])
    assert guarded.receive(mail, LATER).status == "refused"
    assert bobs_vote(guarded) is None


# ----- on by default with IMAP, and loud when off --------------------------------------------

IMAP = '\n[imap]\nhost = "127.0.0.1"\n'


def config(folder: Path, extra: str) -> Path:
    path = folder / "game.toml"
    path.write_text(CONFIG.format(language="en") + extra, encoding="utf-8")
    return path


def test_authentication_is_on_by_default_once_imap_is_configured(tmp_path: Path) -> None:
    assert load_settings(config(tmp_path, IMAP)).auth.required
    assert not load_settings(config(tmp_path, "")).auth.required  # a local Maildir: off
    off = load_settings(config(tmp_path, IMAP + "\n[auth]\nrequired = false\n"))
    message = warning(off)
    assert message is not None and "anyone" in message and "[auth] required = false" in message
    trusted = load_settings(
        config(tmp_path, '\n[auth]\ntrusted_authserv_id = ["mx.nomic.example", "*.mx.net"]\n')
    )
    assert trusted.auth.trusted_authserv_id == ("mx.nomic.example", "*.mx.net")
    with pytest.raises(ConfigError, match="not a host name"):
        load_settings(config(tmp_path, '\n[auth]\ntrusted_authserv_id = "mx; dkim=pass"\n'))
    with pytest.raises(ConfigError, match="not both"):
        load_settings(config(tmp_path, "\n[auth]\nrequired = true\nrequire_dkim = true\n"))


def test_the_service_says_loudly_at_start_that_anyone_can_be_anyone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(config(tmp_path, ""))
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        stop = asyncio.Event()
        stop.set()
        with caplog.at_level(logging.WARNING):
            asyncio.run(service.run_forever(stop))
    finally:
        store.close()
    assert any("SENDER AUTHENTICATION IS OFF" in r.getMessage() for r in caplog.records)


def test_the_example_config_and_readme_say_what_authentication_and_limits_do() -> None:
    from dataclasses import fields

    from referee.config import LimitsConfig

    root = Path(__file__).resolve().parents[1]
    example = (root / "deploy" / "config.example.toml").read_text(encoding="utf-8")
    for field in fields(LimitsConfig):
        assert f"{field.name} = {field.default}" in example, field.name
    for key in ("required", "trusted_authserv_id", "verify_dkim"):
        assert f"{key} = " in example, key
    assert "ANYONE CAN ACT AS ANY PLAYER" in example
    readme = (root / "README.md").read_text(encoding="utf-8")
    operations = (root / "docs" / "operations.md").read_text(encoding="utf-8")
    assert "anyone can act as any\nplayer" in readme or "anyone can act as any player" in readme
    for provider in ("mx.google.com", "*.messagingengine.com", "OpenDKIM", "OpenDMARC"):
        assert provider in operations


def test_naming_a_trusted_server_turns_the_check_on(
    tmp_path: Path, key: tuple[bytes, bytes]
) -> None:
    """`trusted_authserv_id` alone (no [imap], no `required`) must enforce, not be ignored."""
    settings = load_settings(config(tmp_path, f'\n[auth]\ntrusted_authserv_id = "{SERVER}"\n'))
    assert settings.auth.required and settings.auth.trusted_authserv_id == (SERVER,)
    assert warning(settings) is None
    written_off = f'\n[auth]\nrequired = false\ntrusted_authserv_id = "{SERVER}"\n'
    assert not load_settings(config(tmp_path, written_off)).auth.required
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        referee = Referee(store, 1, settings, dns=dns_for(key[1], "example.org"))
        good = vouched("dkim=pass header.d=example.org")
        proposal = raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", top=good)
        assert referee.receive(proposal, T0 + DAY / 24).status == "processed"
        assert referee.receive(raw_mail(BOB, "VOTE 301 NO"), LATER).status == "refused"
        failed = vouched("dkim=none; spf=fail; dmarc=fail")
        assert referee.receive(raw_mail(BOB, "VOTE 301 NO", top=failed), LATER).status == (
            "refused"
        )
        assert bobs_vote(referee) is None
        passed = vouched("dmarc=pass header.from=example.org")
        assert referee.receive(raw_mail(BOB, "VOTE 301 NO", top=passed), LATER).status == (
            "processed"
        )
        assert bobs_vote(referee) is False
    finally:
        store.close()


# ----- a signed mail resent is the same mail ----------------------------------------------


def _respaced(raw: bytes, line: bytes, new_line: bytes) -> bytes:
    head, _, body = raw.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n" + body.replace(line, new_line, 1)


def test_a_signed_vote_resent_is_the_same_mail_whatever_its_spaces_or_id(
    guarded: Referee, key: tuple[bytes, bytes]
) -> None:
    """The attacker's replay (black-box review): Bob's old signed `VOTE 301 NO`, taken from a
    record, resent with a run of spaces changed (DKIM's relaxed form still verifies it, so the
    receiving server vouches for it again) or under a new Message-ID the signature does not
    cover, neither flips his later YES nor counts against his day, and gets no reply."""
    private, _record = key
    headers = (b"from", b"subject", b"date", b"to")  # Message-ID left unsigned, as some do
    first = sign(
        raw_mail(BOB, "VOTE 301 NO", message_id="<bob-no@example.org>"), private, headers=headers
    )
    top = vouched("dkim=pass header.d=example.org; dmarc=pass header.from=example.org")
    server = b"".join(f"{n}: {v}\r\n".encode() for n, v in top)
    assert guarded.receive(server + first, LATER).status == "processed"
    yes = sign(raw_mail(BOB, "VOTE 301 YES"), private)
    assert guarded.receive(server + yes, LATER + DAY / 24).status == "processed"
    assert bobs_vote(guarded) is True
    replies = len(outbox(guarded, "reply"))
    respaced = _respaced(first, b"VOTE 301 NO", b"VOTE 301  NO")
    renamed = first.replace(b"<bob-no@example.org>", b"<bob-no-2@evil.example>", 1)
    for copy in (respaced, renamed, respaced.replace(b"NO\r\n", b"NO  \r\n\r\n\r\n", 1)):
        receipt = guarded.receive(server + copy, LATER + DAY / 12)
        assert receipt.status == "duplicate", receipt
    assert bobs_vote(guarded) is True
    assert len(outbox(guarded, "reply")) == replies  # no answer to a copy
