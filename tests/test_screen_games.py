"""A mail is for this game only (issue 15, item 1): the game's aliases count as its address,
and a mail another game of the same database applied acts there only (check `one_game`).

Driven by mail through `Referee.receive`, two games in one SQLite database.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from referee.config import ConfigError, Settings, load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import CONFIG
from tests.helpers import CARLA, DAY, T0, mail
from tests.sender_mail import outbox, reply_text

ALIAS = "nomic@games.example"


def settings_for(tmp_path: Path, extra: str = "") -> Settings:
    text = CONFIG.format(language="en").replace("[game]\n", f"[game]\n{extra}\n", 1)
    text = text.replace('url = "sqlite:///nomic.db"', f'url = "sqlite:///{tmp_path / "g.db"}"')
    path = tmp_path / "game.toml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path)


def proposal(to: str, cc: str = "", mid: str = "<p1@example.org>") -> bytes:
    headers = {"Cc": cc} if cc else {}
    raw = mail(
        CARLA,
        "PROPOSE ENACT\nEvery player says hello.\nEND",
        at=T0 + DAY / 24,
        message_id=mid,
        headers=headers,
    )
    return raw.replace(b"To: referee@nomic.example", f"To: {to}".encode(), 1)


def test_mail_to_an_alias_is_mail_to_the_game(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, f'aliases = ["{ALIAS.upper()}", "referee@nomic.example"]')
    assert settings.game.aliases == (ALIAS,)  # lower-cased, the address itself left out
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        referee.receive(proposal(ALIAS), T0 + DAY / 24)
        assert referee.state.proposal(301) is not None
        referee.receive(proposal("someone@else.example", mid="<p2@example.org>"), T0 + DAY / 12)
        assert "your mail is not addressed to this game" in reply_text(referee)
    finally:
        store.close()


@pytest.mark.parametrize("value", ['"nomic@games.example"', '["not an address"]', "[1]"])
def test_aliases_must_be_a_list_of_addresses(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match=r"\[game\] aliases"):
        settings_for(tmp_path, f"aliases = {value}")


def test_one_mail_acts_in_one_game_only(tmp_path: Path) -> None:
    first = settings_for(tmp_path)
    game = replace(first.game, name="Second Nomic", id="second", address="second@nomic.example")
    second = replace(first, game=game)
    store = Store(first.database_url)
    try:
        one = Referee.create(store, first, T0)
        two = Referee.create(store, second, T0)
        raw = proposal("referee@nomic.example", cc="second@nomic.example")
        one.receive(raw, T0 + DAY / 24)  # written to both games: the first to read it applies it
        assert one.state.proposal(301) is not None
        two.receive(raw, T0 + DAY / 24)
        assert two.state.proposal(301) is None
        answer = reply_text(two)
        assert "already taken by another game this referee keeps" in answer
        assert [m["In-Reply-To"] for m in outbox(two, "reply")] == ["<p1@example.org>"]
        # the same words in a new mail of Carla's, written to the second game, act there
        two.receive(proposal("second@nomic.example", mid="<p3@example.org>"), T0 + DAY / 12)
        assert two.state.proposal(301) is not None
    finally:
        store.close()
