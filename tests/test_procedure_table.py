"""The legality table is the one gate (202-215), and properties that would have caught issue 8.

For any reachable game: the table's refusal is the engine's refusal; QUIT by an active player is
accepted (114); an open appeal has a judge who may rule, or a King or deposed King who must act
first (212-214); no debate is shorter than the immutable minimum (112); every command line in a
mail gets exactly one line in the reply (203, 208).
"""

from __future__ import annotations

from datetime import timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.config import load_settings
from referee.core import engine, procedure
from referee.core.events import EVENT_TYPES, GiveRuling, Outcome, Quit, Tick
from referee.core.model import AppealKind, GameState
from referee.mail.commands import parse_commands
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import BOB, CARLA, T0, mail
from tests.test_engine_properties import COMMANDS, PROCEDURE_GAME, STEP, resolve, run

DOCS = Path(__file__).resolve().parents[1] / "docs" / "procedure.md"
GAMES = st.one_of(st.lists(STEP, min_size=1, max_size=50), PROCEDURE_GAME)


def test_every_command_has_one_row_and_the_docs_show_the_table() -> None:
    commands = {t for t in EVENT_TYPES if t is not Tick}
    assert {move.command for move in procedure.TABLE} == commands
    assert len(procedure.TABLE) == len(commands)
    assert procedure.markdown() in DOCS.read_text(encoding="utf-8"), (
        "docs/procedure.md is out of date: paste procedure.markdown() into it"
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GAMES, COMMANDS)
def test_the_tables_refusal_is_the_engines(steps: list[tuple[object, int]], extra: object) -> None:
    trace = run(steps)  # type: ignore[arg-type]
    state = trace[-1][2]
    command = resolve(extra, state)  # type: ignore[arg-type]
    barred = procedure.bar(state, command)  # type: ignore[arg-type]
    outcome = engine.decide(state, command, T0 + timedelta(days=400)).effects[0]
    assert isinstance(outcome, Outcome)
    if barred is not None:
        assert not outcome.ok and outcome.code == barred.code.value


def _judges_ok(state: GameState) -> None:
    for appeal in state.open_appeals:
        judge = state.judge_of(appeal)
        if judge is None:  # a King in office must name a Champion, or a deposed King crown one
            needs_champion = appeal.kind is AppealKind.ACCUSATION or state.king in appeal.parties
            assert (state.king is not None and needs_champion) or state.deposed is not None
            continue
        player = state.player(judge)
        assert player is not None and player.active
        assert procedure.bar(state, GiveRuling(judge, appeal.id, "Settled.")) is None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GAMES)
def test_in_any_reachable_state_quit_is_accepted_and_appeals_have_a_judge(
    steps: list[tuple[object, int]],
) -> None:
    trace = run(steps)  # type: ignore[arg-type]
    for _, _, state in trace:
        _judges_ok(state)
        for proposal in state.proposals:  # 112: at least the immutable week
            assert proposal.debate_ends - proposal.created_at >= timedelta(days=7)
    final = trace[-1][2]
    for player in final.active_players:
        if final.over:
            break
        outcome = engine.decide(final, Quit(player.email), T0 + timedelta(days=400)).effects[0]
        assert isinstance(outcome, Outcome) and outcome.ok, (player.email, outcome)


LINES = st.sampled_from(
    [
        "VOTE 301 YES",
        "VOTE 301 NO",
        "VOTE 301 maybe",
        "VOTE 999 YES",
        "STATUS",
        "SCORES",
        "AWARD 5",
        "RULE 202",
        "AGREE A1",
        "QUIT now",
        "EXTEND 3 DAYS",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=12))
def test_every_command_line_is_read_once_in_order(lines: list[str]) -> None:
    parsed = parse_commands(BOB, "move", "\n".join(lines))
    assert [p.line for p in parsed] == lines


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(LINES, min_size=1, max_size=8))
def test_every_command_line_gets_one_line_in_the_reply(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str]
) -> None:
    game = load_settings(write_config(tmp_path_factory.mktemp("reply")))
    store = Store("sqlite://")
    try:
        referee = Referee.create(store, game, T0)
        referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0)
        receipt = referee.receive(mail(BOB, "\n".join(lines)), T0 + timedelta(hours=1))
        assert receipt.commands == len(lines)
        raw = [r for r in store.outbox(referee.game_id) if r.kind == "reply"][-1].raw
        message = message_from_bytes(raw, policy=policy.default)
        assert isinstance(message, EmailMessage)
        body = message.get_body(("plain",))
        assert body is not None
        text = str(body.get_content())
        quoted = [line.removeprefix("> ") for line in text.splitlines() if line.startswith("> ")]
        assert quoted == lines  # one answer per line, in order
        verdicts = [line for line in text.splitlines() if line.startswith(("Done.", "Refused."))]
        assert len(verdicts) == len(lines)
    finally:
        store.close()
