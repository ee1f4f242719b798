"""Control characters out of everything the referee writes for people (rules 107, 205, 213).

A proposal is kept exactly as the player wrote it (107): the event log and the store hold every
byte. What goes out (mail, the archive, the website, its feed) shows a C0 control (other than
tab and the line ends) or DEL as its visible Control Picture (ESC becomes "␛"), and drops a C1
control (U+0080-U+009F), which has no picture and which terminals and some readers still obey
(U+0085 even breaks a line). NUL or ESC in a proposal can then neither break an XML feed nor
colour a terminal nor forge a line break in a reader's mail.

The invisible format characters are shown by name, as "⟨U+202E⟩": the direction controls
(U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), which reorder what a reader sees (a
winning score of 52 between U+202E and U+202C reads as 25), and the zero-width characters
(U+200B-U+200D, U+2060, U+FEFF), which hide a difference between two texts that look alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

_CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
    "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"  # direction
    "\u200b-\u200d\u2060\ufeff]"  # zero width
)


def _shown(found: re.Match[str]) -> str:
    code = ord(found.group(0))
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if code > 0x9F:
        return f"\u27e8U+{code:04X}\u27e9"  # ⟨U+202E⟩: a format character, named
    return ""  # C1: dropped


def printable(text: str) -> str:
    """`text` with every control but tab, LF and CR shown as its picture (C0, DEL) or dropped,
    and every direction or zero-width character shown by its code point."""
    return _CONTROL.sub(_shown, text) if _CONTROL.search(text) else text


_PLAIN = (int, float, bool, type(None))  # nothing in them to show
# Values given back as they are, by their exact type: numbers, None, moments
_OPAQUE = frozenset((int, float, bool, type(None), datetime, date))
_search = _CONTROL.search


def printable_data(value: Any) -> Any:
    """`printable` applied to every string in a JSON-like value (dicts, lists, tuples)."""
    kind = type(value)
    if kind is str:
        return _CONTROL.sub(_shown, value) if _search(value) else value
    if kind in _OPAQUE:
        return value
    if kind is dict:  # a string or a number in it is seen here, not by a call of its own
        out = {}
        for key, item in value.items():
            if type(key) is str:
                if _search(key):
                    key = _CONTROL.sub(_shown, key)
            elif type(key) not in _OPAQUE:
                key = printable_data(key)
            kind = type(item)
            if kind is str:
                if _search(item):
                    item = _CONTROL.sub(_shown, item)
            elif kind not in _OPAQUE:
                item = printable_data(item)
            out[key] = item
        return out
    if kind is list:
        return [
            (_CONTROL.sub(_shown, v) if _search(v) else v)
            if type(v) is str
            else v
            if type(v) in _OPAQUE
            else printable_data(v)
            for v in value
        ]
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Mapping):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(printable_data(v) for v in value)
    return value
