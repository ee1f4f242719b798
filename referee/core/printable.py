"""Control characters out of everything the referee writes for people (rules 107, 205, 213).

A proposal is kept exactly as the player wrote it (107): the event log and the store hold every
byte. What goes out (mail, the archive, the website, its feed) shows a C0 control (other than
tab and the line ends) or DEL as its visible Control Picture (ESC becomes "␛"), and drops a C1
control (U+0080-U+009F), which has no picture and which terminals and some readers still obey
(U+0085 even breaks a line). NUL or ESC in a proposal can then neither break an XML feed nor
colour a terminal nor forge a line break in a reader's mail.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _shown(found: re.Match[str]) -> str:
    code = ord(found.group(0))
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return ""  # C1: dropped


def printable(text: str) -> str:
    """`text` with every control but tab, LF and CR shown as its picture (C0, DEL) or dropped."""
    return _CONTROL.sub(_shown, text) if _CONTROL.search(text) else text


def printable_data(value: Any) -> Any:
    """`printable` applied to every string in a JSON-like value (dicts, lists, tuples)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Mapping):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(printable_data(v) for v in value)
    return value
