"""The hash chain over everything that decides the game, so a falsified result shows (213).

Each link binds the previous head, what happened (an inbound message, by the SHA-256 of its
raw bytes as received, or a deadline), when it took effect (and, for a mail read only after a
later event was logged, when it was delivered), the events it caused, the version of the
referee that decided them and a digest of the state after them. The head of a link is
the SHA-256 of its canonical JSON record, which holds the previous head: changing, removing,
reordering or inserting any one link changes every later head. Pure: stdlib only, no I/O.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

GENESIS = "0" * 64  # the head before the first link


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_ESCAPED_FROM = re.compile(rb"(?m)^>+(?=From )")


def canonical_mail(raw: bytes) -> bytes:
    """A message's bytes as every mbox and Maildir copy of it agrees: line ends `\n`, no
    trailing blank lines, and `>From ` (an mbox's escape) read as `From `. The link binds
    these, so a player's mbox of the mail verifies against the message the server delivered
    with CRLF line ends (a `>` added or removed before a `From ` line is the one change that
    does not show)."""
    return _ESCAPED_FROM.sub(b"", line_form(raw))


def line_form(raw: bytes) -> bytes:
    """A message's bytes with line ends `\n` and no trailing blank lines, every `>` kept: the
    form a record writes (its `>From ` lines are the player's own, never an escape to undo)."""
    return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").rstrip(b"\n")


def mail_digest(raw: bytes) -> str:
    return digest(canonical_mail(raw))


def canonical(value: Any) -> str:
    """The one JSON spelling of a value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def record(
    prev: str,
    seq: int,
    kind: str,
    at: datetime,
    raw_digest: str | None,
    events: Sequence[dict[str, Any]],
    version: str,
    state_digest: str,
    auth: dict[str, Any] | None = None,
    delivered: datetime | None = None,
) -> str:
    """The canonical record of one link (the text its head is the digest of). `auth` is the
    sender's authentication verdict as intake found it (`ok`, `why`), kept so that `verify`
    decides as intake did when the DKIM keys have left the DNS. `delivered` is when a mail was
    delivered, given only when that is not the time it took effect (`at`): it was read after
    a later event had been logged, and took effect at that event's time."""
    fields: dict[str, Any] = {
        "prev": prev,
        "seq": seq,
        "kind": kind,
        "at": at.isoformat(),
        "raw": raw_digest,
        "events": list(events),
        "version": version,
        "state": state_digest,
    }
    if auth is not None:
        fields["auth"] = auth
    if delivered is not None and delivered != at:
        fields["delivered"] = delivered.isoformat()
    return canonical(fields)


def delivered_of(text: str) -> datetime | None:
    """When the mail of a link's record was delivered, if not when it took effect: the
    record's `delivered` (see `record`); None when the record holds none."""
    try:
        fields = json.loads(text)
        value = fields.get("delivered") if isinstance(fields, dict) else None
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def head_of(text: str) -> str:
    return digest(text.encode("utf-8"))


def shown(seq: int, head: str) -> str:
    """How a link is named in mail, `status`, the archive and the site: `link 12 3fa9…`."""
    return f"{seq} {head}"


class StateDigest:
    """The SHA-256 of a frozen state's `repr`, reusing the text of every part that did not
    change since the last digest (213).

    A state is a frozen dataclass whose tuples are rebuilt on each change while their members
    stay the same objects, so the `repr` of a proposal, a rule or a player is made once and
    kept while that object is part of the state, and a tuple the change left alone (the rules,
    when a vote is cast) is taken whole. The text hashed is exactly `repr(state)` (a test holds
    it to that), at a fraction of the cost once the game has many rules and proposals. Only
    the current state's parts are kept: memory never grows with the game.
    """

    def __init__(self) -> None:
        # Each tuple field's last value, its text and its members' texts by identity
        self._fields: dict[str, tuple[tuple[object, ...], str, dict[int, tuple[object, str]]]]
        self._fields = {}
        self._names: dict[type, tuple[str, ...]] = {}

    def __call__(self, state: object) -> str:
        return digest(self.text(state).encode("utf-8"))

    def text(self, state: object) -> str:
        """`repr(state)`, from the parts remembered since the last call where they are the
        same objects."""
        kind = type(state)
        names = self._names.get(kind)
        if names is None:
            shown_fields = dataclasses.fields(state)  # type: ignore[arg-type]
            names = self._names[kind] = tuple(f.name for f in shown_fields if f.repr)
        fields = []
        kept: dict[str, tuple[tuple[object, ...], str, dict[int, tuple[object, str]]]] = {}
        for name in names:
            value = getattr(state, name)
            if type(value) is tuple:
                before = self._fields.get(name)
                if before is None or before[0] is not value:
                    parts: dict[int, tuple[object, str]] = {}
                    shown = self._tuple(value, before[2] if before else {}, parts)
                    before = (value, shown, parts)
                kept[name] = before
                fields.append(f"{name}={before[1]}")
            else:
                fields.append(f"{name}={value!r}")
        self._fields = kept
        return f"{kind.__qualname__}({', '.join(fields)})"

    @staticmethod
    def _tuple(
        items: tuple[object, ...],
        known: dict[int, tuple[object, str]],
        kept: dict[int, tuple[object, str]],
    ) -> str:
        shown = []
        for item in items:
            found = known.get(id(item))
            if found is None or found[0] is not item:
                found = (item, repr(item))
            kept[id(item)] = found
            shown.append(found[1])
        if len(shown) == 1:
            return f"({shown[0]},)"
        return f"({', '.join(shown)})"
