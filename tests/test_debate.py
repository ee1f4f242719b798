"""The table's debate through the referee, driven by mail as players write it (rule 112).

Replies are built as neomutt and Thunderbird build them: the player's words on top, then the
client's attribution line and the referee's mail quoted with `>`, In-Reply-To and References
naming the mail answered, a signature under `-- `.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from datetime import datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest

from referee.archive import Keeper
from referee.archive.gitlog import log as gitlog
from referee.config import Settings, load_settings
from referee.core.model import DebateDelivery
from referee.core.rebuild import rebuild
from referee.replay import read_mbox, replay, write_mbox
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, DAY, T0, mail

HOUR = DAY / 24
IDEA = "I think nicknames are silly... could we make it optional?\nOr drop the second line."


def outbox(referee: Referee, kind: str | None = None, to: str | None = None) -> list[EmailMessage]:
    found = []
    for row in referee.store.outbox(referee.game_id):
        if kind is not None and row.kind != kind:
            continue
        message = message_from_bytes(row.raw, policy=policy.default)
        assert isinstance(message, EmailMessage)
        if to is None or message["To"].addresses[0].addr_spec == to:
            found.append(message)
    return found


def text_of(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return str(body.get_content())


def flat(message: EmailMessage) -> str:
    return " ".join(text_of(message).split())


def client_reply(
    original: EmailMessage,
    sender: str,
    words: str,
    at: datetime,
    italian: bool = False,
    headers: dict[str, str] | None = None,
) -> bytes:
    """A reply as neomutt (or, in Italian, Thunderbird) writes it: words, attribution, quote."""
    author = original["From"].addresses[0].display_name
    quoted = "\n".join(("> " + line).rstrip() for line in text_of(original).splitlines())
    when = datetime.fromisoformat(original["Date"].datetime.isoformat())
    if italian:
        attribution = f"Il {when:%d/%m/%y %H:%M}, {author} ha scritto:"
    else:
        attribution = f"On {when:%a, %b %d, %Y at %I:%M:%S%p} +0000, {author} wrote:"
    body = f"{words}\n\n{attribution}\n{quoted}\n\n-- \n{sender.split('@')[0].title()}\n"
    message = EmailMessage()
    message["From"] = sender
    message["To"] = str(original["Reply-To"] or original["From"])
    message["Subject"] = "Re: " + str(original["Subject"]).removeprefix("Re: ")
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<{at:%H%M%S}.{sender.split('@')[0]}.{len(words)}@example.org>"
    message["In-Reply-To"] = str(original["Message-ID"])
    references = str(original.get("References", "")).split()
    message["References"] = " ".join([*references, str(original["Message-ID"])])
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(body)
    return message.as_bytes()


def propose(referee: Referee, italian: bool = False) -> None:
    body = (
        "PROPONGO PROMULGARE\nOgni giocatore ha un soprannome.\nFINE"
        if italian
        else "PROPOSE ENACT\nEvery player has a nickname.\nEND"
    )
    referee.receive(mail(CARLA, body, at=T0 + HOUR), T0 + HOUR)


@pytest.fixture
def italian(tmp_path: Path) -> Settings:
    return load_settings(write_config(tmp_path, "it"))


def test_words_in_reply_to_a_proposal_go_to_every_other_player(referee: Referee) -> None:
    propose(referee)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    at = T0 + 2 * HOUR
    raw = client_reply(circulated, BOB, f"{IDEA}\n\nVOTE 301 YES", at)
    receipt = referee.receive(raw, at)
    assert receipt.refused == 0
    assert referee.state.proposal(301) is not None
    assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]

    relays = outbox(referee, "debate")
    assert sorted(m["To"].addresses[0].addr_spec for m in relays) == [ADA, CARLA]
    relay = relays[0]
    assert relay["From"].addresses[0].display_name == "Bob Rossi via Test Nomic"
    assert relay["From"].addresses[0].addr_spec == "referee@nomic.example"
    assert relay["Reply-To"].addresses[0].addr_spec == "referee@nomic.example"
    root = "<test-nomic.proposal-301@nomic.example>"
    assert relay["In-Reply-To"] == root and root in str(relay["References"])
    assert relay["List-Id"] == "Test Nomic <test-nomic.nomic.example>"
    assert relay["List-Post"] == "<mailto:referee@nomic.example>"
    assert "DEBATE%20NONE" in str(relay["List-Unsubscribe"])
    assert "List-Archive" not in relay  # no site_url in this game
    assert relay["Auto-Submitted"] == "auto-generated" and relay["Precedence"] == "list"
    assert str(relay["Subject"]) == "Re: [Test Nomic] Proposal 301"
    text = text_of(relay)
    assert "I think nicknames are silly... could we make it optional?" in text
    assert "Or drop the second line." in text
    assert "VOTE 301 YES\n" not in text.split("---")[0]  # the command stays with the referee
    words = text.replace("\r\n", "\n").split("\n\n", 1)[1].split("\n\n---")[0]
    assert words.split("\n") == [  # under the frame, above the footer
        "> I think nicknames are silly... could we make it optional?",
        "> Or drop the second line.",
    ]  # quoted as Bob's words: not his mail program's quote, not his signature
    assert not [p for p in relay.iter_attachments()]
    assert "<img" not in str(relay.get_body(("html",)))

    answer = flat(outbox(referee, "reply", BOB)[-1])
    assert "Your vote on proposal 301: YES" in answer
    assert "Your words on proposal 301 went to the table: to 2 players now" in answer

    # Ada answers Bob's words (her copy of them): the debate goes on in the same thread.
    ada_copy = outbox(referee, "debate", ADA)[0]
    later = T0 + 3 * HOUR
    referee.receive(client_reply(ada_copy, ADA, "Optional is fine by me.", later), later)
    second = outbox(referee, "debate")[2:]
    assert sorted(m["To"].addresses[0].addr_spec for m in second) == [BOB, CARLA]
    assert "Optional is fine by me." in text_of(second[0])
    assert second[0]["From"].addresses[0].display_name == "Ada Lovelace via Test Nomic"


def test_the_same_words_twice_and_replies_to_the_referee_are_not_relayed(
    referee: Referee,
) -> None:
    propose(referee)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    referee.receive(client_reply(circulated, BOB, IDEA, T0 + 2 * HOUR), T0 + 2 * HOUR)
    assert len(outbox(referee, "debate")) == 2
    again = client_reply(circulated, BOB, IDEA.upper() + "  ", T0 + 3 * HOUR)
    referee.receive(again, T0 + 3 * HOUR)
    assert len(outbox(referee, "debate")) == 2
    assert "already sent to the table" in flat(outbox(referee, "reply", BOB)[-1])

    # A reply to the referee's answer (even in the proposal's thread) talks to the referee.
    answer = outbox(referee, "reply", BOB)[-1]
    referee.receive(client_reply(answer, BOB, "Thanks, got it!", T0 + 4 * HOUR), T0 + 4 * HOUR)
    assert len(outbox(referee, "debate")) == 2
    assert "I found no command" in flat(outbox(referee, "reply", BOB)[-1])

    # An auto-reply in the thread is neither relayed nor answered.
    replies = len(outbox(referee, "reply"))
    away = client_reply(
        circulated,
        ADA,
        "I am away until Monday.",
        T0 + 5 * HOUR,
        headers={"Auto-Submitted": "auto-replied"},
    )
    assert referee.receive(away, T0 + 5 * HOUR).status == "ignored"
    assert len(outbox(referee, "debate")) == 2 and len(outbox(referee, "reply")) == replies


def test_outside_a_thread_only_say_reaches_the_table(referee: Referee) -> None:
    referee.receive(mail(BOB, "Hello everyone, nice game!", at=T0 + HOUR), T0 + HOUR)
    assert outbox(referee, "debate") == []
    assert "I found no command" in flat(outbox(referee, "reply", BOB)[-1])

    say = "SAY\nShall we meet on Friday to talk about the rules?\nEND\nSTATUS"
    referee.receive(mail(BOB, say, at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    relays = outbox(referee, "debate")
    assert len(relays) == 2
    assert str(relays[0]["Subject"]) == "[Test Nomic] At the table"
    assert "<test-nomic.table@nomic.example>" in str(relays[0]["References"])
    assert "Shall we meet on Friday" in text_of(relays[0])
    assert "went to the table: to 2 players now" in flat(outbox(referee, "reply", BOB)[-1])

    # Carla answers the table's mail: that thread is debate too.
    mine = outbox(referee, "debate", CARLA)[0]
    referee.receive(client_reply(mine, CARLA, "Friday is good.", T0 + 3 * HOUR), T0 + 3 * HOUR)
    assert "Friday is good." in text_of(outbox(referee, "debate", BOB)[-1])

    # "Say, ..." in prose is not the command, so a typo never reaches everybody.
    referee.receive(mail(ADA, "Say, is anyone there?", at=T0 + 4 * HOUR), T0 + 4 * HOUR)
    assert len(outbox(referee, "debate")) == 4


def test_a_player_who_left_is_not_relayed_nor_relayed_to(referee: Referee) -> None:
    propose(referee)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    referee.receive(mail(BOB, "QUIT", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    referee.receive(client_reply(circulated, BOB, IDEA, T0 + 3 * HOUR), T0 + 3 * HOUR)
    assert outbox(referee, "debate") == []
    ada_copy = outbox(referee, "proposal_circulated", ADA)[0]
    referee.receive(client_reply(ada_copy, ADA, "Fewer of us now.", T0 + 4 * HOUR), T0 + 4 * HOUR)
    assert [m["To"].addresses[0].addr_spec for m in outbox(referee, "debate")] == [CARLA]


def test_digest_and_none_are_chosen_by_mail_and_remembered(referee: Referee) -> None:
    propose(referee)
    referee.receive(mail(ADA, "DEBATE DIGEST", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    referee.receive(mail(CARLA, "DEBATE NONE", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    assert "once a day" in flat(outbox(referee, "reply", ADA)[-1]) or "one mail a day" in flat(
        outbox(referee, "reply", ADA)[-1]
    )
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    referee.receive(client_reply(circulated, BOB, IDEA, T0 + 3 * HOUR), T0 + 3 * HOUR)
    referee.receive(
        client_reply(circulated, BOB, "And one more thing.", T0 + 5 * HOUR), T0 + 5 * HOUR
    )
    assert outbox(referee, "debate") == []  # Ada waits for her digest, Carla wants none
    assert "to 1 in tomorrow's digest" in flat(outbox(referee, "reply", BOB)[-1])

    store = referee.store
    rebuilt = rebuild(store.initial(referee.game_id), store.events(referee.game_id))
    assert rebuilt == referee.state
    assert rebuilt.delivery_of(ADA) is DebateDelivery.DIGEST

    referee.advance(T0 + 3 * HOUR + DAY)
    digests = outbox(referee, "debate_digest")
    assert [m["To"].addresses[0].addr_spec for m in digests] == [ADA]
    text = flat(digests[0])
    assert text.index("could we make it optional?") < text.index("And one more thing.")
    assert digests[0]["List-Id"] == "Test Nomic <test-nomic.nomic.example>"
    referee.advance(T0 + 5 * DAY)
    assert len(outbox(referee, "debate_digest")) == 1  # nothing new, no digest


def test_limits_on_debate(settings: Settings) -> None:
    small = replace(settings, limits=replace(settings.limits, debates_per_day=2, debate_chars=200))
    store = Store(small.database_url)
    try:
        referee = Referee.create(store, small, T0)
        propose(referee)
        circulated = outbox(referee, "proposal_circulated", BOB)[0]
        for hour, words in enumerate(("One.", "Two.", "Three."), start=2):
            referee.receive(
                client_reply(circulated, BOB, words, T0 + hour * HOUR), T0 + hour * HOUR
            )
        assert len(outbox(referee, "debate")) == 4
        last = flat(outbox(referee, "reply", BOB)[-1])
        assert "Not relayed: you have sent 2 messages of debate today" in last
        assert "Wednesday 2 December 2026, 01:00 CET" in last  # midnight UTC, in the game's zone
        long = client_reply(circulated, BOB, "word " * 60, T0 + DAY + HOUR)
        referee.receive(long, T0 + DAY + HOUR)
        assert "the table takes at most 200 at once" in flat(outbox(referee, "reply", BOB)[-1])
        tomorrow = client_reply(circulated, BOB, "Three.", T0 + DAY + 2 * HOUR)
        referee.receive(tomorrow, T0 + DAY + 2 * HOUR)
        assert len(outbox(referee, "debate")) == 6
    finally:
        store.close()


def test_italian_debate_with_thunderbird_quoting(italian: Settings) -> None:
    store = Store(italian.database_url)
    try:
        referee = Referee.create(store, italian, T0)
        propose(referee, italian=True)
        circulated = outbox(referee, "proposal_circulated", BOB)[0]
        words = "Secondo me i soprannomi sono sciocchi: facoltativi?\n\nVOTO 301 NO"
        referee.receive(client_reply(circulated, BOB, words, T0 + 2 * HOUR, True), T0 + 2 * HOUR)
        relays = outbox(referee, "debate")
        assert len(relays) == 2
        relay = relays[0]
        assert relay["From"].addresses[0].display_name == "Bob Rossi via Test Nomic"
        assert str(relay["Subject"]) == "Re: [Test Nomic] Proposta 301"
        text = text_of(relay)
        assert "Secondo me i soprannomi sono sciocchi: facoltativi?" in text
        assert "ha scritto:" not in text and "VOTO 301 NO\n" not in text.split("---")[0]
        answer = flat(outbox(referee, "reply", BOB)[-1])
        assert "Le tue parole sulla proposta 301 sono andate al tavolo: a 2 giocatori" in answer
        referee.receive(
            mail(ADA, "DICO\nCi vediamo venerdì?\nFINE", at=T0 + 3 * HOUR), T0 + 3 * HOUR
        )
        table = outbox(referee, "debate", BOB)[-1]
        assert str(table["Subject"]) == "[Test Nomic] Al tavolo"
        assert "Ci vediamo venerdì?" in text_of(table)
    finally:
        store.close()


def test_replay_reproduces_every_relayed_mail_byte_for_byte(
    referee: Referee, settings: Settings, tmp_path: Path
) -> None:
    first = mail(CARLA, "PROPOSE ENACT\nEvery player has a nickname.\nEND", at=T0 + HOUR)
    referee.receive(first, T0 + HOUR)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    steps = [
        (first, T0 + HOUR),
        (client_reply(circulated, BOB, IDEA + "\n\nVOTE 301 YES", T0 + 2 * HOUR), T0 + 2 * HOUR),
        (mail(ADA, "DEBATE DIGEST", at=T0 + 3 * HOUR), T0 + 3 * HOUR),
        (mail(CARLA, "SAY\nThe table is open.\nEND", at=T0 + 4 * HOUR), T0 + 4 * HOUR),
    ]
    for raw, at in steps[1:]:
        referee.receive(raw, at)
    referee.advance(T0 + 2 * DAY)
    box = tmp_path / "in.mbox"
    write_mbox(box, steps, "players@example.org")
    out = tmp_path / "out.mbox"
    replay(settings, box, until=T0 + 2 * DAY, out=out)

    def same(raw: bytes) -> bytes:
        return raw.replace(b"\r\n", b"\n").rstrip(b"\n")

    replayed = {same(m.raw) for m in read_mbox(out) if b"\nPrecedence: list" in same(m.raw)}
    live = {
        same(row.raw)
        for row in referee.store.outbox(referee.game_id)
        if row.kind in ("debate", "debate_digest")
    }
    assert len(live) == 4  # Bob to Ada and Carla; Carla (SAY) to Bob; Ada's digest
    assert replayed == live


def test_the_archive_and_the_website_keep_each_proposals_debate(
    referee: Referee, tmp_path: Path
) -> None:
    propose(referee)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    referee.receive(client_reply(circulated, BOB, IDEA, T0 + 2 * HOUR), T0 + 2 * HOUR)
    ada_copy = outbox(referee, "debate", ADA)[0]
    answer = "Optional is fine.\n\n<script>alert(1)</script> **really**"
    referee.receive(client_reply(ada_copy, ADA, answer, T0 + 3 * HOUR), T0 + 3 * HOUR)
    referee.receive(mail(CARLA, "SAY\nTea on Friday?\nEND", at=T0 + 4 * HOUR), T0 + 4 * HOUR)

    keeper = Keeper(referee.settings, referee.store, referee.game_id)
    folder = tmp_path / "archive"
    keeper.write_archive(folder)
    debate = tomllib.loads((folder / "proposals/003xx/301-debate.toml").read_text("utf-8"))
    assert debate["proposal"] == 301
    assert [m["author"] for m in debate["messages"]] == ["Bob Rossi", "Ada Lovelace"]
    assert debate["messages"][0]["text"] == IDEA
    assert debate["messages"][0]["message_id"].endswith("@example.org>")
    table = tomllib.loads((folder / "debate/table.toml").read_text("utf-8"))
    assert [m["text"] for m in table["messages"]] == ["Tea on Friday?"]
    subjects = [line for _, _, line in gitlog(folder)]
    assert any(s.startswith("Debate on proposal 301: Ada Lovelace") for s in subjects)
    assert any(s.startswith("At the table: Carla De Santis") for s in subjects)
    again = tmp_path / "again"
    Keeper(referee.settings, referee.store, referee.game_id).write_archive(again)
    assert (again / "proposals/003xx/301-debate.toml").read_bytes() == (
        folder / "proposals/003xx/301-debate.toml"
    ).read_bytes()

    site = tmp_path / "site"
    keeper.write_site(site)
    page = (site / "proposals/301.html").read_text("utf-8")
    assert page.index("could we make it optional?") < page.index("Optional is fine.")
    assert "<script>alert" not in page and "<strong>really</strong>" in page
    assert "Debate on proposal" not in (site / "index.html").read_text("utf-8")


def test_a_sign_off_beside_commands_is_not_debate(referee: Referee) -> None:
    """A reply of commands and a name (no "-- " line, as Outlook on a phone writes it) relays
    nothing; the same name alone in the thread, with no command, would be debate."""
    propose(referee)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    at = T0 + 2 * HOUR
    raw = client_reply(circulated, BOB, "VOTE 301 YES\nSTATUS\n\nBob", at)
    referee.receive(raw, at)
    assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]
    assert outbox(referee, "debate") == []
    assert "went to the table" not in flat(outbox(referee, "reply", BOB)[-1])


def test_a_planted_line_repeated_unquoted_in_a_reply_is_not_obeyed(referee: Referee) -> None:
    """Attacker review: a proposal's text holds QUIT and a vote; another player's reply to his
    copy of the proposal (its own Message-ID, which names the thread) repeats the text without
    `>` marks. The planted lines are the referee's own words, never the player's commands."""
    referee.receive(
        mail(CARLA, "PROPOSE ENACT\nPlayers may eat cake.\nQUIT\nVOTE 301 YES\nEND"), T0 + HOUR
    )
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    asked = str(circulated["Message-ID"])
    assert asked.startswith("<test-nomic.proposal-301.")  # a notice's own id, not the root
    words = "I agree with this, quoting it:\nPlayers may eat cake.\nQUIT\nVOTE 301 YES"
    headers = {"In-Reply-To": asked, "References": asked}
    referee.receive(mail(BOB, words, subject="Re: Proposal 301", headers=headers), T0 + 2 * HOUR)
    bob = referee.state.player(BOB)
    assert bob is not None and bob.active
    assert referee.state.proposal(301).vote_of(BOB) is None  # type: ignore[union-attr]
    assert "Not obeyed" in flat(outbox(referee, "reply", BOB)[-1])


def test_a_planted_move_repeated_unquoted_in_a_reply_is_not_obeyed(referee: Referee) -> None:
    """Attacker review: a proposal's text holds `ADDRESS` to the attacker's mailbox; a reply
    repeating the text without `>` marks asked the player's seat to move there, since a request
    confirmed by reply was answered before the check of copied lines. It is the referee's own
    words: not obeyed, and no confirmation goes to the attacker."""
    planted = "PROPOSE ENACT\nPlayers may eat cake.\nADDRESS thief@evil.test\nEND"
    referee.receive(mail(CARLA, planted), T0 + HOUR)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    asked = str(circulated["Message-ID"])
    words = "Fine by me:\nPlayers may eat cake.\nADDRESS thief@evil.test"
    headers = {"In-Reply-To": asked, "References": asked}
    referee.receive(mail(BOB, words, subject="Re: Proposal 301", headers=headers), T0 + 2 * HOUR)
    assert "Not obeyed" in flat(outbox(referee, "reply", BOB)[-1])
    assert [m for m in outbox(referee, "confirm") if "thief@evil.test" in str(m["To"])] == []


def test_a_vote_typed_in_reply_to_a_planted_proposal_is_the_players_own(
    referee: Referee,
) -> None:
    """Attacker review: the proposer plants `VOTE 301 YES` and `VOTE 301 NO` as lines of the
    text. A voter who types his own `VOTE 301 NO` above his mail program's quote, or alone,
    is obeyed; only a line inside an unmarked copy of the text is the referee's own words."""
    planted = "PROPOSE ENACT\nPlayers may eat cake.\nVOTE 301 YES\nVOTE 301 NO\nEND"
    referee.receive(mail(CARLA, planted), T0 + HOUR)
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    typed = "VOTE 301 NO\nI do not like cake rules."
    referee.receive(client_reply(circulated, BOB, typed, T0 + 2 * HOUR), T0 + 2 * HOUR)
    assert referee.state.proposal(301).vote_of(BOB) is False  # type: ignore[union-attr]
    circulated_ada = outbox(referee, "proposal_circulated", ADA)[0]
    referee.receive(client_reply(circulated_ada, ADA, "VOTE 301 YES", T0 + 3 * HOUR), T0 + 3 * HOUR)
    assert referee.state.proposal(301).vote_of(ADA) is True  # type: ignore[union-attr]
