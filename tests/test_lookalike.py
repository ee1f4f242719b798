"""Look-alike names and addresses by Unicode's confusables (issue 28, item 2; rule 201).

`Adɑ Lovelace` (U+0251), `Ada Lovelaϲe` (U+03F2) and `Ada Lօvelace` (U+0585) pass the
engine's own table of look-alikes (`names.key`); UTS #39 skeletons from the pinned data find
them, and an address whose local part looks like a player's. A look-alike's request names the
player in the King's prompt, and only a written `ADMIT N YES` admits it.
"""

from __future__ import annotations

import pytest

from referee.core import codec, engine, names
from referee.core.events import Admit, AskToJoin
from referee.core.model import GameState
from referee.core.notices import JoinPrompt, Notice
from referee.core.outcomes import Admitted, LookalikeNeedsWrittenYes, Outcome
from referee.core.step import Decision
from referee.core.threads import Thread
from referee.desk import prompts
from referee.mail import lookalike
from referee.service import Referee
from tests.helpers import ADA, BOB, DAY, T0
from tests.test_roster import EVE, join, last
from tests.test_service import plain

ISSUE_NAMES = ("Ad\u0251 Lovelace", "Ada Lovela\u03f2e", "Ada L\u0585velace")


def outcome(decision: Decision) -> object:
    return next(e for e in decision.effects if isinstance(e, Outcome)).payload


def prompt(decision: Decision) -> JoinPrompt:
    found = [
        e.payload
        for e in decision.effects
        if isinstance(e, Notice) and isinstance(e.payload, JoinPrompt)
    ]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("name", ISSUE_NAMES)
def test_the_issues_names_have_ada_lovelaces_skeleton(name: str) -> None:
    assert names.key(name) != names.key("Ada Lovelace")  # the engine's table misses them
    assert lookalike.name_key(name) == lookalike.name_key("Ada Lovelace")
    assert lookalike.name_key(name) != lookalike.name_key("Ada Lovelock")


def test_the_data_names_its_version() -> None:
    assert lookalike.version().startswith("confusables.txt 13.0")
    assert lookalike.skeleton("\u0251") == "a" and lookalike.skeleton("\u0585") == "o"


def test_a_look_alike_name_or_address_is_found_and_an_honest_one_is_not(
    referee: Referee,
) -> None:
    state = referee.state
    for name in ISSUE_NAMES:
        assert lookalike.lookalikes(state, name, EVE) == (ADA,), name
    local, domain = BOB.split("@")
    cyrillic = local.replace("o", "\u043e") + "@" + domain  # bоb@, a Cyrillic о
    assert lookalike.lookalikes(state, "Roberto Bianchi", cyrillic) == (BOB,)
    assert lookalike.lookalikes(state, "Eve Noether", EVE) == ()
    assert lookalike.lookalikes(state, "Ada Lovelock", "ada@other.example") == ()
    honest = lookalike.asking(state, EVE, "Eve Noether")
    assert honest == AskToJoin(EVE, "Eve Noether")  # the event games recorded before hold
    assert codec.event_to_data(honest) == {
        "type": "AskToJoin",
        "sender": EVE,
        "name": "Eve Noether",
    }


def asked(state: GameState, name: str) -> GameState:
    request = lookalike.asking(state, EVE, name)
    assert request.lookalikes == (ADA,) and request.confusables.startswith("confusables.txt")
    data = codec.event_to_data(request)
    assert data["confusables"] == request.confusables  # the record names the data
    assert codec.event_from_data(data) == request
    decision = engine.decide(state, request, T0 + DAY)
    shown = prompt(decision)
    assert shown.lookalike == [f"Ada Lovelace ({ADA})"]
    return decision.state


@pytest.mark.parametrize("name", ISSUE_NAMES)
def test_the_kings_bare_yes_does_not_admit_a_look_alike(referee: Referee, name: str) -> None:
    state = asked(referee.state, name)
    bare = prompts.infer(state, ADA, Thread.join(1), "yes")
    assert isinstance(bare, Admit) and bare.bare
    refused = outcome(engine.decide(state, bare, T0 + 2 * DAY))
    assert isinstance(refused, LookalikeNeedsWrittenYes)
    assert refused.lookalike == [f"Ada Lovelace ({ADA})"] and refused.number == 1
    # a bare no refuses it as always; a written yes admits it
    no = prompts.infer(state, ADA, Thread.join(1), "no")
    assert isinstance(no, Admit)
    assert isinstance(outcome(engine.decide(state, no, T0 + 2 * DAY)), Admitted)
    written = engine.decide(state, Admit(ADA, 1, True), T0 + 2 * DAY)
    assert isinstance(outcome(written), Admitted)
    assert written.state.player(EVE) is not None


def test_requests_without_a_look_alike_keep_their_record(referee: Referee) -> None:
    """A request and a bare yes with no look-alike are written as games recorded before
    wrote them: the state's digest of an older game is unchanged."""
    state = engine.decide(referee.state, AskToJoin(EVE, "Eve Noether"), T0 + DAY).state
    request = codec.to_data(state.requests[0])
    assert "lookalikes" not in request
    bare = prompts.infer(state, ADA, Thread.join(1), "yes")
    assert bare == Admit(ADA, 1, True)
    assert "bare" not in codec.event_to_data(bare)


def test_a_look_alike_joining_by_mail_is_named_to_the_king(referee: Referee) -> None:
    join(referee, "JOIN Ad\u0251 Lovelace", T0 + DAY / 24)
    assert "Look-alike" in plain(last(referee, "join_prompt", ADA))
