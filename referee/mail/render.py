"""Render effects into mail: Jinja2 templates in Markdown, sent as text/plain + styled HTML.

Serves rules 107 (circulation), 203 (results), 205 (ruleset and scores) and every reply.
Player-written text never reaches a reader's client as markup: every value a template prints
becomes an opaque token, the Markdown is parsed, and only then is each token replaced by the
value's HTML-escaped text (or, in the plain part, its text as written); nh3 then sanitises the
HTML as a second guard (`referee.mail.markup`).

Each language's templates live in `templates/<language>/`, with `words.toml` naming the
game's phases, statuses, kinds and events in that language; dates are written with Babel in
the game's language and time zone, so an Italian mail says "martedì 1 dicembre 2026, 10:00".
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import CodeType
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
from babel.dates import format_datetime
from markupsafe import Markup

from referee.core.events import QueryKind
from referee.core.printable import printable, printable_data
from referee.mail.commands import help_rows, match
from referee.mail.markup import Markup as MailMarkup
from referee.mail.markup import page
from referee.mail.relay import Relay
from referee.mail.worddiff import Change, Piece, WordDiff, word_diff
from referee.resources import data_folder


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str


def templates_folder() -> Path:
    return data_folder("templates")


class _Tokens:
    """Collects the values printed during one rendering."""

    def __init__(self) -> None:
        self.values: list[object] = []

    def finalize(self, value: Any) -> Any:
        if isinstance(value, Markup) or value is None:
            return "" if value is None else value
        if isinstance(value, WordDiff):
            self.values.append(value)
            return f"zd{len(self.values) - 1}dz"
        self.values.append(str(value))
        return f"zq{len(self.values) - 1}qz"


def plural(count: int | Iterable[Any], one: str, many: str) -> str:
    """`one` for exactly one (of a number or a list), else `many`: "1 vote", "0 votes"."""
    number = count if isinstance(count, int) else len(list(count))
    return one if number == 1 else many


def diff_of(old: str | None, new: str | None) -> WordDiff | None:
    """The word diff from `old` to `new`, or None when there is nothing to compare."""
    old, new = (old or "").strip(), (new or "").strip()
    if not old or not new:
        return None
    diff = word_diff(old, new)
    return diff if diff.changed else None


def legend(deleted: str, added: str) -> WordDiff:
    """The key to a diff, drawn in the diff's own marks: `[-deleted-] {+added+}`."""
    return WordDiff(
        (Piece(Change.DELETED, deleted), Piece(Change.SAME, " "), Piece(Change.INSERTED, added))
    )


_BLOCK = ("|", "#", "- ", "* ", "> ", "1. ")


def opens_block(text: object) -> bool:
    """Whether Markdown text is more than a sentence (a table, a heading, a list, several
    paragraphs): such text goes under "Done." rather than on its line."""
    body = str(text).strip()
    return body.startswith(_BLOCK) or "\n\n" in body


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
        root = folder or templates_folder()
        self.words = load_words(root, language)
        loader = _SplitLoader(jinja2.FileSystemLoader(str(root)))
        self._plain = self._environment(loader, autoescape=False, finalize=_plain_finalize)
        self._tokens = _Tokens()
        self._marked = self._environment(loader, autoescape=True, finalize=self._tokens.finalize)
        self._markup = MailMarkup(self.words.get("accent"))
        self._cites: Mapping[str, Mapping[str, str]] = {}
        # Moments written in words (Babel's formatting costs more than the rest of a line),
        # by the moment and the form: the same deadline is named in mail after mail
        self._moments: dict[tuple[type, datetime | str, str], str] = {}
        self.relayed = Relay(
            game, address, self.words.get("relay", {}), self.words.get("accent", {})
        )

    def _environment(
        self, loader: jinja2.BaseLoader, autoescape: bool, finalize: Callable[[Any], Any]
    ) -> jinja2.Environment:
        env = _Environment(
            loader=loader,
            autoescape=autoescape,
            undefined=jinja2.StrictUndefined,
            finalize=finalize,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # templates never change under a running referee: no stat per mail
            bytecode_cache=_COMPILED[autoescape],
        )
        env.filters["when"] = self.when
        env.filters["instant"] = self.instant
        env.filters["word"] = self.word
        env.filters["relayed"] = lambda text: self.relayed(str(text))  # a player's, to the table
        env.globals.update(
            game=self.game,
            address=self.address,
            help_rows=help_rows(self.language),
            plural=plural,
            diff_of=diff_of,
            legend=legend,
            cite=self.cite,
            cited=self.cited,
            # The files a ruleset too long for a mail's body is attached as (205); a mail that
            # attaches it gives their names (`Referee._emit`), every other mail none.
            ruleset_files=(),
        )
        env.tests["block"] = opens_block
        env.tests["query"] = is_query
        return env

    def when(self, value: datetime | str | None) -> str:
        """A moment in the game's time zone, in words of the game's language."""
        if value is None:
            return "-"
        return self._moment(value, "when", "EEEE d MMMM y, HH:mm")

    def instant(self, value: datetime | str) -> str:
        """A moment to the second (`when` with seconds): the times of a mail read after a
        later event, a second apart at times."""
        return self._moment(value, "instant", "EEEE d MMMM y, HH:mm:ss")

    def _moment(self, value: datetime | str, form: str, default: str) -> str:
        key = (type(value), value, form)  # an equal datetime is the same instant
        written = self._moments.get(key)
        if written is None:
            if len(self._moments) >= _MOMENTS:
                self._moments.clear()
            written = self._moments[key] = self._written(value, form, default)
        return written

    def _written(self, value: datetime | str, form: str, default: str) -> str:
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        local = value.astimezone(self.zone)
        pattern = self.words.get("format", {}).get(form, default)
        written = format_datetime(local, pattern, tzinfo=self.zone, locale=self.language)
        return f"{written} {local.tzname()}"

    def word(self, value: object, table: str) -> str:
        """A value of the game (a phase, a status, a kind) named in the mail's language."""
        key = str(value)
        return self.words.get(table, {}).get(key, key)

    def cite(self, *mechanics: str) -> str:
        """The rules that carry `mechanics` as they stood when the mail was written, in the
        mail's words: "rule 212", "rule 304, formerly 209", "former rule 206, repealed" (109).

        Templates never hold a rule's number: they name the mechanic (`cite("appeals")`) and
        the citations come with the data (`referee.core.mechanics.citations`)."""
        forms = self.words.get("cite", {})
        for name in mechanics:
            if name not in self._cites:
                raise KeyError(f"no citation of {name!r} in the mail's data")
        cites = [self._cites[name] for name in mechanics]
        plain = list(dict.fromkeys(c["name"] for c in cites))
        if len(plain) > 1 and all(c["state"] == "in_force" and not c["was"] for c in cites):
            return forms["rules"].format(names=", ".join(plain))  # "rules 212, 213"
        out: list[str] = []
        for cited in cites:
            text = self.cited(cited)
            if text not in out:
                out.append(text)
        return "; ".join(out)

    def cited(self, cited: Mapping[str, str]) -> str:
        """One citation a notice carries itself (`referee.core.mechanics.cite_rule`): a rule
        as it stood when a step decided something, in the same words as `cite`."""
        forms = self.words.get("cite", {})
        if cited["state"] == "house":
            return forms["house"]
        if cited["state"] == "none":
            return forms["none"]
        if cited["state"] == "repealed":
            return forms["repealed"].format(name=cited["name"])
        if cited["was"]:
            return forms["formerly"].format(name=cited["name"], was=cited["was"])
        return forms["rule"].format(name=cited["name"])

    def template_name(self, kind: str) -> str:
        return f"{self.language}/{kind}.md.j2"

    def macro_names(self, kind: str) -> set[str]:
        """The macros a template defines (each outcome and refusal code is one)."""
        module = self._plain.get_template(self.template_name(kind)).module
        return {name for name in dir(module) if not name.startswith("_")}

    def render(self, kind: str, context: Mapping[str, Any]) -> Rendered:
        """The template `<language>/<kind>.md.j2`: first line the subject, then the body."""
        name = self.template_name(kind)
        self._cites = context.get("cites") or {}
        # The text as written, its controls made visible; not the citations, which templates
        # read only through `cite` (the mail it writes is made printable as a whole, below)
        context = printable_data({k: v for k, v in context.items() if k != "cites"})
        subject = _subject(self._plain.get_template(name + _SUBJECT).render(**context))
        self._tokens.values = []
        marked = self._marked.get_template(name + _BODY).render(**context)
        values = list(self._tokens.values)
        parsed = self._markup.parse(marked)
        fragment, text = self._markup.parts(parsed, values)
        html = page(fragment, self.language, subject, self.game)
        return Rendered(printable(subject), printable(text), printable(html))


def load_words(root: Path, language: str) -> dict[str, dict[str, str]]:
    """`templates/<language>/words.toml`: tables of names, one per kind of value."""
    path = root / language / "words.toml"
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return {name: {str(k): str(v) for k, v in table.items()} for name, table in data.items()}


_MOMENTS = 4_096  # moments kept written in words, per renderer

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


class _Environment(jinja2.Environment):
    """Jinja's environment, each template's globals one dict rather than a ChainMap over the
    environment's: a renderer sets its globals before it loads any template and never after,
    so the two hold the same; the dict is read in C for each mail's context."""

    def make_globals(self, d: MutableMapping[str, Any] | None) -> MutableMapping[str, Any]:
        return {**self.globals, **(d or {})}

    def getattr(self, obj: Any, attribute: str) -> Any:
        """`x.name` as Jinja reads it (the attribute, else the item), for a plain dict (the
        mail's data) its item at once: a dict has no attribute but its class's, so Jinja's
        attribute lookup could only fail, and raising that costs more than the lookup."""
        if type(obj) is dict and attribute not in _DICT_NAMES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


_DICT_NAMES = frozenset(dir(dict))  # a plain dict's attributes: all its class's


class _Compiled(jinja2.BytecodeCache):
    """The templates compiled once in a process, for every Referee (a replay, a test, each
    game of a service): Python code compiled from a template's source, kept in memory.

    One cache serves environments made alike (`Renderer._environment`, with or without
    autoescape: the code differs), so the code depends only on the template's name, file and
    source; Jinja keys a template by its name and file, and gives its code back only when the
    SHA-1 of the source it is loading now is the one it was compiled from."""

    LIMIT = 1_024  # templates kept, beyond any one folder's (a test's own folders come and go)

    def __init__(self) -> None:
        self._codes: dict[str, tuple[str, CodeType]] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        kept = self._codes.get(bucket.key)
        if kept is not None and kept[0] == bucket.checksum:
            bucket.code = kept[1]

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.code is None:
            return
        if len(self._codes) >= self.LIMIT:
            self._codes.clear()
        self._codes[bucket.key] = (bucket.checksum, bucket.code)

    def clear(self) -> None:
        self._codes.clear()


_COMPILED = {True: _Compiled(), False: _Compiled()}  # by autoescape


def _plain_finalize(value: Any) -> Any:
    return "" if value is None else value


def _subject(line: str) -> str:
    return " ".join(line.split())


_QUERIES = frozenset(kind.value for kind in QueryKind)


def is_query(command: object) -> bool:
    """Whether a command written out (`STATUS`, `REGOLA 201`) only asks the referee something
    (STATUS, RULES, RULE, HISTORY, SCORES, HELP): its answer goes to the asker alone, so a
    reply asking to confirm it speaks of an answer, not of moves or the table."""
    found = match(str(command))
    return found is not None and found[0].name in _QUERIES
