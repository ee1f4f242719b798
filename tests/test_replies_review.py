"""Replies to mail as a new player writes it: a text with no END taken to the end of the
player's own words, a refused SET that says the question is still open, lines beside a bare
answer quoted back, a signature without "-- " left out, and a command inside a line offered.

Serves the commands of rules 103-215 (the texts of 103 and 112, the King's SET after an
amendment of 112/202, the appeals of 212); driven by mail, in English and Italian, with
replies built as a mail client builds them (tests/test_debate.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config import load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, T0, mail
from tests.test_crown_handover import DONE, LANGUAGES, open_game, vote_through
from tests.test_debate import HOUR, client_reply, flat, outbox
from tests.test_engine_edges import Clock, send, sent, text


def _italian(tmp_path: Path) -> tuple[Store, Referee]:
    settings = load_settings(write_config(tmp_path, "it"))
    store = Store(settings.database_url)
    return store, Referee.create(store, settings, T0)


# ----- 1. a text with no END runs to the end of the player's own words -------------------


def test_a_proposal_with_no_end_runs_to_the_end_of_the_players_words(referee: Referee) -> None:
    body = "PROPOSE ENACT\nEvery player has a nickname.\nNicknames are chosen by the King."
    receipt = referee.receive(mail(CARLA, body, at=T0 + HOUR), T0 + HOUR)
    assert receipt.refused == 0
    proposal = referee.state.proposal(301)
    assert proposal is not None
    assert "Every player has a nickname.\nNicknames are chosen by the King." in proposal.text
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert "no END line" not in answer
    circulated = flat(outbox(referee, "proposal_circulated", CARLA)[-1])
    assert "Nicknames are chosen by the King." in circulated  # the player sees what was taken


def test_a_text_with_no_end_above_quoted_history_stops_where_the_history_begins(
    referee: Referee,
) -> None:
    turn = outbox(referee, to=CARLA)[-1]
    words = "PROPOSE ENACT\nEvery player has a nickname."
    referee.receive(client_reply(turn, CARLA, words, T0 + HOUR), T0 + HOUR)
    proposal = referee.state.proposal(301)
    assert proposal is not None and proposal.text.strip() == "Every player has a nickname."


def test_an_italian_text_with_no_fine_is_taken_whole(tmp_path: Path) -> None:
    store, referee = _italian(tmp_path)
    try:
        body = "PROPONGO PROMULGARE\nOgni giocatore ha un soprannome."
        assert referee.receive(mail(CARLA, body, at=T0 + HOUR), T0 + HOUR).refused == 0
        proposal = referee.state.proposal(301)
        assert proposal is not None and "Ogni giocatore ha un soprannome." in proposal.text
        assert "no END line" not in flat(outbox(referee, "reply", CARLA)[-1])
        circulated = flat(outbox(referee, "proposal_circulated", CARLA)[-1])
        assert "Ogni giocatore ha un soprannome." in circulated
    finally:
        store.close()


# ----- 2. a refused SET says the question is open and the bound in words -------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_refused_set_says_the_question_is_still_open_and_the_bound_in_words(
    tmp_path: Path, language: str
) -> None:
    for game in open_game(tmp_path, language):
        clock = Clock()
        vote_through(game, clock, "PROPOSE AMEND 202\nA turn is a proposal, a vote, an award.\nEND")
        send(game, clock, ADA, "AWARD 3")
        question = game.state.parameter_questions
        assert question
        answer = " ".join(send(game, clock, ADA, "SET debate_days = 3").split())
        assert game.state.parameter_questions == question  # nothing settled
        assert ">=" not in answer
        said = {
            "en": (
                "= 3 is not allowed: at least 7 days (rule 112). The question about rule 301 is "
                "still open: answer CONFIRM 301 to keep its values, or SET debate_days = another "
                "value."
            ),
            "it": (
                "= 3 non è ammesso: almeno 7 giorni (regola 112). La domanda sulla regola 301 "
                "resta aperta: rispondi CONFERMO 301 per mantenerne i valori, o IMPOSTA "
                "debate_days = un altro valore."
            ),
        }[language]
        assert said in answer, answer
        assert DONE[language] in send(game, clock, ADA, "CONFIRM 301")
        assert not game.state.parameter_questions


# ----- 3. the lines beside a bare answer to a prompt are quoted back ------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_lines_after_a_bare_award_are_quoted_back_unless_courtesy(
    tmp_path: Path, language: str
) -> None:
    for game in open_game(tmp_path, language):
        clock = Clock()
        vote_through(game, clock, "PROPOSE ENACT\nBe kind.\nEND")  # Carla's turn
        prompt = sent(game, "award_prompt")[-1]
        praise = {"en": "Nice one Carla!", "it": "Brava Carla, ottima idea!"}[language]
        at = clock.tick()
        game.receive(client_reply(prompt, ADA, f"7\n\n{praise}", at), at)
        assert game.state.player(CARLA).score == 7  # type: ignore[union-attr]
        answer = text(sent(game, "reply")[-1])
        read = {"en": "(read as AWARD 7)", "it": "(letto come PUNTI 7)"}[language]
        unread = {
            "en": "I did not act on these lines:",
            "it": "Non ho dato seguito a queste righe:",
        }
        assert read in answer and f"{unread[language]} > {praise}" in answer, answer


def test_a_thank_you_beside_a_bare_award_is_not_quoted_back(tmp_path: Path) -> None:
    for game in open_game(tmp_path, "en"):
        clock = Clock()
        vote_through(game, clock, "PROPOSE ENACT\nBe kind.\nEND")
        prompt = sent(game, "award_prompt")[-1]
        at = clock.tick()
        game.receive(client_reply(prompt, ADA, "7\n\nThanks!", at), at)
        answer = text(sent(game, "reply")[-1])
        assert "(read as AWARD 7)" in answer and "I did not act on" not in answer, answer


# ----- 4. a signature without "-- " is not quoted back --------------------------------------


def test_a_signature_without_a_separator_is_not_quoted_back(referee: Referee) -> None:
    body = (
        "PROPOSE ENACT\nBe kind.\nEND\n\nA week is too long, isn't it?\n\n"
        "Carla De Santis\nStudio Legale De Santis\nTel. +39 02 1234567"
    )
    referee.receive(mail(CARLA, body, at=T0 + HOUR), T0 + HOUR)
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert "> A week is too long, isn't it?" in answer  # the player's own sentence
    assert "Studio Legale" not in answer and "1234567" not in answer, answer


def test_a_misspelt_command_in_the_closing_block_is_still_quoted(tmp_path: Path) -> None:
    store, referee = _italian(tmp_path)
    try:
        body = "PROPONGO PROMULGARE\nSiate gentili.\nFINE\n\nSTAOT\nStudio Legale De Santis"
        referee.receive(mail(CARLA, body, at=T0 + HOUR), T0 + HOUR)
        answer = flat(outbox(referee, "reply", CARLA)[-1])
        assert "> STAOT" in answer and "STATO" in answer, answer
        assert "Studio Legale" not in answer, answer
    finally:
        store.close()


def test_a_closing_block_with_no_command_before_it_is_quoted(referee: Referee) -> None:
    referee.receive(mail(CARLA, "Hello there\n\nI would like to play", at=T0 + HOUR), T0 + HOUR)
    assert "> I would like to play" in flat(outbox(referee, "reply", CARLA)[-1])


# ----- 5. a command inside a line, and AGREE/DISAGREE with the appeal's id ------------------


def test_a_command_inside_a_line_is_offered_alone(referee: Referee) -> None:
    referee.receive(mail(CARLA, "Hi, STATUS please\n\nCarla", at=T0 + HOUR), T0 + HOUR)
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert "> Hi, STATUS please Not done yet. This reads as STATUS." in answer, answer
    assert "I found no command" not in answer
    referee.receive(mail(CARLA, "Our status is fine", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    assert "reads as STATUS" not in flat(outbox(referee, "reply", CARLA)[-1])  # not in capitals


def test_italian_stato_inside_a_line_and_disaccordo_with_the_appeals_id(tmp_path: Path) -> None:
    store, referee = _italian(tmp_path)
    try:
        referee.receive(mail(BOB, "Ciao, STATO per favore\n\nBob", at=T0 + HOUR), T0 + HOUR)
        answer = flat(outbox(referee, "reply", BOB)[-1])
        assert "> Ciao, STATO per favore Non ancora fatto. Sembra voler dire STATO" in answer
        appeal = "APPELLO\nUna regola può essere una parola sola?\nFINE"
        referee.receive(mail(CARLA, appeal, at=T0 + 2 * HOUR), T0 + 2 * HOUR)
        ruling = "SENTENZA A1\nSì, basta una parola.\nFINE"
        referee.receive(mail(ADA, ruling, at=T0 + 3 * HOUR), T0 + 3 * HOUR)
        said = "DISACCORDO, troppo burocratico... scherzo."
        referee.receive(mail(BOB, said, at=T0 + 4 * HOUR), T0 + 4 * HOUR)
        answer = flat(outbox(referee, "reply", BOB)[-1])
        assert f"> {said} Non ancora fatto. Sembra voler dire DISACCORDO A1" in answer, answer
        assert BOB not in referee.state.appeal("A1").disagree  # type: ignore[union-attr]
    finally:
        store.close()


def test_disagree_alone_is_offered_with_the_open_appeals_id(referee: Referee) -> None:
    referee.receive(mail(BOB, "APPEAL\nMay a rule be one word?\nEND", at=T0 + HOUR), T0 + HOUR)
    ruling = "RULING A1\nYes, one word is enough.\nEND"
    referee.receive(mail(ADA, ruling, at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    referee.receive(mail(CARLA, "DISAGREE, too bureaucratic.", at=T0 + 3 * HOUR), T0 + 3 * HOUR)
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert "This reads as DISAGREE A1" in answer, answer
