"""The operator's config: defaults, and one clear message for each mistake (105, 201)."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config import ConfigError, load_settings

GOOD = """
[game]
name = "Nomic del Re"
address = "referee@nomic.example"

[[players]]
name = "Ada Lovelace"
email = "Ada@Example.org"
king = true

[[players]]
name = "Carla De Santis"
email = "carla@example.org"
surname = "De Santis"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "game.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, GOOD))
    assert settings.game.language == "it" and settings.game.ruleset == "builtin"
    assert settings.database_url == f"sqlite:///{tmp_path / 'nomic.db'}"
    assert settings.players[0].email == "ada@example.org"
    assert settings.players[0].surname == "Lovelace"
    assert settings.players[1].surname == "De Santis"
    assert settings.king.name == "Ada Lovelace"
    assert settings.imap is None and settings.smtp is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[game2]\n", "unknown section"),
        ("[database]\nurl = 'mysql://x'\n", "url must be"),
        ("[parameters]\nwinning_score = 0\n", "winning_score"),
        ("[parameters]\nspeed = 3\n", "unknown key 'speed'"),
        ("[imap]\nhost = 'h'\nsecurity = 'ssl'\n", "security"),
        ("[imap]\nhost = 'h'\npassword_env = 'NOMIC_TEST_UNSET_VARIABLE'\n", "not set"),
        ("[smtp]\nhost = 'h'\ntimeout = -1\n", "timeout"),
    ],
)
def test_mistakes_are_named(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, GOOD + extra))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("king = true", "king = false"), "exactly one player"),
        (GOOD.replace("carla@example.org", "ada@example.org"), "twice"),
        (GOOD.replace('address = "referee@nomic.example"', 'address = "nope"'), "not an email"),
        (GOOD.replace('name = "Nomic del Re"', 'name = "N"\nlanguage = "fr"'), "language"),
        (GOOD.replace('name = "Nomic del Re"', 'name = "N"\ntimezone = "Mars/Base"'), "time zone"),
        (GOOD.replace('name = "Nomic del Re"', 'name = "N"\nstart = "yesterday"'), "start"),
        ("not toml at all [", "not valid TOML"),
        ("[game]\nname='x'\naddress='a@b.c'\n", "at least one player"),
    ],
)
def test_bad_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "absent.toml")


def test_the_documented_example_config_loads(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[1] / "deploy" / "config.example.toml"
    settings = load_settings(example)
    assert settings.game.name == "Nomic del Re" and settings.king.email == "ada@example.org"
    documented = example.read_text(encoding="utf-8")
    from referee.core.params import SPECS

    for spec in SPECS:  # every parameter is documented with its default
        assert f"# {spec.name} = {spec.default}" in documented
