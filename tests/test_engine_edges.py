"""Where phases meet, played through mail: 109, 112, 114, 203, 208, 209, 212-214 (issue 8).

Every scenario goes through the service as players would play it: a mail in, the referee's reply
and notices out, read as a player reads them.
"""

from __future__ import annotations

import mailbox
from collections.abc import Iterator
from datetime import datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import load_settings
from referee.core.model import Phase, ProposalStatus
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import ADA, BOB, CARLA, DAN, DAY, T0, mail

CONFIG = """[game]
name = "Edge Nomic"
address = "referee@nomic.example"
language = "en"
timezone = "Europe/Rome"
start = "2026-12-01T09:00:00+00:00"
{ruleset}

[[players]]
name = "Ada Lovelace"
email = "ada@example.org"
king = true

[[players]]
name = "Bob Rossi"
email = "bob@example.org"

[[players]]
name = "Carla De Santis"
email = "carla@example.org"
surname = "De Santis"
{more}
[database]
url = "sqlite:///edge.db"
"""
DAN_PLAYS = """
[[players]]
name = "Dan Moro"
email = "dan@example.org"
"""


def open_game(folder: Path, more: str = "", ruleset: str = "") -> Iterator[Referee]:
    path = folder / "game.toml"
    path.write_text(CONFIG.format(more=more, ruleset=ruleset), encoding="utf-8")
    settings = load_settings(path)
    store = Store(settings.database_url)
    try:
        yield Referee.create(store, settings, T0)
    finally:
        store.close()


@pytest.fixture
def game(tmp_path: Path) -> Iterator[Referee]:
    """Ada (King), Bob, Carla; turn order Carla, Ada, Bob."""
    yield from open_game(tmp_path)


@pytest.fixture
def game4(tmp_path: Path) -> Iterator[Referee]:
    """Ada (King), Bob, Carla, Dan; turn order Carla, Ada, Dan (Moro), Bob."""
    yield from open_game(tmp_path, DAN_PLAYS)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def tick(self, by: object = None) -> datetime:
        self.now += DAY / 24 if by is None else by  # type: ignore[operator]
        return self.now


def sent(referee: Referee, kind: str) -> list[EmailMessage]:
    out = []
    for row in referee.store.outbox(referee.game_id):
        if row.kind == kind:
            message = message_from_bytes(row.raw, policy=policy.default)
            assert isinstance(message, EmailMessage)
            out.append(message)
    return out


def text(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return " ".join(str(body.get_content()).split())  # wrapped at 72: compare as one line


def send(
    referee: Referee, clock: Clock, sender: str, body: str, headers: dict[str, str] | None = None
) -> str:
    """One mail in; the plain text of the reply it got."""
    at = clock.tick()
    referee.receive(mail(sender, body, at=at, headers=headers), at)
    return text(sent(referee, "reply")[-1])


def play_turn(referee: Referee, clock: Clock, proposal: str, award: int) -> None:
    """The turn player's proposal, everyone's YES, the debate's end, the King's award."""
    state = referee.state
    assert state.turn_player is not None and state.phase is Phase.PROPOSE
    assert "Done." in send(referee, clock, state.turn_player, proposal)
    number = referee.state.current_proposal
    for player in referee.state.active_players:
        send(referee, clock, player.email, f"VOTE {number} YES")
    clock.now += 8 * DAY
    referee.advance(clock.now)
    assert referee.state.phase is Phase.AWARD
    assert referee.state.king is not None
    send(referee, clock, referee.state.king, f"AWARD {award}")


def test_a_tie_still_lets_players_quit_accuse_name_a_champion_and_crown(game4: Referee) -> None:
    """114: a player may always leave; 213, 214 go on while the King owes a tie decision."""
    clock = Clock()
    play_turn(game4, clock, "PROPOSE ENACT\nBe kind.\nEND", 5)  # Carla: 5
    play_turn(game4, clock, "PROPOSE ENACT\nBe brief.\nEND", 1)  # Ada: 1
    play_turn(game4, clock, "PROPOSE ENACT\nBe fair.\nEND", 5)  # Dan: 5
    assert game4.state.turn_player == BOB
    send(game4, clock, BOB, "PROPOSE AMEND 209\nFive points win.\nSET winning_score = 5\nEND")
    for who in (ADA, BOB, CARLA, DAN):
        send(game4, clock, who, "VOTE 304 YES")
    clock.now += 8 * DAY
    game4.advance(clock.now)
    assert set(game4.state.tie) == {CARLA, DAN} and not game4.state.over
    assert "Not now" in send(game4, clock, CARLA, "PROPOSE ENACT\nx\nEND")
    assert "Done." in send(game4, clock, BOB, "ACCUSE\nThe award of 1 was falsified.\nEND")
    assert "Done." in send(game4, clock, ADA, "CHAMPION A1 Dan")
    assert "Done." in send(game4, clock, DAN, "RULING A1\nUPHELD\nEND")
    for who in (BOB, CARLA, DAN):
        send(game4, clock, who, "AGREE A1")
    assert game4.state.deposed == ADA and game4.state.king is None
    assert "Done." in send(game4, clock, ADA, "CROWN Bob")
    assert game4.state.king == BOB
    tie_prompts = sent(game4, "tie_prompt")
    assert tie_prompts[-1]["To"].addresses[0].addr_spec == BOB  # 209: the new King decides
    reply = send(game4, clock, DAN, "QUIT")
    assert "Done." in reply and "left the game" in reply
    assert game4.state.over and game4.state.winner == CARLA  # the tie's last player wins


def test_an_appeal_is_judged_by_the_king_in_office_after_a_deposition(game: Referee) -> None:
    """212, 213, 214: the deposed King's ruling is refused; his crowned successor rules."""
    clock = Clock()
    assert "Ada Lovelace will judge it" in send(game, clock, BOB, "APPEAL\nMay I?\nEND")
    send(game, clock, CARLA, "ACCUSE\nAda changed the rules.\nEND")
    send(game, clock, ADA, "CHAMPION A2 Bob")
    send(game, clock, BOB, "RULING A2\nUPHELD: she did.\nEND")
    send(game, clock, BOB, "AGREE A2")
    send(game, clock, CARLA, "AGREE A2")
    assert game.state.deposed == ADA
    assert "A1 has no judge yet" in send(game, clock, ADA, "RULING A1\nYes.\nEND")
    send(game, clock, ADA, "CROWN Carla")
    assert "Only the judge of A1 (Carla De Santis)" in send(
        game, clock, ADA, "RULING A1\nYes.\nEND"
    )
    assert "Done." in send(game, clock, CARLA, "RULING A1\nYes, you may.\nEND")


def test_when_the_king_quits_his_successor_judges_or_names_a_champion(game: Referee) -> None:
    """114, 212, 214: the appeal follows the crown; the new King names a Champion for his own."""
    clock = Clock()
    send(game, clock, BOB, "APPEAL\nMay I?\nEND")
    send(game, clock, CARLA, "APPEAL\nAnd I?\nEND")
    assert "Done." in send(game, clock, ADA, "QUIT")
    assert game.state.king == BOB  # the next in turn order after Ada
    prompts = sent(game, "champion_prompt")
    assert prompts and prompts[-1]["To"].addresses[0].addr_spec == BOB  # A1 is Bob's own
    assert "Done." in send(game, clock, BOB, "RULING A2\nYes, Carla.\nEND")
    assert "A1 has no judge yet" in send(game, clock, BOB, "RULING A1\nYes, me.\nEND")
    assert "Done." in send(game, clock, BOB, "CHAMPION A1 Carla")
    assert "Done." in send(game, clock, CARLA, "RULING A1\nYes, Bob.\nEND")


def test_the_immutable_week_of_debate_prevails_over_a_mutable_rule(game: Referee) -> None:
    """111, 112: no proposal can shorten the debate below the immutable minimum."""
    clock = Clock()
    reply = send(
        game,
        clock,
        CARLA,
        "PROPOSE AMEND 202\nA short debate.\nSET debate_days = 3\nSET debate_days_min = 3\nEND",
    )
    assert "Refused." in reply and "at least 7 days (rule 112)" in reply
    prevailing = "SET debate_days = 3\nSET debate_days_min = 3\nSET precedence = prevails"
    reply = send(game, clock, CARLA, f"PROPOSE ENACT\nDebates are short.\n{prevailing}\nEND")
    assert "Refused." in reply and "at least 7 days (rule 112)" in reply
    assert game.state.current_proposal is None and not game.state.proposals
    # Without a claim to prevail, 202's value holds (211): the rule passes and changes nothing.
    short = "SET debate_days = 3\nSET debate_days_min = 3"
    play_turn(game, clock, f"PROPOSE ENACT\nDebates are short.\n{short}\nEND", 2)
    assert "Done." in send(game, clock, ADA, "PROPOSE ENACT\nBe kind.\nEND")
    proposal = game.state.proposal(302)
    assert proposal is not None and proposal.debate_ends - proposal.created_at == 7 * DAY


def test_different_votes_in_one_mail_are_each_answered_and_none_is_chosen_by_order(
    game: Referee,
) -> None:
    """203, 208, issue 15: every line gets its line in the reply, in order; two different
    answers to one question are never resolved by their order: both are asked again."""
    clock = Clock()
    send(game, clock, CARLA, "PROPOSE ENACT\nBe kind.\nEND")
    reply = send(game, clock, BOB, "VOTE 301 NO\nVOTE 301 YES\nVOTE 301 NO\n")
    assert reply.count("> VOTE 301") == 3 and "Done." not in reply
    assert reply.count("Refused.") == 3
    proposal = game.state.proposal(301)
    assert proposal is not None and proposal.vote_of(BOB) is None
    again = send(game, clock, BOB, "VOTE 301 NO\nVOTE 301 NO\n")  # the same answer twice: once
    assert again.count("Done.") >= 1 and "Refused." not in again
    assert game.state.proposal(301).vote_of(BOB) is False  # type: ignore[union-attr]


def test_the_proposal_is_in_voting_when_the_debate_ends_and_extend_names_it(
    game: Referee,
) -> None:
    """202, 203: the proposal's status follows the phase; EXTEND during voting names 301."""
    clock = Clock()
    send(game, clock, CARLA, "PROPOSE ENACT\nBe kind.\nEND")
    send(game, clock, BOB, "VOTE 301 YES")
    clock.now += 8 * DAY
    game.advance(clock.now)
    proposal = game.state.proposal(301)
    assert game.state.phase is Phase.VOTING
    assert proposal is not None and proposal.status is ProposalStatus.VOTING
    assert sent(game, "debate_ended")  # Ada and Carla have not voted: "vote now"
    reply = send(game, clock, ADA, "EXTEND 3 DAYS")
    assert "The debate on proposal 301 is over" in reply


def test_no_vote_now_when_everyone_voted_during_the_debate(game: Referee) -> None:
    clock = Clock()
    play_turn(game, clock, "PROPOSE ENACT\nBe kind.\nEND", 3)
    assert not sent(game, "debate_ended")
    assert len(sent(game, "vote_result")) == 3


def test_a_repeal_keeps_the_rules_number_in_its_history(game: Referee) -> None:
    """109: a repealed rule is not renumbered; RULE 301 is no rule."""
    clock = Clock()
    play_turn(game, clock, "PROPOSE REPEAL 206", 3)
    rule = game.state.rule_by_identity(206)
    assert rule is not None and not rule.in_force
    assert [h.number for h in rule.history][-1] == 206 and rule.history[-1].proposal == 301
    assert "There is no rule 301" in send(game, clock, BOB, "RULE 301")
    history = send(game, clock, BOB, "HISTORY 206")
    assert "repealed" in history and "rule 301" not in history.lower()


def test_proposal_numbers_start_above_every_rule_number(tmp_path: Path) -> None:
    """109: an initial rule numbered 301 or more never collides with a proposal."""
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "101.md").write_text(
        '+++\nnumber = 101\nmutable = false\ntitle = "Obey"\n+++\nObey the rules.\n',
        encoding="utf-8",
    )
    (rules / "350.md").write_text(
        '+++\nnumber = 350\nmutable = true\ntitle = "High"\n+++\nA rule numbered high.\n',
        encoding="utf-8",
    )
    for referee in open_game(tmp_path, ruleset='ruleset = "rules"'):
        clock = Clock()
        reply = send(referee, clock, CARLA, "PROPOSE ENACT\nBe kind.\nEND")
        assert "proposal 401" in reply
        assert "A rule numbered high." in send(referee, clock, BOB, "RULE 350")


def test_the_kings_bare_reply_citing_only_the_prompt(game: Referee) -> None:
    """202: In-Reply-To alone, naming the prompt itself, is enough; without it, a hint."""
    clock = Clock()
    send(game, clock, CARLA, "PROPOSE ENACT\nBe kind.\nEND")
    for who in (ADA, BOB, CARLA):
        send(game, clock, who, "VOTE 301 YES")
    clock.now += 8 * DAY
    game.advance(clock.now)
    prompt = sent(game, "award_prompt")[-1]
    reply = send(game, clock, ADA, "7")  # no thread at all: refused, with what it would mean
    assert "I found no command" in reply and "Did you mean AWARD 7?" in reply
    assert game.state.phase is Phase.AWARD
    reply = send(game, clock, ADA, "7", headers={"In-Reply-To": str(prompt["Message-ID"])})
    assert "(read as AWARD 7)" in reply and "Done." in reply
    carla = game.state.player(CARLA)
    assert carla is not None and carla.score == 7


def test_a_deposed_king_who_never_crowns_is_reminded_then_the_crown_passes(
    game: Referee,
) -> None:
    """213, 214: daily reminders; after crown_days the next player in turn order is King."""
    clock = Clock()
    send(game, clock, BOB, "ACCUSE\nAda falsified a result.\nEND")
    send(game, clock, ADA, "CHAMPION A1 Carla")
    send(game, clock, CARLA, "RULING A1\nUPHELD\nEND")
    send(game, clock, BOB, "AGREE A1")
    send(game, clock, CARLA, "AGREE A1")
    assert game.state.deposed == ADA and game.state.king is None
    assert len(sent(game, "crown_prompt")) == 1
    for _ in range(3):  # the running service wakes at each reminder
        clock.now += DAY
        game.advance(clock.now)
    assert len(sent(game, "crown_prompt")) == 1 + 3  # one reminder a day
    clock.now += 3 * DAY  # off for three days: the missed reminders go out once
    game.advance(clock.now)
    assert len(sent(game, "crown_prompt")) == 1 + 3 + 1
    assert game.state.king is None
    clock.now += 5 * DAY
    game.advance(clock.now)
    assert game.state.king == BOB and game.state.deposed is None  # after Ada in turn order
    crowned = text(sent(game, "king_crowned")[-1])
    assert "Bob Rossi" in crowned and "213" in crowned


# --- the mail a player reads of these changes (issue 6, the engine's part) ------------------


def replayed(language: str, tmp_path: Path) -> list[EmailMessage]:
    from examples.make_examples import write
    from referee.replay import replay

    write(tmp_path)
    settings = load_settings(tmp_path / f"game-{language}.toml")
    out = tmp_path / "sent.mbox"
    result = replay(settings, tmp_path / f"game-{language}.mbox", out=out)
    assert result.state.winner == BOB
    messages = []
    for entry in mailbox.mbox(str(out)):
        message = message_from_bytes(entry.as_bytes(), policy=policy.default)
        assert isinstance(message, EmailMessage)
        messages.append(message)
    return messages


def to(message: EmailMessage) -> str:
    return str(message["To"].addresses[0].addr_spec)


@pytest.mark.parametrize("language", ["en", "it"])
def test_one_ruleset_mail_per_change_saying_what_changed(language: str, tmp_path: Path) -> None:
    """205: after every change the records go out, opening with the change, in one thread; the
    full ruleset only when the rules changed, the scores alone when only they did; 206 named."""
    messages = replayed(language, tmp_path)
    en = language == "en"
    root = f"<{'nomic-of-the-king' if en else 'nomic-del-re'}.ruleset@nomic.example>"
    threaded = [m for m in messages if str(m["In-Reply-To"]) == root]
    in_force = "The rules in force" if en else "Le regole in vigore"
    rulesets = [m for m in threaded if in_force in text(m)]
    stamps = [(to(m), str(m["Date"])) for m in rulesets]
    assert rulesets and len(stamps) == len(set(stamps))  # never two in one step
    assert all(root in str(m["References"]) for m in threaded)
    # the opening mail starts the thread, then one full ruleset per rule change, never another
    begins = "The game begins" if en else "Il gioco comincia"
    assert str(threaded[0]["Subject"]).endswith(begins)
    changed = [m for m in rulesets if not str(m["Subject"]).endswith(begins)]
    assert {str(m["Subject"]).split("] ", 1)[1] for m in changed} == (
        {
            "Proposal 301 adopted: rule 209 amended, now 301",
            "Proposal 303 adopted: rule 116 transmuted, now 303",
            "Proposal 304 adopted: rule 301 given an amendment, now 304",
            "Rule 204: majority voting from now; scores: Bob Rossi +9",
            "Proposal 306 adopted: rule 210 amended, now 306",
            "Proposal 307 adopted: rule 307 enacted; scores: Bob Rossi +10",
        }
        if en
        else {
            "Proposta 301 adottata: regola 209 emendata, ora 301",
            "Proposta 303 adottata: regola 116 trasmutata, ora 303",
            "Proposta 304 adottata: regola 301 con un nuovo emendamento, ora 304",
            "Regola 204: d'ora in poi basta la maggioranza; punteggi: Bob Rossi +9",
            "Proposta 306 adottata: regola 210 emendata, ora 306",
            "Proposta 307 adottata: regola 307 promulgata; punteggi: Bob Rossi +10",
        }
    )
    what = "What changed" if en else "Che cosa è cambiato"
    assert all(what in text(m) for m in changed)
    # a change of scores alone: the scores and what changed, in the mail of the next turn
    turns = [m for m in messages if ("scores:" if en else "punteggi:") in str(m["Subject"])]
    award = next(m for m in turns if "Ada Lovelace +6" in str(m["Subject"]))
    assert what in text(award) and in_force not in text(award)
    assert len(text(award)) < len(text(rulesets[0])) / 5
    last = next(m for m in reversed(rulesets) if to(m) == BOB)
    bonus = (
        "the dissent bonus (rule 206)" if language == "en" else "premio al dissenso (regola 206)"
    )
    assert f"Bob Rossi: +10 points, {bonus}" in text(last).replace("punti", "points")
    # every example names a mutable rule in force, under its number now
    examples = [
        text(m).split("PROPOSE AMEND " if en else "PROPONGO EMENDARE ")[1].split()[0].strip(",")
        for m in messages
        if to(m) == BOB and ("It is" in str(m["Subject"]) or "È il turno" in str(m["Subject"]))
    ]
    assert examples
    for number in examples:  # a mutable rule of the last ruleset mail
        rule = f"Rule {number} " if en else f"Regola {number} "
        section = text(rulesets[-1]).split(rule, 1)[1][:400]
        assert ("Mutable." if en else "Mutabile.") in section, number
    result_307 = next(
        m
        for m in messages
        if "307" in str(m["Subject"])
        and to(m) == BOB
        and "Re:" not in str(m["Subject"])
        and ("adopted" in str(m["Subject"]) or "adottata" in str(m["Subject"]))
    )
    assert bonus in text(result_307)  # the result names the score change that decides the game
    # the parameter prompt names rule 301 by the number it had and the one it has now
    prompt = next(
        m for m in messages if "parameters" in str(m["Subject"]) or "parametri" in str(m["Subject"])
    )
    assert ("rule 301 (now rule 304)" if language == "en" else "regola 301 (ora regola 304)") in (
        text(prompt)
    )


def test_no_vote_now_in_the_minute_the_vote_closes_and_revisions_diff_the_old_text(
    tmp_path: Path,
) -> None:
    messages = replayed("en", tmp_path)
    for ended in (m for m in messages if "debate" in str(m["Subject"]).lower()):
        results = [
            m for m in messages if m["Date"] == ended["Date"] and "adopted" in str(m["Subject"])
        ]
        assert not results
    revised = next(m for m in messages if "revised" in str(m["Subject"]) and to(m) == ADA)
    body = text(revised)
    assert "The first player to reach 25 {+(positive) +}points wins." in body  # a word diff
