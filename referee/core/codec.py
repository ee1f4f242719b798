"""Turn events and game states into JSON-ready data and back, for the event log (rules 101, 213).

The event log is the source of truth: every published result can be recomputed from it, which
is how a subject proves or disproves an accusation against the King (213).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from datetime import datetime
from fractions import Fraction
from functools import cache
from typing import Any

from referee.core import program
from referee.core.events import EVENT_TYPES, Event
from referee.core.model import GameState

_EVENTS_BY_NAME: dict[str, type] = {t.__name__: t for t in EVENT_TYPES}


def to_data(value: Any) -> Any:
    """A frozen dataclass tree as dicts, lists, strings and numbers."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is tuple:
        return [to_data(v) for v in value]
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = _field_names(kind)
        _OMITTED[kind] = _omitted(kind)
    if names is not _NOT_DATACLASS:
        omitted = _OMITTED[kind]
        if omitted is None:
            return {name: to_data(getattr(value, name)) for name in names}
        data = {
            name: to_data(getattr(value, name))
            for name in names
            if name not in omitted or getattr(value, name) != omitted[name]
        }
        if kind in _TAGGED:
            data["node"] = kind.__name__
        return data
    if isinstance(value, Fraction):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [to_data(v) for v in value]
    return value


# Values `to_data` gives back as they are, by their exact type
_PLAIN = frozenset({str, int, bool, float, type(None)})
_NOT_DATACLASS: tuple[str, ...] = ("not a dataclass",)
# Each class's field names, in order, or _NOT_DATACLASS
_FIELDS: dict[type, tuple[str, ...]] = {}


# Per class: the fields left out of the data while at their default (`metadata` "omit"),
# and every field of a node of a mechanics block (tagged with its class); None: neither
_OMITTED: dict[type, dict[str, Any] | None] = {}
_TAGGED: dict[type, str] = {}


def _omitted(kind: type) -> dict[str, Any] | None:
    if not dataclasses.is_dataclass(kind):
        return None
    if kind.__module__ == program.__name__:
        _TAGGED[kind] = kind.__name__
        return {}
    omitted = {f.name: f.default for f in dataclasses.fields(kind) if f.metadata.get("omit")}
    return omitted or None


def _field_names(kind: type) -> tuple[str, ...]:
    if dataclasses.is_dataclass(kind):
        return tuple(f.name for f in dataclasses.fields(kind))
    return _NOT_DATACLASS


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_data(data: Any, kind: Any) -> Any:
    """The inverse of `to_data`, guided by the type annotations."""
    origin = typing.get_origin(kind)
    if origin in (types.UnionType, typing.Union):
        options = typing.get_args(kind)
        if data is None and type(None) in options:
            return None
        if isinstance(data, dict) and "node" in data:  # a node of a mechanics block
            node = {o.__name__: o for o in options if isinstance(o, type)}[data["node"]]
            return from_data({k: v for k, v in data.items() if k != "node"}, node)
        for option in options:
            if option is type(None):
                continue
            return from_data(data, option)
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_data(item, args[0]) for item in data)
        return tuple(from_data(item, arg) for item, arg in zip(data, args, strict=True))
    if kind is Any:
        return data
    if isinstance(kind, type):
        if dataclasses.is_dataclass(kind):
            hints = _hints(kind)
            names = {f.name for f in dataclasses.fields(kind)}
            return kind(**{k: from_data(v, hints[k]) for k, v in data.items() if k in names})
        if issubclass(kind, enum.Enum):
            return kind(data)
        if kind is datetime:
            return datetime.fromisoformat(data)
        if kind is Fraction:
            return Fraction(data)
    return data


def event_to_data(event: Event) -> dict[str, Any]:
    data: dict[str, Any] = to_data(event)
    return {"type": type(event).__name__, **data}


def event_from_data(data: dict[str, Any]) -> Event:
    body = dict(data)
    cls = _EVENTS_BY_NAME[body.pop("type")]
    event: Event = from_data(body, cls)
    return event


def state_to_data(state: GameState) -> dict[str, Any]:
    data: dict[str, Any] = to_data(state)
    return data


def state_json(state: GameState) -> str:
    """The state's snapshot text: exactly `json.dumps(state_to_data(state),
    ensure_ascii=False, separators=(",", ":"))`, made from the text kept for each member of
    the state's tuples (a proposal, a rule, a player) that is the same object as at the last
    call. A snapshot is written every so many events, and the state's closed proposals and
    old rules, which grow with the game, are the same objects from one snapshot to the next.
    Only the last state's members are kept."""
    known = _MEMBER_TEXTS[0] if _MEMBER_TEXTS else {}
    kept: dict[int, tuple[object, str]] = {}
    parts = []
    omitted = _omitted(GameState) or {}
    for name in _field_names(GameState):
        value = getattr(state, name)
        if name in omitted and value == omitted[name]:
            continue
        if type(value) is tuple:
            items = []
            for item in value:
                found = known.get(id(item))
                if found is None or found[0] is not item:
                    found = (item, _json(to_data(item)))
                kept[id(item)] = found
                items.append(found[1])
            text = "[" + ",".join(items) + "]"
        else:
            text = _json(to_data(value))
        parts.append(f"{_json(name)}:{text}")
    _MEMBER_TEXTS[:] = [kept]
    return "{" + ",".join(parts) + "}"


# The members of the last state `state_json` wrote and their texts, by identity
_MEMBER_TEXTS: list[dict[int, tuple[object, str]]] = []


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def state_from_data(data: dict[str, Any]) -> GameState:
    state: GameState = from_data(data, GameState)
    return state
