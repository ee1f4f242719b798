"""Players' names compared as a reader sees them, so no newcomer passes for a player (201).

Names are what WINNER, CHAMPION and CROWN take and what the debate of rule 112 is signed with,
so a second "Bob Rossi" (or "Воb Rossi" with a Cyrillic В) would be indistinguishable from the
first. `key` reduces a name to what the eye reads: Unicode NFKC (fullwidth and mathematical
letters become plain ones), accents removed, the Cyrillic and Greek letters drawn like Latin
ones mapped to them (no maintained confusables library is installed, so `_LOOKALIKE` is the
table of the common ones, after Unicode's confusables.txt), case folded, and every non-letter
dropped. Pure.

A name is also written into mail headers (`From: Bob Rossi via Game`), so `unsafe` finds what a
name may not hold: the characters that would end a display name and start an address or a
second mailbox (`<`, `>`, `@`, `"`, `,`, `;`) and control characters (an apostrophe stays:
D'Amico). `mailbox_of` is the mailbox an address reaches, "+tag" and capitals aside: one
mailbox holds one seat (201).
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
# What would end a display name in a header and begin an address or another mailbox
_UNSAFE = frozenset('<>@",;')
# Unicode's bidirectional classes of the embedding, override and isolate controls and marks
_BIDI_CONTROLS = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
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


def unsafe(name: str) -> str:
    """The characters of `name` a display name may not hold, in order, each once ("" if none):
    the specials that start an address or another mailbox, control characters, line and
    paragraph separators, and the controls that reorder text (a right-to-left override). The
    joiners some scripts spell names with (U+200C, U+200D) stay."""
    found: list[str] = []
    for c in name:
        bad = (
            c in _UNSAFE
            or unicodedata.category(c) in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp")
            or unicodedata.bidirectional(c) in _BIDI_CONTROLS
        )
        if bad and c not in found:
            found.append(c)
    return "".join(found)


def mailbox_of(address: str) -> str:
    """The mailbox an address reaches: lower-case, without a "+tag" in its local part."""
    local, at, domain = address.strip().lower().rpartition("@")
    if not at:
        return domain
    return f"{local.split('+', 1)[0] or local}@{domain}"


def same_mailbox(one: str, other: str) -> bool:
    return mailbox_of(one) == mailbox_of(other)


def seat_of(state: GameState, address: str) -> Player | None:
    """The active player, other than `address` itself, whose mailbox `address` reaches."""
    return next(
        (p for p in state.active_players if p.email != address and same_mailbox(p.email, address)),
        None,
    )
