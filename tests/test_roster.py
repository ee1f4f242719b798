"""Players who come and go by mail: JOIN confirmed, then admitted or refused; ADDRESS (201)."""

from __future__ import annotations

import mailbox
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import load_settings
from referee.core.model import Phase
from referee.core.rebuild import rebuild
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, DAY, T0, mail
from tests.test_cli import cli
from tests.test_service import plain, sent

EVE = "eve@example.net"
BOB_NEW = "bob.rossi@new.example"


@pytest.fixture
def italian(tmp_path: Path) -> Referee:
    settings = load_settings(write_config(tmp_path, "it"))
    return Referee.create(Store(settings.database_url), settings, T0)


def last(referee: Referee, kind: str, to: str | None = None) -> EmailMessage:
    found = [m for m in sent(referee, kind) if to is None or to_of(m) == to]
    assert found, (kind, to)
    return found[-1]


def to_of(message: EmailMessage) -> str:
    return str(message["To"].addresses[0].addr_spec)


def reply_to(referee: Referee, sender: str, body: str, message: EmailMessage, at: datetime) -> None:
    headers = {"In-Reply-To": str(message["Message-ID"]), "References": str(message["Message-ID"])}
    referee.receive(mail(sender, body, subject=f"Re: {message['Subject']}", headers=headers), at)


def join(referee: Referee, words: str, at: datetime, who: str = EVE) -> None:
    """A stranger asks to join and confirms from the address."""
    referee.receive(mail(who, words, subject="Hello"), at)
    assert not [m for m in sent(referee, "stranger") if to_of(m) == who]
    reply_to(referee, who, "yes\n", last(referee, "confirm", who), at + DAY / 24)


def test_a_stranger_joins_with_the_kings_yes_and_plays_from_the_next_round(
    referee: Referee,
) -> None:
    referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    referee.receive(mail(EVE, "JOIN Eve Noether", subject="Hello"), T0 + DAY / 12)
    confirmation = last(referee, "confirm", EVE)
    assert "reply to this mail with just yes" in plain(confirmation)
    assert referee.state.player(EVE) is None and not referee.state.requests  # not yet
    assert not sent(referee, "join_prompt")

    # a reply from someone else in the confirmation's thread confirms nothing
    reply_to(referee, "mallory@example.net", "yes", confirmation, T0 + DAY / 8)
    assert not referee.state.requests

    reply_to(referee, EVE, "Yes!\n\n> quoted", confirmation, T0 + DAY / 6)
    assert "has gone to the King" in plain(last(referee, "reply", EVE))
    prompt = last(referee, "join_prompt", ADA)
    assert "Eve Noether" in plain(prompt) and "round 2" in plain(prompt)

    reply_to(referee, ADA, "yes", prompt, T0 + DAY / 4)
    assert "(read as ADMIT 1 YES)" in plain(last(referee, "reply", ADA))
    eve = referee.state.player(EVE)
    assert eve is not None and eve.active and eve.score == 0 and eve.surname == "Noether"
    welcome = last(referee, "welcome", EVE)
    assert "How to play" in plain(welcome) and "round 2" in plain(welcome)
    announced = sent(referee, "player_joined")
    assert sorted(to_of(m) for m in announced) == [ADA, BOB, CARLA]
    assert "Carla De Santis, Ada Lovelace, Eve Noether, Bob Rossi" in plain(announced[0])

    # 203: proposal 301 was circulated before Eve joined: its vote is among the three
    referee.receive(mail(EVE, "VOTE 301 YES"), T0 + DAY / 3)
    assert "circulated before you joined" in plain(last(referee, "reply", EVE))
    for who in (ADA, BOB, CARLA):
        referee.receive(mail(who, "VOTE 301 YES"), T0 + 8 * DAY)
    assert referee.state.phase is Phase.AWARD  # closed: nobody waited for Eve
    assert "Eve" not in plain(last(referee, "vote_result", CARLA))

    # 201: the round in progress keeps its players; Eve's turn comes in round 2, by surname
    turns = []
    for day in range(9, 60, 10):
        referee.receive(mail(ADA, "AWARD 1"), T0 + day * DAY)
        proposer = referee.state.turn_player
        assert proposer is not None
        turns.append(proposer)
        referee.receive(mail(proposer, "PROPOSE ENACT\nBe brief.\nEND"), T0 + (day + 1) * DAY)
        ballot = f"VOTE {referee.state.current_proposal} YES"
        for who in (ADA, BOB, CARLA, EVE):
            referee.receive(mail(who, ballot), T0 + (day + 8) * DAY)
    assert turns == [ADA, BOB, CARLA, ADA, EVE, BOB]

    store = referee.store
    assert rebuild(store.initial(referee.game_id), store.events(referee.game_id)) == referee.state


def test_the_king_says_no_in_italian(italian: Referee) -> None:
    join(italian, "ENTRO Eva Rossi", T0 + DAY)
    confirmation = last(italian, "confirm", EVE)
    assert "solo con sì" in plain(confirmation)
    assert "passata al Re" in plain(last(italian, "reply", EVE))
    reply_to(italian, ADA, "No.", last(italian, "join_prompt", ADA), T0 + 2 * DAY)
    assert "(letto come AMMETTO 1 NO)" in plain(last(italian, "reply", ADA))
    assert italian.state.player(EVE) is None
    assert "ha risposto no" in plain(last(italian, "join_refused", EVE))
    assert not sent(italian, "player_joined")
    # the request is answered: the King cannot answer it twice, and Eve may ask again
    italian.receive(mail(ADA, "AMMETTO 1 SÌ"), T0 + 3 * DAY)
    assert "Nessuna richiesta 1" in plain(last(italian, "reply", ADA))
    join(italian, "ENTRO Eva Rossi", T0 + 4 * DAY)
    assert italian.state.request(2) is not None


def test_one_pending_request_per_address_and_a_daily_total(referee: Referee) -> None:
    referee.receive(mail(EVE, "JOIN Eve Noether"), T0 + DAY)
    referee.receive(mail(EVE, "JOIN Eve Noether again"), T0 + DAY + DAY / 24)
    assert len(sent(referee, "confirm")) == 1
    assert "already waits" in plain(last(referee, "reply", EVE))
    limit = referee.settings.limits.joins_per_day
    for n in range(limit + 2):
        referee.receive(mail(f"s{n}@example.net", "JOIN Some One"), T0 + DAY + n * DAY / 100)
    assert len(sent(referee, "confirm")) == limit
    assert "at most" in plain(last(referee, "reply", f"s{limit}@example.net"))
    # a player's JOIN is refused: they play already
    referee.receive(mail(BOB, "JOIN Bob Rossi"), T0 + DAY)
    assert "already plays" in plain(last(referee, "reply", BOB))


def test_a_player_moves_to_a_new_address(referee: Referee) -> None:
    referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    referee.receive(mail(BOB, f"VOTE 301 NO\nADDRESS {BOB_NEW}"), T0 + DAY / 12)
    assert f"has gone to {BOB_NEW}" in plain(last(referee, "reply", BOB))
    assert referee.state.player(BOB) is not None  # nothing moves before the confirmation
    confirmation = last(referee, "confirm", BOB_NEW)
    assert "Bob Rossi" in plain(confirmation)
    reply_to(referee, BOB_NEW, "OK", confirmation, T0 + DAY / 6)
    assert referee.state.player(BOB) is None
    moved = referee.state.player(BOB_NEW)
    assert moved is not None and moved.name == "Bob Rossi"
    proposal = referee.state.proposal(301)
    assert proposal is not None and proposal.vote_of(BOB_NEW) is False  # his vote moved with him
    notes = sent(referee, "address_moved")
    recipients = {to_of(m) for m in notes}
    assert recipients == {ADA, CARLA, BOB_NEW, BOB}
    referee.receive(mail(BOB_NEW, "VOTE 301 YES"), T0 + DAY / 3)
    assert "replaces your earlier vote" in plain(last(referee, "reply", BOB_NEW))
    referee.receive(mail(BOB, "VOTE 301 NO"), T0 + DAY / 2)
    assert sent(referee, "stranger")  # the old address is a stranger now
    # an address that is a player's cannot be taken
    referee.receive(mail(ADA, f"ADDRESS {CARLA}"), T0 + DAY)
    assert "already a player's address" in plain(last(referee, "reply", ADA))
    store = referee.store
    assert rebuild(store.initial(referee.game_id), store.events(referee.game_id)) == referee.state


def test_two_moves_in_one_mail_ask_once_and_lose_nothing(referee: Referee) -> None:
    """Two ADDRESS lines in one mail once set the whole mail aside (one confirmation token per
    mail and kind): the vote beside them was lost, unanswered (issue 28, item 5). Now the first
    move is asked, the second refused with a reason, and every other line is done."""
    referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    other = "bob.third@example.org"
    referee.receive(mail(BOB, f"ADDRESS {BOB_NEW}\nVOTE 301 NO\nADDRESS {other}"), T0 + DAY / 12)
    answer = plain(last(referee, "reply", BOB))
    assert f"has gone to {BOB_NEW}" in answer
    assert f"A request for {BOB_NEW} already waits for an answer; one at a time." in answer
    proposal = referee.state.proposal(301)
    assert proposal is not None and proposal.vote_of(BOB) is False
    assert last(referee, "confirm", BOB_NEW) is not None
    assert [m for m in sent(referee, "confirm") if other in to_of(m)] == []


def test_one_mailbox_asks_to_join_once(referee: Referee) -> None:
    """eve+a@ and eve+b@ reach one mailbox: while the first request waits for the King, the
    second is refused, and no confirmation goes to it (attacker review: two seats, one person)."""
    first, second = "eve+a@example.net", "eve+b@example.net"
    join(referee, "JOIN Eve Alpha", T0 + DAY / 12, who=first)
    referee.receive(mail(second, "JOIN Eve Beta", subject="Hello"), T0 + DAY / 6)
    answer = plain(last(referee, "reply", second))
    assert f"A request for {first} already waits for an answer; one at a time." in answer
    assert [m for m in sent(referee, "confirm") if second in to_of(m)] == []
    assert [r.email for r in referee.state.requests] == [first]


def sent_maildir(folder: Path) -> list[EmailMessage]:
    from email import message_from_bytes, policy

    box = mailbox.Maildir(folder / "sent", create=False)
    messages = []
    for key in box.iterkeys():
        message = message_from_bytes(box.get_bytes(key), policy=policy.default)
        assert isinstance(message, EmailMessage)
        messages.append(message)
    return messages


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_operator_adds_moves_and_removes_players(tmp_path: Path, language: str) -> None:
    config = write_config(tmp_path, language)
    assert cli("init", config).returncode == 0
    at = "--now=2026-12-01T12:00:00+00:00"
    added = cli("players", config, "add", "Eve Noether", "Eve@Example.net", at)
    assert added.returncode == 0, added.stderr
    welcome = [m for m in sent_maildir(tmp_path) if to_of(m) == EVE]
    assert len(welcome) == 1
    assert ("Welcome" if language == "en" else "Benvenuto") in str(welcome[0]["Subject"])
    joined = [m for m in sent_maildir(tmp_path) if "Eve Noether" in str(m["Subject"])]
    assert {to_of(m) for m in joined} == {ADA, BOB, CARLA, EVE}
    listing = cli("players", config, "list")
    assert "Eve Noether <eve@example.net> (turns from round 2, votes from proposal 301)" in (
        listing.stdout
    )
    assert "roster: Eve Noether <eve@example.net> plays but is not in the config" in listing.stdout
    status = cli("status", config, at)
    assert "roster: Eve Noether <eve@example.net> plays but is not in the config" in status.stdout
    assert cli("players", config, "add", "Eve Noether", EVE, at).returncode == 1  # plays already
    clone = cli("players", config, "add", "EVE NOETHER", "eve@evil.example", at)
    assert clone.returncode == 1 and "name_taken" in clone.stdout + clone.stderr

    moved = cli("players", config, "address", "Bob", BOB_NEW, at)
    assert moved.returncode == 0, moved.stderr
    removed = cli("players", config, "remove", "carla@example.org", at)
    assert removed.returncode == 0, removed.stderr
    roster = cli("players", config, "list").stdout
    assert f"Bob Rossi <{BOB_NEW}>" in roster
    assert "Carla De Santis <carla@example.org> (left)" in roster
    run = cli("run", config, "--once", at)
    assert run.returncode == 0, run.stderr
    assert "roster: Bob Rossi <bob@example.org> is in the config but not in the game" in run.stderr
    assert "Carla De Santis <carla@example.org> is in the config but left the game" in run.stderr
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        referee = Referee.open(store, settings)
        state = referee.state
        assert rebuild(store.initial(referee.game_id), store.events(referee.game_id)) == state
        assert state.turn_player == ADA  # Carla's turn passed on when she left (114)
    finally:
        store.close()
    assert cli("players", config, "remove", "Zed").returncode == 2


@pytest.mark.parametrize("language", ["en", "it"])
def test_no_move_to_the_games_own_address_nor_to_another_players_mailbox(
    tmp_path: Path, language: str
) -> None:
    """ADDRESS to the game (its address or an alias) would mail the game its own confirmation;
    ADDRESS to bob+nomic@ reaches Bob's mailbox. Both are refused, and nothing is mailed there."""
    config = write_config(tmp_path, language)
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("[game]\n", '[game]\naliases = ["nomic@games.example"]\n', 1),
        encoding="utf-8",
    )
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        local, domain = BOB.split("@")
        at = T0 + DAY / 24
        for n, (who, new, answer) in enumerate(
            [
                (ADA, "referee@nomic.example", "address of the game"),
                (ADA, "Referee+x@NOMIC.example", "address of the game"),
                (CARLA, "nomic@games.example", "address of the game"),
                (ADA, f"{local}+nomic@{domain}", "player's"),
                (CARLA, f"{local.upper()}@{domain}", "player's"),
            ]
        ):
            referee.receive(mail(who, f"ADDRESS {new}"), at + n * DAY / 100)
            said = plain(last(referee, "reply", who))
            words = {
                "address of the game": ("game's own address", "indirizzo del gioco stesso"),
                "player's": ("already a player's address", "già l'indirizzo di un giocatore"),
            }[answer]
            assert words[language == "it"] in said, (new, said)
        assert not sent(referee, "confirm")
        never = {"referee@nomic.example", "referee+x@nomic.example", "nomic@games.example"}
        assert not [
            m for m in sent(referee) if to_of(m).lower() in never | {f"{local}+nomic@{domain}"}
        ]
        # Bob himself may move to his own plus-address: it is his mailbox.
        referee.receive(mail(BOB, f"ADDRESS {local}+nomic@{domain}"), T0 + DAY / 2)
        assert to_of(last(referee, "confirm")) == f"{local}+nomic@{domain}"
    finally:
        store.close()


def test_a_stranger_cannot_join_under_a_players_name(referee: Referee) -> None:
    """201: the name is how the table tells players apart; a look-alike of it is refused."""
    spellings = (
        "JOIN Bob Rossi",
        "JOIN  bob ROSSI.",
        "JOIN B\u00f3b Rossi",  # an accent
        "JOIN \u0412\u043eb R\u043essi",  # a Cyrillic capital Ve and small o
        "JOIN \uff22\uff4f\uff42 Rossi",  # fullwidth letters
    )
    for number, words in enumerate(spellings):
        clone = f"b0b{number}@evil.example"
        at = T0 + number * DAY / 24
        referee.receive(mail(f"Bob Rossi <{clone}>", words, subject="Hello", at=at), at)
        assert not [m for m in sent(referee, "confirm") if to_of(m) == clone], words
        answer = plain(last(referee, "reply", clone))
        assert "A player named Bob Rossi is already playing in this game" in answer, words
        assert "Join under a name of your own" in answer
    assert not referee.state.requests
    assert [p.name for p in referee.state.players].count("Bob Rossi") == 1

    # a name of one's own joins; the King is shown the address and the player it is close to
    join(referee, "JOIN Roberto Rossi", T0 + DAY / 2, who="b0b@evil.example")
    prompt = plain(last(referee, "join_prompt", ADA))
    assert "Roberto Rossi, from the address b0b@evil.example, asks to join" in prompt
    assert f"the name is close to Bob Rossi ({BOB}), who already plays" in prompt
    join(referee, "JOIN Eve Noether", T0 + DAY / 2, who=EVE)
    assert "close to" not in plain(last(referee, "join_prompt", ADA))


def test_two_requests_under_one_name_admit_only_the_first(italian: Referee) -> None:
    join(italian, "ENTRO Eve Noether", T0 + DAY / 24)
    join(italian, "ENTRO Eve Noether", T0 + DAY / 12, who="eve@evil.example")
    prompts = sent(italian, "join_prompt")
    assert len(prompts) == 2
    reply_to(italian, ADA, "sì", prompts[0], T0 + DAY / 6)
    assert italian.state.player(EVE) is not None
    reply_to(italian, ADA, "sì", prompts[1], T0 + DAY / 4)
    assert italian.state.player("eve@evil.example") is None
    refused = plain(last(italian, "reply", ADA))
    assert "In questa partita gioca già qualcuno di nome Eve Noether" in refused
    greek = "ENTRO \u0395ve Noether"  # a Greek capital Epsilon
    italian.receive(mail("Eve Noether <eve2@evil.example>", greek, subject="Ciao"), T0 + DAY / 3)
    assert "gioca già qualcuno di nome Eve Noether" in plain(
        last(italian, "reply", "eve2@evil.example")
    )
