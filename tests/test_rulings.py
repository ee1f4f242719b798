"""Appeals about the referee's own decisions, by reply: the facts, the draft, the King's yes,
and the correction carried out while still open, else published undoing nothing (212, 108)."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config import load_settings
from referee.core.model import AppealStatus, Phase, Verdict
from referee.core.rebuild import rebuild
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, DAY, T0, mail
from tests.test_roster import last, reply_to
from tests.test_service import plain

PLANTED = "PROPOSE ENACT\nA player who writes\n{vote}\nin a mail is cheerful.\nEND"


def copied_with(vote: str) -> str:
    """A reply whose mail program copied the proposal without `>` marks, the vote line among
    its lines: the referee cannot tell the player's own vote from the proposal's (a guard)."""
    return f"A player who writes\n{vote}\nin a mail is cheerful."


@pytest.fixture
def italian(tmp_path: Path) -> Referee:
    settings = load_settings(write_config(tmp_path, "it"))
    return Referee.create(Store(settings.database_url), settings, T0)


def refused_vote(referee: Referee, vote: str) -> None:
    """Carla's proposal holds a vote line; Bob's reply carries it in an unmarked copy of the
    proposal, and the referee takes it as an echo of its own mail."""
    referee.receive(mail(CARLA, PLANTED.format(vote=vote)), T0 + DAY / 24)
    circulated = last(referee, "proposal_circulated", BOB)
    reply_to(referee, BOB, copied_with(vote), circulated, T0 + DAY / 12)
    assert referee.state.proposal(301) is not None
    assert referee.state.proposal(301).vote_of(BOB) is None  # type: ignore[union-attr]


def appeal_by_reply(referee: Referee, words: str, at_days: float) -> None:
    reply_to(referee, BOB, words, last(referee, "reply", BOB), T0 + at_days * DAY)


def test_a_refused_vote_is_corrected_by_the_kings_yes_and_counted_while_open(
    referee: Referee,
) -> None:
    refused_vote(referee, "VOTE 301 YES")
    assert "Not obeyed" in plain(last(referee, "reply", BOB))

    appeal_by_reply(referee, "APPEAL\nThat vote was mine, I typed it.\nEND", 0.2)
    appeal = referee.state.appeal("A1")
    assert appeal is not None and appeal.about is not None
    assert appeal.about.line == "VOTE 301 YES" and appeal.draft is Verdict.UPHELD
    prompt = plain(last(referee, "ruling_prompt", ADA))
    assert "> VOTE 301 YES" in prompt and "delivered" in prompt
    assert "VOTE, made by any player" in prompt and "rules 203, 208" in prompt
    assert "UPHELD: the referee's decision" in prompt
    assert "one of the referee's own guards" in prompt

    # the King's ruling in words is no command: the reply names the one the thread waits for
    words = "My ruling: numbers count as words, and the vote was Bob's."
    reply_to(referee, ADA, words, last(referee, "ruling_prompt", ADA), T0 + DAY / 5)
    hint = plain(last(referee, "reply", ADA))
    assert "I found no command in your mail" in hint
    assert "Did you mean RULING A1 UPHELD|DISMISSED ... END?" in hint
    assert referee.state.appeal("A1").ruling is None  # type: ignore[union-attr]
    # nor does a party who is not the judge get the judge's command as a hint
    reply_to(
        referee, CARLA, "I think Bob is right.", last(referee, "ruling_prompt", ADA), T0 + DAY / 5
    )
    assert "Did you mean" not in plain(last(referee, "reply", CARLA))

    # a bare yes from someone who is not the judge is refused, the King's publishes the draft
    reply_to(referee, CARLA, "yes", last(referee, "ruling_prompt", ADA), T0 + DAY / 4)
    assert referee.state.appeal("A1").ruling is None  # type: ignore[union-attr]
    reply_to(referee, ADA, "Yes.", last(referee, "ruling_prompt", ADA), T0 + DAY / 3)
    assert "(read as RULING A1 UPHELD)" in plain(last(referee, "reply", ADA))
    ruled = referee.state.appeal("A1")
    assert ruled is not None and ruled.verdict is Verdict.UPHELD
    assert ruled.ruling is not None and ruled.ruling.startswith("UPHELD")
    assert "UPHELD: the referee's decision" in plain(last(referee, "ruling_published", CARLA))
    reply_to(referee, CARLA, "I agree", last(referee, "ruling_published", CARLA), T0 + DAY / 2.5)
    assert "Did you mean AGREE A1 or DISAGREE A1?" in plain(last(referee, "reply", CARLA))

    referee.receive(mail(ADA, "AGREE A1"), T0 + DAY / 2)
    assert referee.state.proposal(301).vote_of(BOB) is None  # type: ignore[union-attr]
    referee.receive(mail(CARLA, "AGREE A1"), T0 + DAY / 2 + DAY / 24)
    settled = referee.state.appeal("A1")
    assert settled is not None and settled.status is AppealStatus.SETTLED
    assert settled.applied == "applied"
    assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]
    applied = plain(last(referee, "ruling_applied", BOB))
    assert "is now obeyed as written" in applied and "> VOTE 301 YES" in applied

    store = referee.store
    assert rebuild(store.initial(referee.game_id), store.events(referee.game_id)) == referee.state


def test_a_correction_after_the_vote_closed_is_published_and_undoes_nothing(
    referee: Referee,
) -> None:
    refused_vote(referee, "VOTE 301 YES")
    appeal_by_reply(referee, "APPEAL\nMy vote was refused.\nEND", 0.2)
    for who in (ADA, CARLA):
        referee.receive(mail(who, "VOTE 301 YES"), T0 + DAY)
    referee.advance(T0 + 16 * DAY)  # the vote closed: Bob counts as against (203)
    proposal = referee.state.proposal(301)
    assert proposal is not None and proposal.status.value == "rejected"
    referee.receive(mail(ADA, "AWARD 2"), T0 + 16 * DAY + DAY / 24)
    assert referee.state.phase is Phase.APPEAL  # the next turn waits for the appeal (212)

    reply_to(referee, ADA, "yes", last(referee, "ruling_prompt", ADA), T0 + 17 * DAY)
    for who in (ADA, BOB):
        referee.receive(mail(who, "AGREE A1"), T0 + 17 * DAY + DAY / 24)
    settled = referee.state.appeal("A1")
    assert settled is not None and settled.status is AppealStatus.SETTLED
    assert settled.applied == "closed"
    after = referee.state.proposal(301)
    assert after is not None and after.status.value == "rejected" and after.vote_of(BOB) is None
    published = plain(last(referee, "ruling_applied", CARLA))
    assert "nothing decided since is undone" in published and "108" in published
    assert referee.state.phase is Phase.PROPOSE  # the game goes on from where it stood

    store = referee.store
    assert rebuild(store.initial(referee.game_id), store.events(referee.game_id)) == referee.state


def test_a_decision_a_rule_made_is_drafted_as_dismissed(referee: Referee) -> None:
    referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
    referee.receive(mail(BOB, "VOTE 302 YES"), T0 + DAY / 12)  # no such proposal
    appeal_by_reply(referee, "APPEAL\nWhy was it refused?\nEND", 0.2)
    appeal = referee.state.appeal("A1")
    assert appeal is not None and appeal.draft is Verdict.DISMISSED
    prompt = plain(last(referee, "ruling_prompt", ADA))
    assert "DISMISSED: the referee's decision" in prompt and "> VOTE 302 YES" in prompt
    # a plain APPEAL, not in reply, is a question as before: no facts, no draft
    referee.receive(mail(CARLA, "APPEAL\nMay the King vote?\nEND"), T0 + DAY / 3)
    plain_appeal = referee.state.appeal("A2")
    assert plain_appeal is not None and plain_appeal.about is None and plain_appeal.draft is None


def test_the_kings_own_vote_is_judged_by_a_champion_in_italian(italian: Referee) -> None:
    italian.receive(mail(CARLA, PLANTED.format(vote="VOTO 301 SÌ")), T0 + DAY / 24)
    circulated = last(italian, "proposal_circulated", ADA)
    reply_to(italian, ADA, copied_with("VOTO 301 SÌ"), circulated, T0 + DAY / 12)
    assert italian.state.proposal(301).vote_of(ADA) is None  # type: ignore[union-attr]
    # the King appeals about his own vote: he is a party, so a Champion judges (212)
    reply_to(
        italian,
        ADA,
        "APPELLO\nIl voto era mio.\nFINE",
        last(italian, "reply", ADA),
        T0 + DAY / 8,
    )
    assert "CAMPIONE A1" in plain(last(italian, "champion_prompt", ADA))
    reply_to(italian, ADA, "Bob Rossi", last(italian, "champion_prompt", ADA), T0 + DAY / 6)
    prompt = plain(last(italian, "ruling_prompt", BOB))
    assert "come Campione" in prompt and "ACCOLTA: la decisione dell'arbitro" in prompt
    assert "consegnata" in prompt and "> VOTO 301 SÌ" in prompt
    # a ruling in words is no command: the reply names the one the thread waits for
    words = "La mia sentenza: il voto era suo."
    reply_to(italian, BOB, words, last(italian, "ruling_prompt", BOB), T0 + DAY / 5)
    hint = plain(last(italian, "reply", BOB))
    assert (
        "Non ho trovato comandi" in hint
        and "Intendevi SENTENZA A1 ACCOLTA|RESPINTA ... FINE?" in hint
    )
    reply_to(italian, BOB, "Sì", last(italian, "ruling_prompt", BOB), T0 + DAY / 4)
    assert "(letto come SENTENZA A1 ACCOLTA)" in plain(last(italian, "reply", BOB))
    reply_to(
        italian, CARLA, "Sono d'accordo", last(italian, "ruling_published", CARLA), T0 + DAY / 3
    )
    assert "Intendevi ACCORDO A1 o DISACCORDO A1?" in plain(last(italian, "reply", CARLA))
    for who in (BOB, CARLA):
        italian.receive(mail(who, "ACCORDO A1"), T0 + DAY / 2)
    assert italian.state.proposal(301).vote_of(ADA) is True  # type: ignore[union-attr]
    assert "ora è eseguita come scritta" in plain(last(italian, "ruling_applied", CARLA))
