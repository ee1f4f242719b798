"""Fixtures shared by the service and CLI tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.config import Settings, load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import T0

CONFIG = """
[game]
name = "Test Nomic"
address = "referee@nomic.example"
language = "{language}"
timezone = "Europe/Rome"
start = "2026-12-01T09:00:00+00:00"

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

[database]
url = "sqlite:///nomic.db"
"""


def write_config(folder: Path, language: str = "en") -> Path:
    path = folder / "game.toml"
    path.write_text(CONFIG.format(language=language), encoding="utf-8")
    return path


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(write_config(tmp_path))


@pytest.fixture
def referee(settings: Settings) -> Iterator[Referee]:
    store = Store(settings.database_url)
    try:
        yield Referee.create(store, settings, T0)
    finally:
        store.close()
