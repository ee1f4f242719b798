"""Players' names compared as a reader sees them, so no newcomer passes for a player (201).

Names are what WINNER, CHAMPION and CROWN take and what the debate of rule 112 is signed with,
so a second "Bob Rossi" (or "Воb Rossi" with a Cyrillic В) would be indistinguishable from the
first. `key` reduces a name to what the eye reads: Unicode NFKC (fullwidth and mathematical
letters become plain ones), accents removed, the Cyrillic and Greek letters drawn like Latin
ones mapped to them (no maintained confusables library is installed, so `_LOOKALIKE` is the
table of the common ones, after Unicode's confusables.txt), case folded, and every non-letter
dropped. Pure.
"""

from __future__ import annotations

import difflib
import unicodedata

from referee.core.model import GameState, Player

# Cyrillic and Greek letters that look like Latin ones, upper and lower case (as in Unicode's
# confusables.txt); applied before case folding, since "Н" looks like "H" but "н" does not.
_LOOKALIKE = str.maketrans(
    {
        # Cyrillic capitals
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
        "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D",
        "Ԛ": "Q", "Ԝ": "W", "Ү": "Y", "Ӏ": "I",
        # Cyrillic small letters
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
        "ј": "j", "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ү": "y",
        "ь": "b",
        # Greek capitals
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        # Greek small letters
        "α": "a", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
        "χ": "x", "ε": "e",
        # Latin letters that read as others
        "ı": "i", "ȷ": "j", "ℓ": "l",
    }
)  # fmt: skip
CLOSE = 0.8  # difflib's ratio of two keys read as close ("Bob Rossi" / "Rob Rossi": 0.94)


def key(name: str) -> str:
    """The letters a reader sees in `name`: "Bob Rossi", "BOB  rossi.", "Böb Rоssi" (a
    Cyrillic о) and "Ｂｏｂ Ｒｏｓｓｉ" all give "bobrossi"."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = unicodedata.normalize("NFKC", text.translate(_LOOKALIKE)).casefold()
    return "".join(c for c in text if c.isalpha())


def same_name(state: GameState, name: str) -> Player | None:
    """The active player whose name reads as `name`, if any."""
    wanted = key(name)
    return next((p for p in state.active_players if key(p.name) == wanted), None)


def close_names(state: GameState, name: str) -> tuple[Player, ...]:
    """Active players whose name is close to `name` without being it: the same surname (or
    another word of the name in common), or a name a letter or two away."""
    wanted = key(name)
    words = {key(w) for w in name.split()} - {""}
    found = []
    for p in state.active_players:
        theirs = key(p.name)
        shared = words & ({key(w) for w in p.name.split()} | {key(p.surname)})
        near = difflib.SequenceMatcher(None, wanted, theirs).ratio() >= CLOSE
        if theirs != wanted and (any(len(w) > 2 for w in shared) or near):
            found.append(p)
    return tuple(found)
