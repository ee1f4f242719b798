"""Forged senders refused under DKIM (auth), the King's bare replies to prompts, oversized mail."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import dkim
import pytest

from referee.config import AuthConfig, GameConfig, Settings
from referee.core.model import Phase
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import ADA, BOB, CARLA, DAY, T0, mail
from tests.sender_mail import refusal_text
from tests.test_service import plain, sent


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """An RSA key pair: the private key in PEM, and the DNS TXT record for its public half."""
    folder = tmp_path_factory.mktemp("dkim")
    private = folder / "key.pem"
    subprocess.run(
        ["openssl", "genrsa", "-out", str(private), "2048"], check=True, capture_output=True
    )
    der = subprocess.run(
        ["openssl", "rsa", "-in", str(private), "-pubout", "-outform", "DER"],
        check=True,
        capture_output=True,
    ).stdout
    record = b"v=DKIM1; k=rsa; p=" + base64.b64encode(der)
    return private.read_bytes(), record


def signed(raw: bytes, private: bytes, domain: bytes = b"example.org") -> bytes:
    signature: bytes = dkim.sign(
        raw,
        b"sel",
        domain,
        private,
        include_headers=[b"from", b"to", b"subject", b"date", b"message-id"],
    )
    return signature + raw


@pytest.fixture
def guarded(settings: Settings, key: tuple[bytes, bytes]) -> Iterator[Referee]:
    """A game that obeys only mail whose DKIM signature aligns with its From domain."""
    _, record = key
    strict = replace(settings, auth=AuthConfig(True, ("mx.nomic.example",)))

    def dns(name: bytes, timeout: int = 5) -> bytes | None:
        return (
            record
            if name in (b"sel._domainkey.example.org.", b"sel._domainkey.evil.org.")
            else None
        )

    store = Store(strict.database_url)
    try:
        Referee.create(store, strict, T0)
        yield Referee.open(store, strict).__class__(store, 1, strict, dns=dns)
    finally:
        store.close()


def test_a_signed_mail_is_obeyed(guarded: Referee, key: tuple[bytes, bytes]) -> None:
    raw = signed(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), key[0])
    assert guarded.receive(raw, T0 + DAY / 24).status == "processed"
    assert guarded.state.current_proposal == 301


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda raw, k: raw, "no DKIM signature"),
        (lambda raw, k: signed(raw, k, b"evil.org"), "not aligned"),
        (lambda raw, k: signed(raw, k).replace(b"Be kind.", b"Be cruel."), "does not verify"),
    ],
)
def test_a_forged_sender_is_refused_and_told_why(
    guarded: Referee, key: tuple[bytes, bytes], make: object, why: str
) -> None:
    raw = make(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), key[0])  # type: ignore[operator]
    receipt = guarded.receive(raw, T0 + DAY / 24)
    assert receipt.status == "refused"
    assert guarded.state.current_proposal is None  # nothing obeyed
    assert why in refusal_text(guarded)  # the operator's record says why
    note = plain(sent(guarded, "unbelieved")[-1])
    assert "Be kind" not in note and "PROPOSE" not in note and why not in note


def test_a_trusted_servers_results_are_believed_and_no_one_elses(guarded: Referee) -> None:
    trusted = mail(
        CARLA,
        "PROPOSE ENACT\nBe kind.\nEND",
        headers={
            "Authentication-Results": "mx.nomic.example; dkim=pass header.d=example.org",
            "Received": "from mail.example.org by mx.nomic.example with ESMTPS id 1",
        },
    )
    assert guarded.receive(trusted, T0 + DAY / 24).status == "processed"
    forged = mail(
        BOB,
        "VOTE 301 YES",
        headers={"Authentication-Results": "mx.evil.example; dkim=pass header.d=example.org"},
    )
    assert guarded.receive(forged, T0 + DAY / 12).status == "refused"


def test_the_kings_bare_reply_to_a_prompt_is_its_answer(referee: Referee) -> None:
    referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    referee.receive(mail(BOB, "VOTE 301 YES"), T0 + DAY / 12)
    referee.advance(T0 + 15 * DAY)
    assert referee.state.phase is Phase.AWARD
    prompt = sent(referee, "award_prompt")[-1]
    assert prompt["To"].addresses[0].addr_spec == ADA
    reply = mail(
        ADA,
        "7\n\nOn Tue, the referee wrote:\n> AWARD P",
        subject=f"Re: {prompt['Subject']}",
        headers={
            "In-Reply-To": str(prompt["Message-ID"]),
            "References": f"{prompt['References']} {prompt['Message-ID']}",
        },
    )
    receipt = referee.receive(reply, T0 + 15 * DAY)
    assert receipt.commands == 1 and receipt.refused == 0
    carla = referee.state.player(CARLA)
    assert carla is not None and carla.score == 7 and referee.state.turn_player == ADA
    # the same bare number from a player who is not King reads as his award, and is refused
    referee.receive(
        mail(BOB, "9", headers={"In-Reply-To": str(prompt["Message-ID"])}), T0 + 15 * DAY
    )
    answer = plain(sent(referee, "reply")[-1])
    assert "(read as AWARD 9)" in " ".join(answer.split()) and "Only the King" in answer


def test_an_oversized_mail_is_refused_not_read(referee: Referee) -> None:
    huge = mail(CARLA, "PROPOSE ENACT\n" + "x" * 6_000_000 + "\nEND")
    receipt = referee.receive(huge, T0 + DAY / 24)
    assert receipt.status == "refused" and referee.state.current_proposal is None
    assert "larger than 5 MB" in plain(sent(referee, "reply")[-1])


def test_game_config_keeps_the_size_limit() -> None:
    assert GameConfig("g", "a@b.cd").max_mail_bytes == 5_000_000
    _ = Path
