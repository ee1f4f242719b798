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
import operator
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

GENESIS = "0" * 64  # the head before the first link
# The state's digest keeps the hash before a field once this many bytes were hashed since the
# last one kept: fewer copies of the hash on each link, and at most this many bytes hashed
# again to find a field's start when a change is first found in it
KEPT_EVERY = 2048

# The header of every mail the referee sends that names the link it belongs to (213).
CHAIN_HEADER = b"X-Nomic-Chain: "
# Written when a mail is built, replaced by the link's number and head when the unit of work
# that queued the mail makes its link: the link binds the mail's cause, not its bytes.
CHAIN_PENDING = CHAIN_HEADER + b"(the link this mail belongs to)"


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


class _Field:
    """One field of the state as last hashed: its value, the UTF-8 `repr` of each member (a
    tuple field) or of the value, the hash before its `name=` and, for the field a change was
    found in, the hash before each member (`marks`), so the next change resumes there."""

    __slots__ = ("chunk", "joined", "marks", "start", "texts", "value")

    def __init__(self, value: object, texts: list[bytes], start: Any) -> None:
        self.value = value
        self.texts = texts  # a tuple field's members' texts; otherwise the value's, alone
        # The hash of everything before this field's `name=`, or None where not kept (see
        # `StateDigest._start_of`)
        self.start = start
        # The hash before member k (k = len: before the `)`), where kept
        self.marks: list[Any] | None = None
        self.joined: bytes | None = None  # the whole field's text after `name=`, once made
        self.chunk: bytes | None = None  # `name=` and that text, once made


def _closing(count: int) -> bytes:
    return b"()" if count == 0 else b",)" if count == 1 else b")"


def _joined(texts: list[bytes]) -> bytes:
    return b"(" + b", ".join(texts) + _closing(len(texts)) if texts else b"()"


def _same_members(before: tuple[object, ...], after: tuple[object, ...]) -> int:
    """How many leading members the two tuples share, by identity."""
    same = list(map(operator.is_, before, after))
    try:
        return same.index(False)
    except ValueError:
        return len(same)


class StateDigest:
    """The SHA-256 of a frozen state's `repr`, hashing only the text after the first part that
    changed since the last digest (213).

    A state is a frozen dataclass whose tuples are rebuilt on each change while their members
    stay the same objects. The text of a member (a proposal, a rule, a player) is made once and
    kept while it is part of the state, and the hash of the text before each field, and before
    each member of the field a change was last found in, is kept too: a vote changes the last
    proposal, so the next digest resumes from the hash before it and hashes only the text after
    it, instead of the whole state, whose text grows with the game. The text hashed is exactly
    `repr(state)` (a test holds it to that). Only the current state's parts are kept: memory
    grows with the state, never with the game's length.
    """

    def __init__(self) -> None:
        self._kind: type | None = None
        self._names: tuple[str, ...] = ()
        self._headers: tuple[bytes, ...] = ()  # each field's `, name=`
        self._fields: list[_Field] = []
        self._end: Any = None  # the hash of the whole text but its closing `)`

    def __call__(self, state: object) -> str:
        self._update(state)
        final = self._end.copy()
        final.update(b")")
        return str(final.hexdigest())

    def text(self, state: object) -> str:
        """`repr(state)`, from the parts kept since the last call where they are the same
        objects."""
        self._update(state)
        parts = [f"{type(state).__qualname__}(".encode()]
        for index, (name, field) in enumerate(zip(self._names, self._fields, strict=True)):
            parts.append(self._header(index, name))
            parts.append(self._whole(field))
        parts.append(b")")
        return b"".join(parts).decode("utf-8")

    @staticmethod
    def _header(index: int, name: str) -> bytes:
        return f"{', ' if index else ''}{name}=".encode()

    @staticmethod
    def _whole(field: _Field) -> bytes:
        if type(field.value) is not tuple:
            return field.texts[0]
        if field.joined is None:
            field.joined = _joined(field.texts)
        return field.joined

    def _update(self, state: object) -> None:
        kind = type(state)
        if kind is not self._kind:
            shown_fields = dataclasses.fields(state)  # type: ignore[arg-type]
            self._names = tuple(f.name for f in shown_fields if f.repr)
            self._headers = tuple(self._header(i, n) for i, n in enumerate(self._names))
            self._kind = kind
            self._fields = []
        names = self._names
        old = self._fields
        count = len(names)
        values = [getattr(state, name) for name in names] if count else []
        # The first field whose text may differ, and its first member that may
        first = 0
        member = 0
        while first < count and old:
            field = old[first]
            value = values[first]
            before = field.value
            if value is before:
                first += 1
                continue
            if type(value) is tuple and type(before) is tuple:
                member = _same_members(before, value)
                if member == len(before) == len(value):
                    field.value = value  # the same members: the same text
                    first += 1
                    continue
                break
            if (
                type(value) is not tuple
                and type(before) is not tuple
                and repr(value).encode("utf-8") == field.texts[0]
            ):
                field.value = value
                first += 1
                continue
            member = 0
            break
        if old and first == count:
            return
        headers = self._headers
        if not old:
            hasher = hashlib.sha256(f"{kind.__qualname__}(".encode())
            fields: list[_Field] = []
            since = KEPT_EVERY  # the first field's start is kept
        else:
            fields = old[:first]
            start = self._start_of(first)
            hasher = start.copy()
            since = 0
        pending: list[bytes] = []  # texts of the fields after the first change, to hash at once
        for index in range(first, count):
            value = values[index]
            header = headers[index]
            if old and index == first:
                if type(value) is not tuple:
                    field = _Field(value, [repr(value).encode("utf-8")], old[first].start)
                    hasher.update(header)
                    hasher.update(field.texts[0])
                else:
                    field = self._resume(old[first], value, member, header)
                    hasher = field.marks[-1].copy()  # type: ignore[index]
                    hasher.update(_closing(len(value)))
                since = KEPT_EVERY  # hashed from a kept mark: keep the next field's start
                fields.append(field)
                continue
            # A field after the first change: its start is kept only every KEPT_EVERY bytes
            if since >= KEPT_EVERY:
                if pending:
                    hasher.update(b"".join(pending))
                    pending = []
                start = hasher.copy()
                since = 0
            else:
                start = None
            kept = old[index] if old else None
            if kept is not None and kept.value is value and kept.chunk is not None:
                field = kept  # the same value: the same text (the most common case)
                field.start = start
                field.marks = None  # the hashes before its members, kept no more
                chunk = kept.chunk
            else:
                if type(value) is not tuple:
                    if kept is not None and kept.value is value:
                        field = kept  # the same value: the same text
                        field.start = start
                    else:
                        field = _Field(value, [repr(value).encode("utf-8")], start)
                else:
                    field = self._later(kept, value, start)
                chunk = self._chunk(field, header)
            pending.append(chunk)
            since += len(chunk)
            fields.append(field)
        if pending:
            hasher.update(b"".join(pending))
        self._fields = fields
        self._end = hasher

    def _start_of(self, index: int) -> Any:
        """The hash before field `index`'s `name=`: kept, or made again from the nearest field
        before it whose start is kept (fewer than KEPT_EVERY bytes before it), and kept."""
        fields = self._fields
        field = fields[index]
        if field.start is not None:
            return field.start
        kept = index - 1
        while fields[kept].start is None:
            kept -= 1
        hasher = fields[kept].start.copy()
        headers = self._headers
        hasher.update(b"".join(self._chunk(fields[i], headers[i]) for i in range(kept, index)))
        field.start = hasher
        return hasher

    def _chunk(self, field: _Field, header: bytes) -> bytes:
        """A field's whole text with its `name=` before it, made once while it is the same."""
        if field.chunk is None:
            field.chunk = header + self._whole(field)
        return field.chunk

    def _later(self, before: _Field | None, value: tuple[object, ...], start: Any) -> _Field:
        """A tuple field after the first change: its text is hashed whole, so the hash before
        each of its members is not kept."""
        if before is not None and type(before.value) is tuple:
            same = before.value is value
            member = len(value) if same else _same_members(before.value, value)
            if same or member == len(before.value) == len(value):
                before.value = value
                before.start = start
                before.marks = None
                return before
            return _Field(value, self._texts(before, value, member), start)
        return _Field(value, self._texts(None, value, 0), start)

    def _resume(
        self, before: _Field, value: tuple[object, ...], member: int, header: bytes
    ) -> _Field:
        """The field a change was found in, from its first changed member: the hash before
        each member from there on (`marks`), the kept ones before it. When the hash before
        that member was not kept (the text before it changed since), the members before it
        are hashed again in one piece."""
        texts = self._texts(before, value, member)
        marks = before.marks
        mark = marks[member] if marks is not None else None
        if marks is None or mark is None:
            mark = before.start.copy()
            mark.update(header)
            if member:
                mark.update(b"(" + b", ".join(texts[:member]))
            kept: list[Any] = [None] * member
            kept.append(mark)
        else:
            kept = marks[: member + 1]
        hasher = mark.copy()
        for position in range(member, len(value)):
            hasher.update(b", " if position else b"(")
            hasher.update(texts[position])
            kept.append(hasher.copy())
        field = _Field(value, texts, before.start)
        field.marks = kept
        return field

    @staticmethod
    def _texts(before: _Field | None, value: tuple[object, ...], member: int) -> list[bytes]:
        """The members' texts, the first `member` ones kept from `before`, the rest found in
        `before` by identity or made."""
        if before is None or type(before.value) is not tuple:
            return [repr(item).encode("utf-8") for item in value]
        old_items: tuple[object, ...] = before.value
        known = {
            id(item): (item, text)
            for item, text in zip(old_items[member:], before.texts[member:], strict=True)
        }
        texts = before.texts[:member]
        for item in value[member:]:
            found = known.get(id(item))
            texts.append(
                found[1] if found is not None and found[0] is item else repr(item).encode("utf-8")
            )
        return texts
