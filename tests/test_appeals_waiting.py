"""Appeals beyond a player's daily limit wait and open at the turn of the UTC day, in the order
they came, so many a day (212; issue 15, item 3). Driven by mail, in both languages: the reply
says when each opens and where it stands, STATUS lists them, midnight opens them, a replay of
the same mail reproduces it, and one the rules no longer allow on its day is not opened."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from referee.config import Settings, load_settings
from referee.replay import replay, write_mbox
from referee.service import Referee
from referee.store.store import Store
from referee.verify import verify
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, DAY, T0, mail
from tests.test_roster import last, to_of
from tests.test_service import plain, sent

MIDNIGHT = datetime(2026, 12, 2, tzinfo=UTC)  # the first turn of a UTC day after T0
HOUR = timedelta(hours=1)


def limited(tmp_path: Path, language: str, per_day: int = 2, may_wait: int = 3) -> Settings:
    settings = load_settings(write_config(tmp_path, language))
    limits = replace(settings.limits, appeals_per_day=per_day, appeals_waiting=may_wait)
    return replace(settings, limits=limits)


def game(settings: Settings) -> Referee:
    return Referee.create(Store(settings.database_url), settings, T0)


def appeals(first: int, count: int, word: str = "APPEAL", end: str = "END") -> str:
    return "\n\n".join(f"{word}\nQuestion {n}: may I?\n{end}" for n in range(first, first + count))


def replies(referee: Referee, to: str) -> list[str]:
    return [plain(m) for m in sent(referee, "reply") if to_of(m) == to]


def test_a_flood_of_appeals_opens_two_a_day_in_order(tmp_path: Path) -> None:
    referee = game(limited(tmp_path, "en", may_wait=4))
    referee.receive(mail(BOB, appeals(0, 3)), T0 + HOUR)
    said = replies(referee, BOB)[-1]
    assert said.count("Done. Your appeal is") == 2
    assert "Waiting. Taken, not opened yet: you have opened 2 appeals or accusations today" in (
        said
    )
    # the time the day turns, in the game's time zone (Rome: an hour past midnight UTC)
    assert "number 1 in your line, and opens at the start of a new day (UTC):" in said
    # the limit is the house's, not rule 212's, and it is said once however many wait
    assert "the most one player may open in a day (a house limit of the referee, not a " in said
    assert "rule 212" not in said and said.count("the most one player may open") == 1
    assert "Wednesday 2 December 2026, 01:00 CET" in said
    assert [a.id for a in referee.state.appeals] == ["A1", "A2"]
    referee.receive(mail(BOB, appeals(3, 3)), T0 + 2 * HOUR)
    said = replies(referee, BOB)[-1]
    assert "number 2 in your line" in said and "Wednesday 2 December 2026, 01:00 CET" in said
    assert said.count("the most one player may open") == 1 and said.count("Waiting.") == 3
    assert "Waiting. Taken, not opened yet, by the same limit: your appeal waits, number 3" in said
    assert "number 3 in your line" in said and "number 4 in your line" in said
    assert "Thursday 3 December 2026, 01:00 CET" in said  # two of his a day
    # STATUS lists his waiting appeals: when sent, when each opens, how each begins
    referee.receive(mail(BOB, "STATUS"), T0 + 3 * HOUR)
    status = replies(referee, BOB)[-1]
    assert (
        "Your appeals waiting for a day of your limit (a house limit of the referee, not a rule "
        "of the game):" in status
    )
    # each waiting appeal is its own item of the list
    assert "of the game): - 1. Appeal sent Tuesday 1 December 2026, 11:00 CET, opens Wed" in status
    assert '"Question 2: may I?" - 2. Appeal sent' in status
    assert '"Question 2: may I?"' in status and '"Question 5: may I?"' in status
    referee.receive(mail(CARLA, "STATUS"), T0 + 3 * HOUR)
    assert "waiting for a day" not in replies(referee, CARLA)[-1]  # his, not hers
    # the line is full: a fifth waiting one is refused, saying when there is room again
    referee.receive(mail(BOB, appeals(6, 1)), T0 + 4 * HOUR)
    said = replies(referee, BOB)[-1]
    assert "Refused. Not taken: you have opened 2 appeals or accusations today" in said
    assert "4 more of yours already wait" in said
    assert "Send it again from Wednesday 2 December 2026, 01:00 CET" in said
    assert len(referee.state.waiting_appeals) == 4

    # the day turns: the first two open, numbered as they open, and the table is told
    referee.advance(MIDNIGHT - timedelta(seconds=1))
    assert len(referee.state.appeals) == 2  # not a second before the day turns
    referee.advance(MIDNIGHT)
    assert [a.question for a in referee.state.appeals][2:] == [
        "Question 2: may I?",
        "Question 3: may I?",
    ]
    assert [a.opened_at for a in referee.state.appeals][2:] == [MIDNIGHT, MIDNIGHT]
    opened = plain(last(referee, "appeal_opened", CARLA))
    assert "Bob Rossi appeals to the King" in opened and "Question 3: may I?" in opened
    assert "Sent Tuesday 1 December 2026, 12:00 CET, it waited for a new day" in opened
    # a new appeal that day waits behind the two still waiting: they came first
    referee.receive(mail(BOB, appeals(7, 1)), MIDNIGHT + 9 * HOUR)
    assert "number 3 in your line" in replies(referee, BOB)[-1]
    assert "Friday 4 December 2026, 01:00 CET" in replies(referee, BOB)[-1]
    referee.advance(MIDNIGHT + 3 * DAY)
    assert [a.question for a in referee.state.appeals][4:] == [
        f"Question {n}: may I?" for n in (4, 5, 7)
    ]
    assert not referee.state.waiting_appeals


@pytest.fixture
def italian(tmp_path: Path) -> Referee:
    return game(limited(tmp_path, "it", per_day=1))


def test_in_italian_the_reply_and_the_table_say_when_it_opens(italian: Referee) -> None:
    referee = italian
    referee.receive(mail(BOB, appeals(0, 2, "APPELLO", "FINE")), T0 + HOUR)
    said = replies(referee, BOB)[-1]
    assert "Fatto. Il tuo appello è A1." in said
    assert "In attesa. Accolto, non ancora aperto: oggi hai già aperto 1 appello o accusa" in said
    assert "Il tuo appello resta in attesa, 1° nella tua fila" in said
    assert "il massimo per un giocatore in un giorno (un limite della casa dell'arbitro" in said
    assert "mercoledì 2 dicembre 2026, 01:00 CET" in said
    referee.receive(mail(BOB, "STATO"), T0 + 2 * HOUR)
    status = replies(referee, BOB)[-1]
    assert (
        "Il tuo appello in attesa di un giorno del tuo limite (un limite della casa "
        "dell'arbitro, non una regola del gioco): - 1. Appello inviato martedì 1 dicembre "
        "2026, 11:00 CET, si apre mercoledì" in status
    )
    referee.receive(mail(CARLA, "STATO"), MIDNIGHT + HOUR)  # the day turned before it
    assert [a.id for a in referee.state.appeals] == ["A1", "A2"]
    opened = plain(last(referee, "appeal_opened", ADA))
    assert "Inviato martedì 1 dicembre 2026, 11:00 CET, ha aspettato un nuovo giorno" in opened


def test_who_leaves_takes_his_waiting_appeals_with_him(italian: Referee) -> None:
    referee = italian
    referee.receive(mail(BOB, appeals(0, 3, "APPELLO", "FINE")), T0 + HOUR)
    assert len(referee.state.waiting_of(BOB)) == 2
    referee.receive(mail(BOB, "ABBANDONO"), T0 + 2 * HOUR)
    assert "I tuoi 2 appelli in attesa non saranno aperti." in replies(referee, BOB)[-1]
    assert not referee.state.waiting_appeals
    referee.advance(MIDNIGHT + HOUR)
    assert len(referee.state.appeals) == 1


def depose_ada(referee: Referee, at: datetime) -> None:
    """Carla's accusation A1, judged by Bob, upheld by a majority; Ada crowns Carla."""
    referee.receive(mail(ADA, "CHAMPION A1 Bob"), at)
    referee.receive(mail(BOB, "RULING A1 UPHELD\nThe replay differs.\nEND"), at + HOUR)
    referee.receive(mail(BOB, "AGREE A1"), at + 2 * HOUR)
    referee.receive(mail(CARLA, "AGREE A1"), at + 2 * HOUR)
    referee.receive(mail(ADA, "CROWN Carla"), at + 3 * HOUR)
    assert referee.state.king == CARLA


@pytest.mark.parametrize(
    ("language", "accuse", "told"),
    [
        ("en", "ACCUSE\n{}\nEND", "Its day has come, but it is not opened: Ada Lovelace no "),
        ("it", "ACCUSO\n{}\nFINE", "Il giorno è arrivato, ma non è aperta: Ada Lovelace non "),
    ],
)
def test_a_waiting_accusation_of_a_king_no_longer_reigning_is_not_opened(
    tmp_path: Path, language: str, accuse: str, told: str
) -> None:
    referee = game(limited(tmp_path, language, per_day=1))
    referee.receive(mail(CARLA, accuse.format("Ada falsified the vote on 301.")), T0 + HOUR)
    referee.receive(mail(CARLA, accuse.format("And the one on 302.")), T0 + HOUR)
    assert len(referee.state.appeals) == 1 and referee.state.waiting_of(CARLA)
    depose_ada(referee, T0 + 2 * HOUR)
    referee.advance(MIDNIGHT)
    assert len(referee.state.appeals) == 1 and not referee.state.waiting_appeals
    dropped = plain(last(referee, "appeal_dropped", CARLA))
    assert told in dropped and "And the one on 302." in dropped
    assert not [m for m in sent(referee, "appeal_dropped") if to_of(m) != CARLA]


def test_replay_and_verify_reproduce_the_waiting_and_the_opening(tmp_path: Path) -> None:
    settings = limited(tmp_path, "en", per_day=1)
    live = game(settings)
    mails = [
        (mail(BOB, appeals(0, 3)), T0 + HOUR),
        (mail(CARLA, appeals(10, 2)), T0 + 2 * HOUR),
        (mail(BOB, "STATUS"), T0 + 3 * HOUR),
        (mail(CARLA, "STATUS"), MIDNIGHT + 8 * HOUR),  # the day has turned by then
    ]
    try:
        for raw, at in mails:
            live.receive(raw, at)
        live_mail = [(row.raw, row.created_at) for row in live.store.outbox(live.game_id)]
    finally:
        live.store.close()
    assert len(live.state.appeals) == 4 and len(live.state.waiting_appeals) == 1
    write_mbox(tmp_path / "inbound.mbox", mails, "player@example.org")
    write_mbox(tmp_path / "live.mbox", live_mail, settings.game.address)
    replayed = replay(
        settings, tmp_path / "inbound.mbox", until=mails[-1][1], out=tmp_path / "out.mbox"
    )
    assert replayed.state == live.state
    assert (tmp_path / "out.mbox").read_bytes() == (tmp_path / "live.mbox").read_bytes()
    # verify: the database's chain, events and outbox, and the mail sent, are what the rules give
    verdict = verify(settings, tmp_path / "inbound.mbox", tmp_path / "live.mbox")
    assert verdict.ok, verdict.divergence
    assert verdict.database_links == verdict.links and verdict.sent_checked == len(live_mail)


def test_the_status_command_lists_open_and_waiting_appeals(tmp_path: Path) -> None:
    """The operator's `nomic-referee status` shows the appeals as the players' STATUS does:
    each open one and whom it waits for, and those waiting for a new day (new-user review)."""
    import subprocess
    import sys

    config = write_config(tmp_path)
    config.write_text(
        config.read_text(encoding="utf-8").replace("appeals_per_day = 1000", "appeals_per_day = 1"),
        encoding="utf-8",
    )
    settings = load_settings(config)
    referee = game(settings)
    try:
        referee.receive(mail(BOB, appeals(0, 2)), T0 + HOUR)
    finally:
        referee.store.close()
    done = subprocess.run(
        [sys.executable, "-m", "referee", "status", str(config), "--now", (T0 + HOUR).isoformat()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "appeals: 1 open, 0 settled, 1 waiting for a new day" in done.stdout
    assert "  A1  appeal by Bob Rossi: waits for the ruling of Ada Lovelace" in done.stdout
    assert (
        "  waiting  appeal by Bob Rossi, sent Tue 01 Dec 2026 11:00 CET, "
        "opens Wed 02 Dec 2026 01:00 CET"
    ) in done.stdout
