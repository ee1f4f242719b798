"""Every reply helps the player act: lines quoted back with the nearest command, votes said in
plain words confirmed by a bare yes, and the daily limits saying when mail is answered again.

Serves the commands of rules 103-215 and the debate of rule 112; driven by mail, in English
and Italian, with replies built as a mail client builds them (tests/test_debate.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from referee.config import Settings, load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import ADA, BOB, CARLA, T0, mail
from tests.test_debate import HOUR, client_reply, flat, outbox, propose


def test_an_unknown_line_is_quoted_back_with_the_nearest_command(referee: Referee) -> None:
    raw = mail(CARLA, "Hi all,\nPROPSE ENACT\nBe kind.\nEND\nSTAUS", at=T0 + HOUR)
    referee.receive(raw, T0 + HOUR)
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert "I did not act on these lines: > PROPSE ENACT Did you mean PROPOSE ENACT?" in answer
    assert "> STAUS Not done yet. This reads as STATUS." in answer  # a whole command
    assert "> Hi all," not in answer  # a greeting is the player's own: never quoted back
    assert "Be kind." not in answer and "> END" not in answer  # the misspelt command's text
    assert (  # ... is not dropped silently: the reply says it was not taken, and why
        "Did you mean PROPOSE ENACT? The 2 lines after it, through END, were not taken either, "
        "since the command line above them was not understood" in answer
    )
    assert referee.state.proposal(301) is None  # a typo is never guessed into a proposal
    assert outbox(referee, "debate") == []


def test_italian_lines_are_quoted_back_in_italian(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, "it"))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        raw = mail(CARLA, "PROPONGO PROMULGRE\nSiate gentili.\nFINE", at=T0 + HOUR)
        referee.receive(raw, T0 + HOUR)
        answer = flat(outbox(referee, "reply", CARLA)[-1])
        assert (
            "Non ho dato seguito a queste righe: > PROPONGO PROMULGRE "
            "Intendevi PROPONGO PROMULGARE? Nemmeno le 2 righe che la seguono, fino a FINE, "
            "sono state prese, perché la riga del comando non è stata capita" in answer
        )

        propose(referee, italian=True)
        referee.receive(mail(BOB, "voto sì alla 301", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
        question = outbox(referee, "reply", BOB)[-1]
        assert "Non ancora fatto. Sembra voler dire VOTO 301 SÌ" in flat(question)
        assert referee.state.proposal(301).vote_of(BOB) is None  # type: ignore[union-attr]
        referee.receive(client_reply(question, BOB, "Sì", T0 + 3 * HOUR, True), T0 + 3 * HOUR)
        assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]
        confirmed = flat(outbox(referee, "reply", BOB)[-1])
        assert "(letto come VOTO 301 SÌ)" in confirmed and "Fatto." in confirmed
        # a misspelt answer word in a command: the line put right, done on a bare sì
        referee.receive(mail(ADA, "VOTO 301 SII", at=T0 + 4 * HOUR), T0 + 4 * HOUR)
        question = outbox(referee, "reply", ADA)[-1]
        assert (
            "> VOTO 301 SII Non ancora fatto. Sembra voler dire VOTO 301 SI "
            "(la forma è VOTO N SÌ|NO). Per farlo, rispondi" in flat(question)
        )
        assert referee.state.proposal(301).vote_of(ADA) is None  # type: ignore[union-attr]
        referee.receive(client_reply(question, ADA, "sì", T0 + 5 * HOUR, True), T0 + 5 * HOUR)
        assert referee.state.proposal(301).vote_of(ADA) is True  # type: ignore[union-attr]
        assert "(letto come VOTO 301 SI)" in flat(outbox(referee, "reply", ADA)[-1])
    finally:
        store.close()


def test_a_misspelt_word_in_a_command_is_put_right_and_done_on_a_bare_yes(
    referee: Referee,
) -> None:
    propose(referee)
    referee.receive(mail(BOB, "VOTE 301 YSE\nVOTE 301 MAYBE", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    question = outbox(referee, "reply", BOB)[-1]
    answer = flat(question)
    assert (
        "> VOTE 301 YSE Not done yet. This reads as VOTE 301 YES (the form is VOTE N YES|NO). "
        "To do it, reply to this mail with a bare yes" in answer
    )
    # "MAYBE" is close to no answer word: no guess
    assert "> VOTE 301 MAYBE Refused. I could not read this command" in answer
    assert answer.count("This reads as") == 1
    assert ".confirm-" in str(question["Message-ID"])
    assert referee.state.proposal(301).vote_of(BOB) is None  # type: ignore[union-attr]

    referee.receive(client_reply(question, BOB, "yes", T0 + 3 * HOUR), T0 + 3 * HOUR)
    assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]
    done = flat(outbox(referee, "reply", BOB)[-1])
    assert "read as VOTE 301 YES" in done and "I found no command" not in done
    # once: the same yes again confirms nothing more
    referee.receive(client_reply(question, BOB, "yes", T0 + 4 * HOUR), T0 + 4 * HOUR)
    assert "I found no command" in flat(outbox(referee, "reply", BOB)[-1])
    assert referee.state.suggestion_of(BOB) == ""


def test_a_vote_in_plain_words_is_done_only_on_a_bare_yes(referee: Referee) -> None:
    propose(referee)
    referee.receive(mail(BOB, "I vote yes on 301", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    question = outbox(referee, "reply", BOB)[-1]
    text = flat(question)
    assert "> I vote yes on 301 Not done yet. This reads as VOTE 301 YES." in text
    assert "I found no command" not in text
    assert ".confirm-" in str(question["Message-ID"])
    assert referee.state.proposal(301).vote_of(BOB) is None  # type: ignore[union-attr]

    # A bare yes from someone else, or to another mail, confirms nothing.
    referee.receive(client_reply(question, ADA, "yes", T0 + 3 * HOUR), T0 + 3 * HOUR)
    assert referee.state.proposal(301).vote_of(ADA) is None  # type: ignore[union-attr]

    referee.receive(client_reply(question, BOB, "Yes!", T0 + 4 * HOUR), T0 + 4 * HOUR)
    assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]
    done = flat(outbox(referee, "reply", BOB)[-1])
    assert "read as VOTE 301 YES" in done and "Your vote on proposal 301: YES" in done
    # used once: a second yes does nothing more
    assert referee.state.suggestion_of(BOB) == ""


def test_plus_one_in_a_proposals_thread_is_a_vote_to_confirm_never_debate(
    referee: Referee,
) -> None:
    propose(referee)
    circulated = outbox(referee, "proposal_circulated", ADA)[0]
    words = "Nicknames are fun.\n+1"
    referee.receive(client_reply(circulated, ADA, words, T0 + 2 * HOUR), T0 + 2 * HOUR)
    relays = outbox(referee, "debate", BOB)
    assert len(relays) == 1
    relayed = flat(relays[0]).split("---")[0]
    assert "Nicknames are fun." in relayed and "+1" not in relayed
    answer = flat(outbox(referee, "reply", ADA)[-1])
    assert "> +1 Not done yet. This reads as VOTE 301 YES." in answer
    assert "went to the table: to 2 players now" in answer
    # a misspelt command in the thread is quoted back, not relayed, and done on a bare yes
    referee.receive(client_reply(circulated, ADA, "VOTTE 301 NO", T0 + 3 * HOUR), T0 + 3 * HOUR)
    assert len(outbox(referee, "debate", BOB)) == 1
    question = outbox(referee, "reply", ADA)[-1]
    assert "> VOTTE 301 NO Not done yet. This reads as VOTE 301 NO." in flat(question)
    referee.receive(client_reply(question, ADA, "Yes", T0 + 4 * HOUR), T0 + 4 * HOUR)
    assert referee.state.proposal(301).vote_of(ADA) is False  # type: ignore[union-attr]
    assert len(outbox(referee, "debate", BOB)) == 1


def test_the_daily_limits_say_when_mail_is_answered_again(settings: Settings) -> None:
    tight = replace(settings, limits=replace(settings.limits, mails_per_day=3))
    store = Store(tight.database_url)
    try:
        referee = Referee.create(store, tight, T0)
        for hour in (1, 2, 3):
            referee.receive(mail(BOB, f"Hello {hour}", at=T0 + hour * HOUR), T0 + hour * HOUR)
        last = flat(outbox(referee, "reply", BOB)[-1])
        assert "This is the last answer today to a mail without a command" in last
        assert "Wednesday 2 December 2026, 01:00 CET" in last
        referee.receive(mail(BOB, "STATUS", at=T0 + 4 * HOUR), T0 + 4 * HOUR)
        capped = flat(outbox(referee, "reply", BOB)[-1])
        assert "You have reached today's limit (mails: 3 a day)" in capped
        assert "until Wednesday 2 December 2026, 01:00 CET" in capped
    finally:
        store.close()


def test_a_long_exchange_keeps_one_re_in_the_subject(referee: Referee) -> None:
    """Mail programs pile up `Re: RE: R:`; the referee's answer carries one `Re:` (new-user
    review: "RE: RE: Re: [Club Nomic] Proposal 301")."""
    for index, subject in enumerate(("RE: Re: [Test] Proposal 301", "R: AW: Fwd: status", "Re:")):
        at = T0 + (index + 1) * HOUR
        referee.receive(mail(BOB, "STATUS", subject=subject, at=at), at)
    subjects = [str(m["Subject"]) for m in outbox(referee, "reply", BOB)]
    assert subjects[-3:-1] == ["Re: [Test] Proposal 301", "Re: status"]
    assert "Re: Re:" not in " ".join(subjects) and subjects[-1] != "Re: "


def test_status_says_who_an_open_appeal_waits_for(referee: Referee) -> None:
    """New-user review: a game held by an appeal must say who acts next (212): the judge's
    ruling, then the players who have neither agreed nor disagreed."""
    referee.receive(mail(BOB, "APPEAL\nMay a rule be one word?\nEND", at=T0 + HOUR), T0 + HOUR)
    referee.receive(mail(CARLA, "STATUS", at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    said = flat(outbox(referee, "reply", CARLA)[-1])
    assert "A1 waits for the ruling of Ada Lovelace (RULING A1 ... END)" in said
    ruling = "RULING A1\nYes, one word is enough.\nEND"
    referee.receive(mail(ADA, ruling, at=T0 + 3 * HOUR), T0 + 3 * HOUR)
    referee.receive(mail(BOB, "AGREE A1", at=T0 + 4 * HOUR), T0 + 4 * HOUR)
    referee.receive(mail(CARLA, "STATUS", at=T0 + 5 * HOUR), T0 + 5 * HOUR)
    said = flat(outbox(referee, "reply", CARLA)[-1])
    assert "A1 is ruled: 1 agree, 0 disagree" in said
    assert "waiting for AGREE A1 or DISAGREE A1 from" in said and "Carla" in said.split("from")[-1]


def test_a_greeting_and_a_sign_off_beside_a_vote_are_not_quoted_back(referee: Referee) -> None:
    propose(referee)
    words = "Hi all,\n\nVOTE 301 YES\n\nThanks again!\nCheers,\nBob\n\n-- \nBob Rossi\nTurin"
    referee.receive(mail(BOB, words, at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]
    answer = flat(outbox(referee, "reply", BOB)[-1])
    assert "> VOTE 301 YES Done." in answer
    assert "I did not act" not in answer and "Cheers" not in answer and "Turin" not in answer


def test_every_line_not_acted_on_is_quoted_back_outside_a_thread(referee: Referee) -> None:
    """Issue 14: prose beside commands was dropped from a reply that answered every other
    line. The reply quotes it under its own heading, the quoted history and the signature of
    a reply aside; a plain-words vote is answered once, as the vote it seems to mean."""
    propose(referee)
    status = "Hello referee,\nSTATUS\nThanks, Ada"
    referee.receive(mail(BOB, status, at=T0 + 2 * HOUR), T0 + 2 * HOUR)
    first = outbox(referee, "reply", BOB)[-1]
    assert "I did not act" not in flat(first)  # a greeting naming the referee, a thanks
    words = "I'd like to vote on 301 tomorrow\nI vote yes on 301\nPROPOSAL AMEND 202\nBob Rossi"
    referee.receive(client_reply(first, BOB, words, T0 + 3 * HOUR), T0 + 3 * HOUR)
    answer = flat(outbox(referee, "reply", BOB)[-1])
    assert (
        "I did not act on these lines: > I'd like to vote on 301 tomorrow "
        "> PROPOSAL AMEND 202 Did you mean PROPOSE AMEND? ---" in answer
    )
    assert answer.count("I vote yes on 301") == 1  # its own item, not quoted twice
    assert "> I vote yes on 301 Not done yet. This reads as VOTE 301 YES." in answer
    assert "> Bob Rossi" not in answer and "> Phase:" not in answer  # his name, the quote
    assert outbox(referee, "debate") == []
    # in a proposal's thread the same words are debate: relayed, never quoted back
    circulated = outbox(referee, "proposal_circulated", BOB)[0]
    talk = "I'd like to vote on 301 tomorrow"
    referee.receive(client_reply(circulated, BOB, talk, T0 + 4 * HOUR), T0 + 4 * HOUR)
    assert talk in flat(outbox(referee, "debate", CARLA)[-1])
    assert "I did not act" not in flat(outbox(referee, "reply", BOB)[-1])


def test_a_mail_with_no_command_quotes_its_lines_and_the_nearest_command(
    referee: Referee,
) -> None:
    """The original complaint: `PROPSE ENACT` got "I found no command in your mail" with no
    quote of the line and no suggestion."""
    referee.receive(mail(CARLA, "PROPSE ENACT", at=T0 + HOUR), T0 + HOUR)
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert "Refused. I found no command in your mail." in answer
    assert "I did not act on these lines: > PROPSE ENACT Did you mean PROPOSE ENACT?" in answer
    # prose alone: the first lines quoted back, the rest counted
    talk = "\n".join(f"Thought number {n} about the game." for n in range(1, 15))
    referee.receive(
        mail(CARLA, f"Dear all,\n{talk}\nRegards,\nCarla", at=T0 + 2 * HOUR), T0 + 2 * HOUR
    )
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert "Refused. I found no command in your mail." in answer
    assert answer.count("> Thought number") == 10
    assert "> Thought number 10 about the game. …and 4 more lines. ---" in answer
    assert "Thought number 11" not in answer and "Dear all" not in answer
    long = "word " * 100
    referee.receive(mail(CARLA, long, at=T0 + 3 * HOUR), T0 + 3 * HOUR)
    answer = flat(outbox(referee, "reply", CARLA)[-1])
    assert answer.count("word") == 40 and "word word... ---" in answer  # cut at a word


def test_italian_lines_not_acted_on_are_quoted_back_in_italian(tmp_path: Path) -> None:
    settings = load_settings(write_config(tmp_path, "it"))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        propose(referee, italian=True)
        words = "Ciao a tutti,\nVOTO 301 SÌ\nGrazie mille!\nUn saluto,\nBob"
        referee.receive(mail(BOB, words, at=T0 + 2 * HOUR), T0 + 2 * HOUR)
        assert referee.state.proposal(301).vote_of(BOB) is True  # type: ignore[union-attr]
        assert "Non ho dato seguito" not in flat(outbox(referee, "reply", BOB)[-1])
        talk = "\n".join(f"Idea numero {n}." for n in range(1, 13))
        words = f"Salve,\nvorrei votare domani\nVOTTO 301 NO\n{talk}\nA presto"
        referee.receive(mail(ADA, words, at=T0 + 3 * HOUR), T0 + 3 * HOUR)
        answer = flat(outbox(referee, "reply", ADA)[-1])
        assert "> VOTTO 301 NO Non ancora fatto. Sembra voler dire VOTO 301 NO." in answer
        assert (
            "Non ho dato seguito a queste righe: > vorrei votare domani > Idea numero 1." in answer
        )
        assert "> Idea numero 9. …e altre 3 righe. ---" in answer
        assert "Salve" not in answer and "A presto" not in answer
    finally:
        store.close()


def test_a_flood_of_lines_is_counted_not_searched() -> None:
    """A mail of thousands of near-miss lines costs the referee little CPU (attacker's
    flood): only the first SEARCHED lines are looked at for the command they may mean, the
    rest are only counted as lines not acted on."""
    from referee.desk.hints import SEARCHED, hints

    found = hints("VOTTE 301 NO\n" * (SEARCHED + 40), [], None, False, "en", BOB)
    assert len(found) == SEARCHED + 40
    assert all(h.meant == "VOTE 301 NO" for h in found[:SEARCHED])
    assert all(h.meant == "" for h in found[SEARCHED:])


def test_a_misspelt_question_is_offered_as_a_question_not_a_move(tmp_path: Path) -> None:
    """STATUS, RULES and the other questions only answer the asker: the reply asking to confirm
    one speaks of its answer, never of the table (new-user review)."""
    for language, line, said in (
        (
            "en",
            "STAUS",
            "> STAUS Not done yet. This reads as STATUS. To have its answer, reply to this mail "
            "with a bare yes, or send STATUS on a line of its own; only you get the answer.",
        ),
        (
            "it",
            "STAOT",
            "> STAOT Non ancora fatto. Sembra voler dire STATO. Per avere la risposta, rispondi a "
            "questa mail con un semplice sì, oppure manda STATO su una riga a sé; la risposta "
            "arriva solo a te.",
        ),
    ):
        (tmp_path / language).mkdir()
        settings = load_settings(write_config(tmp_path / language, language))
        store = Store(settings.database_url)
        try:
            referee = Referee.create(store, settings, T0)
            referee.receive(mail(BOB, line, at=T0 + HOUR), T0 + HOUR)
            question = outbox(referee, "reply", BOB)[-1]
            assert said in flat(question)
            assert "table" not in flat(question) and "tavolo" not in flat(question)
            yes = "sì" if language == "it" else "yes"
            at = T0 + 2 * HOUR
            referee.receive(client_reply(question, BOB, yes, at, language == "it"), at)
            answer = flat(outbox(referee, "reply", BOB)[-1])
            read_as = "(letto come STATO) Fatto." if language == "it" else "(read as STATUS) Done."
            assert read_as in answer and "Carla De Santis" in answer  # whose turn it is
        finally:
            store.close()


def test_greetings_and_sign_offs_are_never_quoted_back(referee: Referee) -> None:
    """Neither as the debate the reply names ("Hi Carla," is not what was said) nor as lines
    not acted on: "Thanks in advance!", "Grazie in anticipo", "xoxo", an initial alone."""
    propose(referee)
    circulated = outbox(referee, "proposal_circulated", ADA)[0]
    words = "Hi Carla,\n\nNicknames are fun.\n\nThanks in advance!\nxoxo\nA."
    referee.receive(client_reply(circulated, ADA, words, T0 + 2 * HOUR), T0 + 2 * HOUR)
    answer = flat(outbox(referee, "reply", ADA)[-1])
    assert "> Nicknames are fun Done. Your words on proposal 301 went to the table" in answer
    assert "> Hi Carla" not in answer
    assert "Hi Carla," in flat(outbox(referee, "debate", BOB)[-1])  # relayed as written

    sign_offs = "STATUS\nThanks in advance!\nGrazie in anticipo\nxoxo\nB.\nSee my note."
    referee.receive(mail(BOB, sign_offs, at=T0 + 3 * HOUR), T0 + 3 * HOUR)
    answer = flat(outbox(referee, "reply", BOB)[-1])
    assert "I did not act on these lines: > See my note." in answer
    for line in ("Thanks in advance", "Grazie in anticipo", "xoxo", "> B."):
        assert line not in answer
