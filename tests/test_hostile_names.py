"""Names and seats an attacker would try (issue 28, items 1-3; rule 201): a name that puts
another address in From or To, and a second seat behind a player's own mailbox."""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import load_settings
from referee.core import engine
from referee.core.events import Enrol
from referee.core.outcomes import MailboxPlaying, Outcome
from referee.mail import outgoing
from referee.mail.render import Rendered
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, DAY, T0, mail
from tests.test_roster import EVE, join, last
from tests.test_service import plain, sent

HOSTILE_NAMES = (
    "Eve Adams <ada@example.org>",
    'Eve "Ada" Adams',
    "Eve Adams, ada@example.org",
    "Eve Adams; Ada Lovelace",
    "Eve\x07Adams Bell",
    "Eve \u202eAdams",  # a right-to-left override
)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_join_refuses_a_name_that_would_end_a_display_name(referee: Referee, name: str) -> None:
    referee.receive(mail(EVE, f"JOIN {name}", subject="Hello"), T0 + DAY / 24)
    assert not sent(referee, "confirm")
    answer = plain(last(referee, "reply", EVE))
    assert "A name cannot hold" in answer and "JOIN Eva Adami" in answer, answer
    assert not referee.state.requests


def test_join_keeps_an_apostrophe_and_a_hyphen(referee: Referee) -> None:
    join(referee, "JOIN Elena D'Amico-Rossi", T0 + DAY / 24)
    prompt = plain(last(referee, "join_prompt", ADA))
    assert "Elena D'Amico-Rossi, from the address eve@example.net, asks to join" in prompt


def test_the_refusal_reads_in_italian(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, "it"))
    italian = Referee.create(Store(settings.database_url), settings, T0)
    italian.receive(mail(EVE, "ENTRO Eva Adami <ada@example.org>", subject="Ciao"), T0)
    answer = plain(last(italian, "reply", EVE))
    assert "Un nome non può contenere < @ >" in answer and "ENTRO Eva Adami" in answer


def test_a_control_character_is_named_by_its_code_point(referee: Referee) -> None:
    referee.receive(mail(EVE, "JOIN Eve\x07Adams Bell", subject="Hello"), T0)
    assert "A name cannot hold U+0007:" in plain(last(referee, "reply", EVE))


def envelope(from_name: str, recipient_name: str) -> outgoing.Envelope:
    return outgoing.Envelope(
        game="Nomic del Re",
        address="referee@nomic.example",
        recipient="carla@example.org",
        recipient_name=recipient_name,
        message_id="<x.1@nomic.example>",
        at=datetime(2026, 12, 1, 9, tzinfo=UTC),
        auto="auto-generated",
        from_name=from_name,
    )


@pytest.mark.parametrize(
    "name",
    [
        *HOSTILE_NAMES,
        "Eve Adams <ada@example.org> via Nomic del Re",
        "Évé Adams <ada@example.org>, bob@example.org",
        "Eve (the King) Adams",
        'Eve \\" <ada@example.org>',
    ],
)
def test_from_and_to_name_one_mailbox_whatever_the_name(name: str) -> None:
    rendered = Rendered(subject="[Nomic del Re] debate", text="words", html="<p>words</p>")
    raw = outgoing.build(rendered, envelope(name, name))
    message = message_from_bytes(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    for header, address in (("From", "referee@nomic.example"), ("To", "carla@example.org")):
        mailboxes = message[header].addresses
        assert [a.addr_spec for a in mailboxes] == [address], (header, str(message[header]))
        assert mailboxes[0].display_name == " ".join(name.replace("\x07", " ").split())


def test_plain_names_are_written_as_before() -> None:
    assert outgoing.address_value("Carla via Nomic", BOB) == f"Carla via Nomic <{BOB}>"
    assert outgoing.address_value("D'Amico", BOB) == f"D'Amico <{BOB}>"
    assert outgoing.address_value("Ada", BOB).endswith(f"Ada <{BOB}>")


def test_one_mailbox_holds_one_seat(referee: Referee) -> None:
    """bob+second@ reaches Bob's mailbox: it cannot join while Bob plays (the rule that
    refuses ADDRESS bob+x@ to another player)."""
    local, domain = BOB.split("@")
    for n, address in enumerate(
        (f"{local}+second@{domain}", f"{local.title()}+Nomic@{domain.upper()}")
    ):
        at = T0 + n * DAY / 24
        referee.receive(mail(address, "JOIN Bruno Second", subject="Hello"), at)
        answer = plain(last(referee, "reply", address.lower()))
        assert "reaches the mailbox of a player who is already in this game" in answer, address
    assert not sent(referee, "confirm") and not referee.state.requests
    # the operator cannot add that seat either
    decision = engine.decide(referee.state, Enrol(f"{local}+x@{domain}", "Bruno Second"), T0)
    outcome = next(e for e in decision.effects if isinstance(e, Outcome))
    assert isinstance(outcome.payload, MailboxPlaying)
