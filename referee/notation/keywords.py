"""The notation's keywords in English and Italian, read once from keywords.toml (issue 26).

English always works; a game in Italian also reads the Italian words. A word in capitals that
is no keyword of the game's languages is read as an unknown word, and refused where it stands.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

LANGUAGES = ("en", "it")


@cache
def table() -> dict[str, dict[str, tuple[str, ...]]]:
    """keyword -> language -> the words that spell it."""
    text = resources.files("referee.notation").joinpath("keywords.toml").read_text("utf-8")
    data = tomllib.loads(text)
    return {key: {lang: tuple(words) for lang, words in row.items()} for key, row in data.items()}


@cache
def words(language: str) -> dict[str, str]:
    """word -> keyword, for a game in `language` (English always, its own language too). A
    word both languages spell (Italian `PER` is FOR, English `PER` in `LIMIT n PER day`) means
    the game's own; the grammar takes FOR there too, so the English line still reads."""
    found: dict[str, str] = {}
    for lang in dict.fromkeys((language, "en")):
        for key, row in table().items():
            for word in row.get(lang, ()):
                found.setdefault(word, key)
    return found


def spelled(keyword: str, language: str) -> str:
    """How `keyword` is written in `language` (its first word there, else English)."""
    row = table().get(keyword, {})
    spelled_as = row.get(language) or row.get("en") or (keyword,)
    return spelled_as[0]


def block_markers() -> frozenset[str]:
    """The words of the line that opens a block, in every language."""
    return frozenset(w for row in table()["MECHANICS"].values() for w in row)
