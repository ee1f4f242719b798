"""One command, one meaning, per mail (issue 15, item 5; rules 203, 212).

The player's own text wins over the quoted history, wherever it stands (top- and
bottom-posting), on real reply bodies from public reply-parsing projects (tests/data/replies,
sources and licences in SOURCES.md). Two different answers to one question the referee
cannot tell apart (quoting it does not recognise) are never chosen by their order: both are
refused, and the reply asks again, in both languages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config import load_settings
from referee.core.events import Agree, Vote
from referee.mail.commands import parse_commands
from referee.mail.parse import parse_message
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import BOB, CARLA, DAY, T0, mail
from tests.test_service import plain, sent

REPLIES = Path(__file__).parent / "data" / "replies"
FIXTURES = sorted(p.name for p in REPLIES.glob("*.txt"))


def commands(body: str) -> list[object]:
    found = parse_message(mail(BOB, body, subject="Re: proposal 301"))
    return [p.command for p in parse_commands(BOB, found.subject, found.own_words)]


def test_every_fixture_has_its_source_and_licence() -> None:
    sources = (REPLIES / "SOURCES.md").read_text(encoding="utf-8")
    assert len(FIXTURES) >= 6
    for name in FIXTURES:
        row = next(line for line in sources.splitlines() if line.startswith(f"| {name} |"))
        assert "MIT" in row and "commit" in row, row


@pytest.mark.parametrize("name", FIXTURES)
def test_the_own_text_wins_over_a_vote_planted_in_the_history(name: str) -> None:
    history = (REPLIES / name).read_text(encoding="utf-8")
    marked = history.rstrip("\n").endswith(">") or "\n> " in history.rstrip("\n")[-200:]
    planted = "> VOTE 301 NO" if marked else "VOTE 301 NO"
    body = "VOTE 301 YES\n\n" + history.rstrip("\n") + "\n" + planted + "\n"
    assert commands(body) == [Vote(BOB, 301, True)]


@pytest.mark.parametrize(
    "attribution",
    [
        "On Mon, Jan 1, 2024 at 10:00 AM Carla <carla@example.org> wrote:",
        "On 1 Jan 2024, at 10:00, Carla <carla@example.org> wrote:",  # Apple Mail, iPhone
        "Il giorno lun 1 gen 2024 alle ore 10:00 Carla <carla@example.org> ha scritto:",
        "Il 01/01/2024 10:00, Carla ha scritto:",  # Thunderbird in Italian
        "On Mon, Jan 1, 2024 at 10:00 AM Carla <carla@example.org> wrote",  # no colon
        "Il giorno lun 1 gen 2024 Carla <carla@example.org> ha scritto",  # no colon
    ],
)
def test_bottom_posted_and_unmarked_history_leave_the_own_text(attribution: str) -> None:
    bottom = f"{attribution}\n> VOTE 301 NO\n> Carla's proposal\n\nVOTE 301 YES\n"
    assert commands(bottom) == [Vote(BOB, 301, True)]
    unmarked = f"VOTE 301 YES\n\n{attribution}\n\nVOTE 301 NO\n"
    assert commands(unmarked) == [Vote(BOB, 301, True)]


@pytest.mark.parametrize(
    "block",
    [
        "From: Carla <carla@example.org>\nSent: Monday, January 1, 2024 10:00 AM\n"
        "To: Nomic <referee@nomic.example>\nSubject: proposal 301",  # Outlook desktop and web
        "Da: Carla <carla@example.org>\nInviato: lunedì 1 gennaio 2024 10:00\n"
        "A: Nomic <referee@nomic.example>\nOggetto: proposta 301",
        "---------- Forwarded message ---------\nFrom: Carla <carla@example.org>",
        "-------- Messaggio inoltrato --------\nOggetto: proposta 301",
    ],
)
def test_outlook_and_forwarded_blocks_end_the_own_text(block: str) -> None:
    assert commands(f"VOTE 301 YES\n\n{block}\n\nVOTE 301 NO\n") == [Vote(BOB, 301, True)]


def test_two_answers_in_ones_own_text_are_found() -> None:
    from referee.mail.commands import torn

    found = parse_commands(BOB, "", "VOTE 301 YES\nVOTE 302 NO\nagree A1\nVOTE 301 NO\nAGREE A1")
    assert torn(found) == {0: "VOTE 301 NO", 3: "VOTE 301 YES"}
    assert [p.command for p in found][2:5:2] == [Agree(BOB, "A1", True), Agree(BOB, "A1", True)]
    assert torn(parse_commands(BOB, "", "AGREE A1\nDISAGREE A1")) == {
        0: "DISAGREE A1",
        1: "AGREE A1",
    }


@pytest.mark.parametrize("language", ["en", "it"])
def test_two_votes_the_referee_cannot_tell_apart_are_both_refused(
    tmp_path: Path, language: str
) -> None:
    """Unrecognised quoting ("Carla's note:"): never the later vote, never the first."""
    settings = load_settings(write_config(tmp_path, language))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
        body = "VOTE 301 YES\n\nCarla's note of Monday:\n\nVOTE 301 NO\nThanks!\n"
        referee.receive(mail(BOB, body), T0 + DAY)
        proposal = referee.state.proposal(301)
        assert proposal is not None and proposal.votes == ()
        text = plain(sent(referee, "reply")[-1])
        asked = "Neither is done" if language == "en" else "Nessuna delle due è eseguita"
        assert text.count(asked) == 2, text
        assert "VOTE 301 NO" in text and "VOTE 301 YES" in text
        referee.receive(mail(BOB, "VOTE 301 NO\n\nVOTE 301 NO"), T0 + DAY)  # one meaning
        proposal = referee.state.proposal(301)
        assert proposal is not None and proposal.votes == ((BOB, False),)
    finally:
        store.close()
