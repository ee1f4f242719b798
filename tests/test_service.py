"""The service: one reply per mail, duplicates once, strangers and robots (107, 203, 205)."""

from __future__ import annotations

from email import message_from_bytes, policy
from email.message import EmailMessage

from referee.core.model import Phase
from referee.core.rebuild import rebuild
from referee.service import Referee
from tests.helpers import ADA, BOB, CARLA, DAY, T0, mail


def plain(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return " ".join(str(body.get_content()).split())  # wrapped at 72: compare as one line


def sent(referee: Referee, kind: str | None = None) -> list[EmailMessage]:
    rows = referee.store.outbox(referee.game_id)
    out = []
    for row in rows:
        if kind is None or row.kind == kind:
            message = message_from_bytes(row.raw, policy=policy.default)
            assert isinstance(message, EmailMessage)
            out.append(message)
    return out


def test_opening_mail_goes_to_every_player(referee: Referee) -> None:
    opening = sent(referee, "game_started")
    assert sorted(str(m["To"].addresses[0].addr_spec) for m in opening) == sorted([ADA, BOB, CARLA])
    assert all(m["Auto-Submitted"] == "auto-generated" for m in opening)


def test_one_reply_per_mail_with_each_commands_result(referee: Referee) -> None:
    before = len(sent(referee, "reply"))
    raw = mail(
        CARLA,
        "PROPOSE ENACT\nBe kind.\nEND\nVOTE 301 YES\nVOTE 999 NO\nAWARD 5\n",
        at=T0 + DAY,
        message_id="<one@example.org>",
    )
    receipt = referee.receive(raw, T0 + DAY)
    assert receipt.commands == 4 and receipt.refused == 2
    replies = sent(referee, "reply")
    assert len(replies) == before + 1
    reply = replies[-1]
    assert reply["In-Reply-To"] == "<one@example.org>"
    assert "<one@example.org>" in reply["References"]
    assert reply["Auto-Submitted"] == "auto-replied"
    text = plain(reply)
    assert text.count("Done.") == 2 and text.count("Refused.") == 2
    assert "There is no proposal 999" in text and "Only the King" in text
    assert reply.get_body(("html",)) is not None
    circulated = sent(referee, "proposal_circulated")
    assert len(circulated) == 3  # 107: to every player, one message each
    assert all("proposal-301" in str(m["References"]) for m in circulated)


def test_the_same_message_id_applies_once(referee: Referee) -> None:
    raw = mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", at=T0 + DAY, message_id="<dup@example.org>")
    assert referee.receive(raw, T0 + DAY).status == "processed"
    count = len(sent(referee))
    assert referee.receive(raw, T0 + DAY).status == "duplicate"
    assert len(sent(referee)) == count
    assert referee.state.next_proposal_number == 302


def test_a_stranger_gets_one_short_note_a_day(referee: Referee) -> None:
    for hour in (1, 2, 3):
        referee.receive(
            mail("eve@example.net", "VOTE 301 YES", at=T0 + hour * DAY / 24), T0 + hour * DAY / 24
        )
    assert len(sent(referee, "stranger")) == 1
    referee.receive(mail("eve@example.net", "hello", at=T0 + 2 * DAY), T0 + 2 * DAY)
    notes = sent(referee, "stranger")
    assert len(notes) == 2 and "not one of theirs" in plain(notes[-1])


def test_auto_replies_and_bounces_are_never_answered(referee: Referee) -> None:
    def answers() -> int:
        return len(sent(referee, "reply")) + len(sent(referee, "stranger"))

    count = answers()
    robots = [
        mail(BOB, "I am on holiday", headers={"Auto-Submitted": "auto-replied"}),
        mail(BOB, "news", headers={"Precedence": "bulk"}),
        mail("MAILER-DAEMON@example.org", "Delivery failed"),
        mail("referee@nomic.example", "VOTE 301 YES"),
        mail("eve@example.net", "x", headers={"Auto-Submitted": "auto-generated"}),
    ]
    for raw in robots:
        assert referee.receive(raw, T0 + DAY).status == "ignored"
    assert answers() == count


def test_a_mail_without_commands_gets_a_reply_saying_so(referee: Referee) -> None:
    referee.receive(mail(BOB, "Hello everyone, nice game!"), T0 + DAY)
    text = plain(sent(referee, "reply")[-1])
    assert "I found no command" in text


def test_deadlines_fire_before_a_late_mail(referee: Referee) -> None:
    referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    referee.receive(mail(BOB, "VOTE 301 YES"), T0 + 20 * DAY)
    assert referee.state.phase is Phase.AWARD  # the vote closed at its deadline
    text = plain(sent(referee, "reply")[-1])
    assert "not open for votes" in text


def test_the_event_log_rebuilds_the_state(referee: Referee) -> None:
    referee.receive(
        mail(CARLA, "PROPOSE AMEND 209\nReach 20.\nSET winning_score = 20\nEND"), T0 + DAY / 24
    )
    for who in (ADA, BOB, CARLA):
        referee.receive(mail(who, "VOTE 301 YES"), T0 + DAY)
    referee.receive(mail(ADA, "AWARD 10\nSTATUS"), T0 + 9 * DAY)
    referee.receive(mail(BOB, "APPEAL\nIs 20 too few?\nEND"), T0 + 10 * DAY)
    store = referee.store
    rebuilt = rebuild(store.initial(referee.game_id), store.events(referee.game_id))
    assert rebuilt == referee.state
    reopened = Referee(store, referee.game_id, referee.settings)  # snapshot + later events
    assert reopened.state == referee.state
    referee.checkpoint()
    snapshot, seq = store.snapshot(referee.game_id)
    assert snapshot == referee.state and seq == len(store.events(referee.game_id))


def test_message_ids_are_unique_and_stable(referee: Referee, settings: object) -> None:
    referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", message_id="<s@x>"), T0 + DAY)
    ids = [str(m["Message-ID"]) for m in sent(referee)]
    assert len(ids) == len(set(ids))


def test_migrations_build_exactly_the_models_schema(database_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlmodel import SQLModel

    from referee.store.store import Store

    store = Store(database_url)
    try:
        store.create_schema()
        store.create_schema()  # a second upgrade is a no-op
        with store.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, SQLModel.metadata) == []
    finally:
        store.close()
