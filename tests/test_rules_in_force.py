"""A mechanic acts only while a rule in force carries it; limits use the rules after a change
(101, 113, 115, 204, 206, 209, 210, 211, 212, 213, 215).

Each test repeals (or amends) a rule the way an adopted proposal leaves it, then plays on:
a repealed 206 pays no dissent bonus, a repealed 213 deposes no King, a repealed 215 ends no
game, a repealed 212 takes no appeal; 113's winning by points outlives 209 on the house value;
a rule that SETs a mechanic's parameter carries it; and the cap (210) at submission is the cap
the change itself leaves, with the count after it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from referee.core import mechanics
from referee.core.events import (
    Accuse,
    Agree,
    Award,
    GiveRuling,
    NameChampion,
    OpenAppeal,
    Propose,
    Vote,
)
from referee.core.mechanics import Mechanic
from referee.core.model import Adoption, GameState, ProposalKind, ProposalStatus
from referee.core.view import house_values
from tests.helpers import ADA, BOB, CARLA, DAY, Game, player, proposal

K = ProposalKind


def repealed(state: GameState, *identities: int) -> GameState:
    for identity in identities:
        rule = state.rule_by_identity(identity)
        assert rule is not None
        state = state.with_rule(replace(rule, in_force=False))
    return state


def with_parameters(state: GameState, identity: int, **values: str) -> GameState:
    rule = state.rule_by_identity(identity)
    assert rule is not None
    merged = {**dict(rule.parameters), **values}
    return state.with_rule(replace(rule, parameters=tuple(merged.items())))


def majority_game(*repeal: int) -> Game:
    game = Game()
    game.state = repealed(replace(game.state, adoption=Adoption.MAJORITY), *repeal)
    return game


def pass_by_majority(game: Game, **sets: str) -> None:
    outcome = game.do(Propose(CARLA, K.ENACT, text="A new rule.", sets=tuple(sets.items())))
    assert outcome.ok, outcome
    for who, yes in ((ADA, True), (BOB, False), (CARLA, True)):
        assert game.do(Vote(who, 301, yes)).ok
    game.clock(game.now + 15 * DAY)
    assert proposal(game.state, 301).status is ProposalStatus.ADOPTED


def test_the_dissent_bonus_is_paid_while_206_is_in_force() -> None:
    game = majority_game()
    pass_by_majority(game)
    assert player(game.state, BOB).score == 10


def test_a_repealed_206_pays_no_bonus_and_its_house_value_is_not_listed() -> None:
    game = majority_game(206)
    pass_by_majority(game)
    assert player(game.state, BOB).score == 0
    assert not mechanics.runs(game.state, Mechanic.DISSENT)
    names = {v["name"] for v in house_values(game.state)}
    assert "dissent_bonus" not in names
    ruleset = game.notices("ruleset")[-1].data
    assert "dissent_bonus" not in {v["name"] for v in ruleset["house_values"]}
    assert game.notices("ruleset")[-1].data["cites"]["dissent"]["state"] == "repealed"


def test_a_rule_that_sets_the_bonus_carries_the_mechanic_after_206_is_gone() -> None:
    game = majority_game(206)
    pass_by_majority(game, dissent_bonus="5")  # the new rule declares the bonus with SET
    assert mechanics.runs(game.state, Mechanic.DISSENT)
    owner = mechanics.owner(game.state, Mechanic.DISSENT)
    assert owner is not None and owner.number == 301
    assert player(game.state, BOB).score == 5  # 207: the new rule acts as its vote ends


def test_a_house_value_never_revives_a_repealed_mechanic() -> None:
    game = Game()
    game.state = repealed(
        replace(game.state, adoption=Adoption.MAJORITY, house_parameters=(("dissent_bonus", "7"),)),
        206,
    )
    pass_by_majority(game)
    assert player(game.state, BOB).score == 0


def test_a_repealed_212_takes_no_appeal() -> None:
    game = Game()
    game.state = repealed(game.state, 212)
    refused = game.do(OpenAppeal(BOB, "Is this fair?"))
    assert refused.code == "not_in_force" and refused.data["mechanic"] == "appeals"


def accusation_upheld(game: Game) -> None:
    assert game.do(Accuse(BOB, "Falsified the count.")).ok
    assert game.do(NameChampion(ADA, "A1", "Carla")).ok
    assert game.do(GiveRuling(CARLA, "A1", "UPHELD", verdict="upheld")).ok
    assert game.do(Agree(BOB, "A1", True)).ok
    assert game.do(Agree(CARLA, "A1", True)).ok


def test_a_repealed_213_takes_no_accusation_and_deposes_no_king() -> None:
    game = Game()
    game.state = repealed(game.state, 213)
    assert game.do(Accuse(BOB, "Falsified.")).code == "not_in_force"
    game = Game()
    assert game.do(Accuse(BOB, "Falsified the count.")).ok
    game.state = repealed(game.state, 213)  # repealed while the accusation is open
    assert game.do(NameChampion(ADA, "A1", "Carla")).ok
    assert game.do(GiveRuling(CARLA, "A1", "UPHELD", verdict="upheld")).ok
    assert game.do(Agree(BOB, "A1", True)).ok
    assert game.do(Agree(CARLA, "A1", True)).ok
    assert game.state.king == ADA and player(game.state, ADA).score == 0
    assert not game.notices("king_deposed")


def test_213_in_force_deposes() -> None:
    game = Game()
    accusation_upheld(game)
    assert game.state.king is None and player(game.state, ADA).score == -100


def test_a_repealed_215_ends_no_game() -> None:
    game = Game()
    game.state = repealed(game.state, 215)
    assert game.do(OpenAppeal(BOB, "Can play go on?")).ok
    refused = game.do(GiveRuling(ADA, "A1", "IMPOSSIBLE Bob", impossible="Bob"))
    assert refused.code == "not_in_force" and refused.data["mechanic"] == "impossible"
    game = Game()
    assert game.do(OpenAppeal(BOB, "Can play go on?")).ok
    assert game.do(GiveRuling(ADA, "A1", "IMPOSSIBLE Bob", impossible="Bob")).ok
    game.state = repealed(game.state, 215)  # repealed before the players agree
    assert game.do(Agree(ADA, "A1", True)).ok
    assert game.do(Agree(CARLA, "A1", True)).ok
    assert not game.state.over and not game.notices("winner")


def test_winning_by_points_outlives_209_on_the_house_value_and_cites_113() -> None:
    game = Game()
    game.state = repealed(game.state, 209)
    assert mechanics.runs(game.state, Mechanic.WINNING)
    assert mechanics.citation(game.state, Mechanic.WINNING)["name"] == "113"
    game.state = game.state.with_player(replace(player(game.state, CARLA), score=95))
    assert game.do(Propose(CARLA, K.ENACT, text="x")).ok
    for who in (ADA, BOB, CARLA):
        assert game.do(Vote(who, 301, True)).ok
    game.clock(game.now + 15 * DAY)
    assert game.do(Award(ADA, 10)).ok
    assert game.state.over and game.state.winner == CARLA
    assert game.notices("winner")[-1].data["cites"]["winning"]["name"] == "113"


def test_a_repealed_204_never_switches_to_majority() -> None:
    game = Game()
    game.state = repealed(replace(game.state, rounds_completed=2), 204)
    assert mechanics.owner(game.state, Mechanic.MAJORITY) is None
    assert game.do(Propose(CARLA, K.ENACT, text="x")).ok
    for who in (ADA, BOB, CARLA):
        assert game.do(Vote(who, 301, True)).ok
    game.clock(game.now + 15 * DAY)
    assert game.state.adoption is Adoption.UNANIMITY and not game.notices("majority_now")


# --- 3: the limits use the rules as they will be ---------------------------------------------


def capped_at_fifteen() -> Game:
    game = Game()
    game.state = with_parameters(game.state, 210, max_mutable_rules="15")
    assert game.state.mutable_count == 15
    return game


def test_a_rule_raising_the_cap_with_precedence_is_judged_by_the_cap_it_leaves() -> None:
    game = capped_at_fifteen()
    sets = (("max_mutable_rules", "20"), ("precedence", "prevails"))
    outcome = game.do(Propose(CARLA, K.ENACT, text="Twenty rules may stand.", sets=sets))
    assert outcome.ok, outcome


def test_a_sixteenth_rule_is_refused_with_the_count_after_the_change() -> None:
    game = capped_at_fifteen()
    refused = game.do(Propose(CARLA, K.ENACT, text="One too many."))
    assert refused.code == "too_many_mutable"
    assert refused.data == {"cap": 15, "count": 16}


def test_without_210_there_is_no_cap() -> None:
    game = capped_at_fifteen()
    game.state = repealed(game.state, 201)  # 14 mutable rules, under the cap of 15
    game.state = repealed(game.state, 210)  # 13, and no cap at all
    assert not mechanics.runs(game.state, Mechanic.CAP)
    state = game.state
    for n in range(3):  # enact three rules straight into the state: 16 mutable rules
        number = 900 + n
        state = state.with_rule(replace(state.rules[-1], identity=number, number=number))
    game.state = state
    assert game.state.mutable_count == 16
    assert game.do(Propose(CARLA, K.ENACT, text="A seventeenth.")).ok


# --- an imported ruleset names its carriers ----------------------------------------------------


def test_ruleset_toml_says_which_rules_carry_which_mechanic(tmp_path: Path) -> None:
    from referee import rulebook
    from tests.helpers import PLAYERS, T0

    (tmp_path / "ruleset.toml").write_text(
        'name = "Club"\nlanguage = "en"\nimmutable = ["1"]\n'
        'house_mechanics = ["turns", "turn", "voting", "ruleset_mail", "leaving"]\n'
        '[mechanics]\nappeals = "§ 2"\nwinning = ["1"]\n',
        encoding="utf-8",
    )
    for number, label, text in ((1, "§ 1", "Points win."), (2, "§ 2", "Appeals go to the chair.")):
        (tmp_path / f"{number:03}.md").write_text(
            f'+++\nnumber = {number}\nlabel = "{label}"\n+++\n{text}\n', encoding="utf-8"
        )
    (tmp_path / "003.md").write_text("+++\nnumber = 3\n+++\nDues are paid.\n", encoding="utf-8")
    ruleset = rulebook.load(str(tmp_path), "en")
    state = GameState(
        "Club", "en", T0, PLAYERS, ADA, ruleset.at(T0),
        carriers=ruleset.carriers, house_mechanics=ruleset.house_mechanics,
    )  # fmt: skip
    assert mechanics.owner(state, Mechanic.APPEALS) == state.rule_by_identity(2)
    assert mechanics.citation(state, Mechanic.APPEALS)["name"] == "§ 2"  # cited by its label
    assert mechanics.runs(state, Mechanic.TURNS)  # a house mechanic
    assert not mechanics.runs(state, Mechanic.DISSENT)  # nothing carries it, not a house one
    assert not mechanics.runs(state, Mechanic.DEPOSITION)
    assert mechanics.citation(state, Mechanic.TURNS)["state"] == "house"
    state = repealed(state, 2)
    assert not mechanics.runs(state, Mechanic.APPEALS)
    assert mechanics.citation(state, Mechanic.APPEALS) == {
        "name": "§ 2",
        "was": "",
        "state": "repealed",
    }
