"""Games for the archive and site tests: the README's example games and an XSS probe (issue 9)."""

from __future__ import annotations

from pathlib import Path

from referee.config import Settings, load_settings
from referee.replay import read_mbox
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import CARLA, DAY, T0, mail

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PROBE = (
    "Players may write <script>window.__xss = 1</script> anything.\n\n"
    '<img src="x" onerror="window.__xss = 2"> <a href="javascript:window.__xss=3">look</a>'
)


def with_game_keys(config: Path, keys: str) -> None:
    """Add `keys` (TOML lines) to the [game] table of `config`."""
    text = config.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("start = "))
    config.write_text(text.replace(line, f"{line}\n{keys}", 1), encoding="utf-8")


def example_game(folder: Path, language: str, keys: str = "") -> Settings:
    """The README's example game (game-en / game-it) played into a database in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "game.toml"
    text = (EXAMPLES / f"game-{language}.toml").read_text(encoding="utf-8")
    config.write_text(text + '\n[database]\nurl = "sqlite:///nomic.db"\n', encoding="utf-8")
    if keys:
        with_game_keys(config, keys)
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        messages = read_mbox(EXAMPLES / f"game-{language}.mbox")
        assert settings.game.start is not None
        referee = Referee.create(store, settings, settings.game.start, render=False)
        for item in messages:
            assert item.at is not None
            referee.receive(item.raw, item.at)
        last = messages[-1].at
        assert last is not None
        referee.advance(last)
    finally:
        store.close()
    return settings


def probe_game(folder: Path) -> Settings:
    """A game whose only proposal carries a script and an onerror handler."""
    folder.mkdir(parents=True, exist_ok=True)
    settings = load_settings(write_config(folder))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0, render=False)
        referee.receive(
            mail(CARLA, f"PROPOSE ENACT\n{PROBE}\nEND", at=T0 + DAY / 24), T0 + DAY / 24
        )
        for who in ("ada@example.org", "bob@example.org", CARLA):
            at = T0 + DAY / 12
            referee.receive(mail(who, "VOTE 301 YES", at=at), at)
        referee.advance(T0 + 9 * DAY)
    finally:
        store.close()
    return settings
