"""Render effects into mail: Jinja2 templates in Markdown, sent as text/plain + sanitised HTML.

Serves rules 107 (circulation), 203 (results), 205 (ruleset and scores) and every reply.
Player-written text never reaches a reader's client as markup: in the HTML rendering every
value a template prints becomes an opaque token, Markdown is converted, and only then is each
token replaced by the value's HTML-escaped text; nh3 then sanitises the whole as a second guard.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
import markdown
import nh3
from markupsafe import Markup

from referee.mail.commands import help_rows
from referee.resources import data_folder

_TOKEN = re.compile(r"zq(\d+)qz")


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str


def templates_folder() -> Path:
    return data_folder("templates")


class _Tokens:
    """Collects the values printed during one HTML rendering."""

    def __init__(self) -> None:
        self.values: list[str] = []

    def finalize(self, value: Any) -> Any:
        if isinstance(value, Markup) or value is None:
            return "" if value is None else value
        self.values.append(str(value))
        return f"zq{len(self.values) - 1}qz"


class Renderer:
    """One game's renderer: its language, its time zone, its name and address."""

    def __init__(
        self,
        language: str,
        timezone: str,
        game: str,
        address: str,
        folder: Path | None = None,
    ) -> None:
        self.language = language
        self.zone = ZoneInfo(timezone)
        self.game = game
        self.address = address
        loader = _SplitLoader(jinja2.FileSystemLoader(str(folder or templates_folder())))
        self._plain = self._environment(loader, autoescape=False, finalize=_plain_finalize)
        self._tokens = _Tokens()
        self._html = self._environment(loader, autoescape=True, finalize=self._tokens.finalize)
        self._markdown = markdown.Markdown(extensions=["tables", "fenced_code", "sane_lists"])
        self._converted: dict[str, str] = {}

    def _environment(
        self, loader: jinja2.BaseLoader, autoescape: bool, finalize: Callable[[Any], Any]
    ) -> jinja2.Environment:
        env = jinja2.Environment(
            loader=loader,
            autoescape=autoescape,
            undefined=jinja2.StrictUndefined,
            finalize=finalize,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters["when"] = self.when
        env.globals.update(game=self.game, address=self.address, help_rows=help_rows(self.language))
        return env

    def when(self, value: datetime | str | None) -> str:
        if value is None:
            return "-"
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        return value.astimezone(self.zone).strftime("%Y-%m-%d %H:%M %Z")

    def template_name(self, kind: str) -> str:
        return f"{self.language}/{kind}.md.j2"

    def macro_names(self, kind: str) -> set[str]:
        """The macros a template defines (each outcome and refusal code is one)."""
        module = self._plain.get_template(self.template_name(kind)).module
        return {name for name in dir(module) if not name.startswith("_")}

    def render(self, kind: str, context: Mapping[str, Any]) -> Rendered:
        """The template `<language>/<kind>.md.j2`: first line the subject, then the body."""
        name = self.template_name(kind)
        subject = self._plain.get_template(name + _SUBJECT).render(**context)
        body = self._plain.get_template(name + _BODY).render(**context)
        self._tokens.values = []
        marked = self._html.get_template(name + _BODY).render(**context)
        values = list(self._tokens.values)
        return Rendered(
            _subject(subject), body.strip() + "\n", _to_html(self._convert(marked), values)
        )

    def _convert(self, marked: str) -> str:
        """Markdown to HTML, cached: the input holds only tokens, never a player's words, so
        it depends on a template's shape alone and repeats from mail to mail."""
        converted = self._converted.get(marked)
        if converted is None:
            if len(self._converted) >= 2048:
                self._converted.clear()
            converted = self._markdown.reset().convert(marked)
            self._converted[marked] = converted
        return converted


_SUBJECT = "#subject"
_BODY = "#body"


class _SplitLoader(jinja2.BaseLoader):
    """`name#subject` is a template file's first line (`Subject: ...`), `name#body` the rest."""

    def __init__(self, inner: jinja2.FileSystemLoader) -> None:
        self.inner = inner

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        name, part = template, ""
        for suffix in (_SUBJECT, _BODY):
            if template.endswith(suffix):
                name, part = template.removesuffix(suffix), suffix
        source, filename, uptodate = self.inner.get_source(environment, name)
        if not part:
            return source, filename, uptodate
        first, _, rest = source.partition("\n")
        if part == _SUBJECT:
            return first.removeprefix("Subject:").strip(), filename, uptodate
        return "\n" + rest, filename, uptodate


def _plain_finalize(value: Any) -> Any:
    return "" if value is None else value


def _subject(line: str) -> str:
    return " ".join(line.split())


def _to_html(converted: str, values: list[str]) -> str:
    parts = re.split(r"(<pre>.*?</pre>)", converted, flags=re.S)
    out: list[str] = []
    for part in parts:
        in_pre = part.startswith("<pre>")

        def put(found: re.Match[str], in_pre: bool = in_pre) -> str:
            index = int(found.group(1))
            if index >= len(values):
                return found.group(0)
            escaped = html.escape(values[index], quote=False)
            return escaped if in_pre else escaped.replace("\n", "<br>\n")

        out.append(_TOKEN.sub(put, part))
    body = nh3.clean("".join(out))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"></head>\n<body>\n'
        + body
        + "\n</body></html>\n"
    )
