"""Names and addresses that look alike, by Unicode's confusables (UTS #39 skeletons; rule 201).

`names.key` in the engine folds the common look-alikes of Latin letters (Cyrillic, Greek) and
refuses a newcomer whose name reads as a player's. Unicode's table holds thousands more
(`Adɑ` with a Latin alpha, `Lovelaϲe` with a Greek lunate sigma, `Lօvelace` with an Armenian
oh): here a whole name, and an address's local part, is reduced to its UTS #39 skeleton, and a
newcomer whose skeleton is a player's is a look-alike. A look-alike is not refused (a real
"Ada Lovelace" may exist twice), but never admitted silently: the engine names it in the King's
prompt and wants a written `ADMIT N YES` (`roster.admit`).

The data is Unicode's confusables.txt as the pinned `confusables` package ships it (see
pyproject.toml); `version()` is the version the file names, and a request to join that looks
like a player carries it into the event log, so the record names the data a decision was made
with and a replay that reads another version can tell. Pure but for reading that file once.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib import resources

from referee.core.events import AskToJoin
from referee.core.model import GameState
from referee.core.names import mailbox_of

_PACKAGE, _FILE = "confusables", "assets/confusables.txt"
_ROW = re.compile(r"^([0-9A-F ]+);\s*([0-9A-F ]+);\s*MA\b")
_VERSION = re.compile(r"^#\s*Version:\s*(\S+)", re.M)


@cache
def _table() -> tuple[dict[str, str], str]:
    """Each confusable character's prototype, and the data's version ("confusables.txt 13.0.0")."""
    text = (resources.files(_PACKAGE) / _FILE).read_text(encoding="utf-8-sig")
    found = _VERSION.search(text)
    if found is None:  # pragma: no cover - the pinned file names its version
        raise RuntimeError("confusables.txt names no version")
    prototypes: dict[str, str] = {}
    for line in text.splitlines():
        row = _ROW.match(line)
        if row is not None:
            source = "".join(chr(int(c, 16)) for c in row.group(1).split())
            prototypes[source] = "".join(chr(int(c, 16)) for c in row.group(2).split())
    return prototypes, f"confusables.txt {found.group(1)}"


def version() -> str:
    """The confusables data this referee decides with, as the record names it."""
    return _table()[1]


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, each character replaced by its prototype, NFD again."""
    prototypes = _table()[0]
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(prototypes.get(c, c) for c in decomposed))


def name_key(name: str) -> str:
    """A name's skeleton, its spaces collapsed and its case folded (twice: a capital's
    prototype may itself fold to another letter's)."""
    once = skeleton(" ".join(name.split())).casefold()
    return skeleton(once).casefold()


def lookalikes(state: GameState, name: str, email: str) -> tuple[str, ...]:
    """The active players whose name, or whose address (its mailbox), has the skeleton of the
    newcomer's, in the order of the table; the newcomer's own address aside."""
    wanted_name = name_key(name)
    wanted_mailbox = name_key(mailbox_of(email))
    return tuple(
        p.email
        for p in state.active_players
        if p.email != email
        and (name_key(p.name) == wanted_name or name_key(mailbox_of(p.email)) == wanted_mailbox)
    )


def asking(state: GameState, sender: str, name: str) -> AskToJoin:
    """The confirmed request to join as the event log keeps it: with the players it looks
    like and the version of the data that found them. With none found it is the event it was
    before look-alikes were sought, so the mail of games recorded before replays to the same
    record (the referee's version, in each link, pins the data: pyproject.toml)."""
    found = lookalikes(state, name, sender)
    return AskToJoin(sender, name, found, version() if found else "")
