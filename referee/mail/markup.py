"""The two parts of every mail from one Markdown rendering: styled HTML and plain text (107, 205).

Templates write Markdown in which every printed value is an opaque token (`zq7qz`, or
`zd7dz` for a word diff). `markdown-it` parses that into block and inline tokens once per
shape of mail; from them come

- the HTML part: each element carries inline `style` attributes (mail clients drop `<style>`
  blocks and external CSS), values are put back HTML-escaped, and nh3 sanitises the result
  with an allow-list of tags, attributes and style properties, so a player's words never
  become markup;
- the text/plain part: headings underlined, tables aligned in columns, lists with hanging
  indents, paragraphs wrapped at 72 columns, and no Markdown syntax left over.

A word diff (`referee.mail.worddiff`) becomes coloured `<del>`/`<ins>` runs (struck through and
underlined, so the change shows without colour too) in HTML, and `[-old-]{+new+}` in plain text.

Both parts are made a top-level block at a time (a paragraph, a table, a list), and a block's
two parts are kept, bounded, by the Markdown's shape and the values it prints: a rule's text,
the scores and the footer come back in mail after mail (issue 19). Tests hold the parts so made
to the whole made at once (`tests/test_fast_paths.py`).
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

from referee.mail.commands import REGISTRY, fold, match
from referee.mail.worddiff import Change, WordDiff

WIDTH = 72  # the plain part's line length
_GLUE = "\u00a0"  # a space the plain part's wrapping never breaks at, written as a space
_GLUED = 40  # the longest run of words glued so: beyond it, a line may break inside
TOKEN = re.compile(r"z([qd])(\d+)\1z")
_DIFF_ONLY = re.compile(r"\s*zd\d+dz\s*")

_FONT = "-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"
_MONO = "Menlo,Consolas,'Liberation Mono',monospace"
INK, MUTED, ACCENT, RULE_LINE = "#1f2328", "#5b6169", "#1d4e89", "#e3e0d6"

# One style per element the templates produce: the look of the whole mail lives here.
STYLES: dict[str, str] = {
    "p": "margin:0 0 14px 0",
    "h1": f"margin:0 0 14px 0;font-size:22px;line-height:1.3;color:{ACCENT}",
    "h2": (
        f"margin:26px 0 12px 0;padding:0 0 4px 0;font-size:19px;line-height:1.3;color:{ACCENT};"
        f"border-bottom:2px solid {RULE_LINE}"
    ),
    "h3": f"margin:22px 0 6px 0;font-size:16px;line-height:1.35;color:{ACCENT}",
    "h4": f"margin:16px 0 6px 0;font-size:15px;line-height:1.35;color:{INK}",
    "table": (
        "border-collapse:collapse;width:100%;max-width:520px;margin:2px 0 16px 0;font-size:15px;"
        "line-height:1.4"
    ),
    "th": (
        "text-align:left;padding:6px 12px 6px 0;font-weight:600;color:#3d434b;"
        f"border-bottom:2px solid {RULE_LINE}"
    ),
    "td": "padding:6px 12px 6px 0;vertical-align:top;border-bottom:1px solid #eeece6",
    "ul": "margin:0 0 14px 0;padding:0 0 0 22px",
    "ol": "margin:0 0 14px 0;padding:0 0 0 22px",
    "li": "margin:0 0 6px 0",
    "blockquote": (
        f"margin:0 0 8px 0;padding:6px 12px;border-left:3px solid #c9c4b4;color:{MUTED};"
        f"background:#f8f7f3;font-family:{_MONO};font-size:13px"
    ),
    "code": (
        f"font-family:{_MONO};font-size:13px;background:#f0eee7;padding:1px 4px;border-radius:3px"
    ),
    "pre": (
        f"font-family:{_MONO};font-size:13px;background:#f6f5f0;padding:10px 12px;"
        "white-space:pre-wrap;margin:0 0 14px 0"
    ),
    "strong": "font-weight:700",
    "em": "font-style:italic",
    "hr": f"border:0;border-top:1px solid {RULE_LINE};margin:20px 0",
}
QUOTED_P = "margin:0"  # a paragraph inside a quote: the quote's padding is its margin
FIRST = "margin-top:0"  # the mail's first element sits at the top of its column
FOOTER = f"margin:0 0 8px 0;font-size:13px;line-height:1.45;color:{MUTED}"  # after a rule (---)
ACCENTS = {"good": "color:#1a7f37", "bad": "color:#b42318"}
DIFF_BOX = (
    "margin:0 0 14px 0;padding:10px 12px;background:#fbfaf7;border:1px solid #e3e0d6;"
    "border-radius:4px;line-height:1.7"
)
DELETED = (
    "color:#8f1d1d;background:#fde4e2;text-decoration:line-through;border-radius:2px;padding:0 1px"
)
INSERTED = (
    "color:#14532d;background:#d9f5df;text-decoration:underline;font-weight:600;"
    "border-radius:2px;padding:0 1px"
)

_TAGS = {
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "br",
    "del",
    "ins",
    "span",
    "a",
    "hr",
    "div",
}
_ATTRIBUTES = {"*": {"style"}, "a": {"href"}, "ol": {"start"}}
_STYLE_PROPERTIES = {
    prop.split(":", 1)[0]
    for style in (
        *STYLES.values(),
        *ACCENTS.values(),
        DIFF_BOX,
        DELETED,
        INSERTED,
        QUOTED_P,
        FIRST,
        FOOTER,
    )
    for prop in style.split(";")
    if prop
}


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


@dataclass(frozen=True)
class Parsed:
    """One shape of mail, parsed and styled: reused for every mail of that shape."""

    tokens: tuple[Token, ...]
    html: str  # with the value tokens still in it
    source: str = ""  # the Markdown parsed (template output: tokens, never a player's words)
    # Its top-level blocks (a paragraph, a table, a list, ...): the tokens each spans and the
    # values it prints, and its HTML (with the line end after it); none when the blocks' HTML
    # does not make up `html` exactly
    spans: tuple[tuple[int, int, tuple[int, ...]], ...] = ()
    blocks: tuple[str, ...] = ()


_KEPT = 4_000  # the most characters of values, HTML and text a kept block holds
_KEYS = frozenset((str, WordDiff))  # the values a kept block may print: equal ones are the same
Made = tuple[str, tuple[str, ...]]  # a block's sanitised HTML and its plain blocks


class Markup:
    """Parses template output once per shape and turns it into the HTML and plain parts.

    `accents` colours a bold word written by a template ("Done.", "Refused.") by its sense:
    "good" or "bad".
    """

    def __init__(self, accents: dict[str, str] | None = None) -> None:
        self._md = _markdown()
        self._cache: dict[str, Parsed] = {}
        self._made: dict[tuple[str, int, tuple[object, ...]], Made] = {}
        self._accents = {text: ACCENTS[sense] for text, sense in (accents or {}).items()}

    def parse(self, marked: str) -> Parsed:
        """The input holds only tokens, never a player's words, so it depends on a template's
        shape alone and repeats from mail to mail: the cache is safe and effective."""
        parsed = self._cache.get(marked)
        if parsed is None:
            if len(self._cache) >= 2048:
                self._cache.clear()
            tokens = self._md.parse(marked)
            _style(tokens, self._accents)
            whole = self._md.renderer.render(tokens, self._md.options, {})
            spans = _spans(tokens)
            render, options = self._md.renderer.render, self._md.options
            blocks = tuple(render(tokens[start:end], options, {}) for start, end, _ in spans)
            if "".join(blocks) != whole:
                blocks = ()
            parsed = Parsed(tuple(tokens), whole, marked, spans, blocks)
            self._cache[marked] = parsed
        return parsed

    def parts(self, parsed: Parsed, values: Sequence[object]) -> tuple[str, str]:
        """`to_html(parsed, values)` and `to_plain(parsed, values)`, a top-level block at a
        time: a block's HTML and text depend only on the Markdown's shape and the values it
        prints, and the same block (a rule's text, the scores, the footer) comes back in mail
        after mail, so each is kept once made (when its values are text or word diffs, whose
        equality is sameness)."""
        if not parsed.blocks:
            return to_html(parsed, values), to_plain(parsed, values)
        plain = _Plain(values)
        tokens: list[Token] = []
        html: list[str] = []
        text: list[str] = []
        count = len(values)
        for (start, end, used), block in zip(parsed.spans, parsed.blocks, strict=True):
            printed = tuple([values[i] for i in used if i < count]) if used else ()
            keyed = not printed or _KEYS.issuperset(map(type, printed))
            key = (parsed.source, start, printed)  # a token past the values: printed as is
            made = self._made.get(key) if keyed else None
            if made is None:
                tokens = tokens or list(parsed.tokens)
                made = (
                    sanitised(filled(block, values)),
                    tuple(plain.blocks(tokens, start, end, WIDTH)),
                )
                if keyed and _size(made, printed) <= _KEPT:
                    if len(self._made) >= 4_096:
                        self._made.clear()
                    self._made[key] = made
            html.append(made[0])
            text += made[1]
        return "".join(html), plain.joined(text)


def _size(made: Made, printed: tuple[object, ...]) -> int:
    """The characters a kept block holds: its HTML, its text and the values it prints."""
    return len(made[0]) + sum(map(len, made[1])) + sum(len(str(v)) for v in printed)


def _spans(tokens: list[Token]) -> tuple[tuple[int, int, tuple[int, ...]], ...]:
    """The top-level blocks `_Plain.blocks` goes through, each as the tokens from and to, and
    the values its tokens' text names (all that `_Plain` prints of a value is in a token's or
    its children's `content`)."""
    spans = []
    index = 0
    while index < len(tokens):
        close = _closing(tokens, index)
        used: set[int] = set()
        for token in tokens[index : close + 1]:
            for child in (token, *(token.children or ())):
                used.update(int(found.group(2)) for found in TOKEN.finditer(child.content))
        spans.append((index, close + 1, tuple(sorted(used))))
        index = close + 1
    return tuple(spans)


def _style(tokens: list[Token], accents: dict[str, str]) -> None:
    if tokens and tokens[0].type == "heading_open":
        tokens[0].attrSet("style", f"{STYLES[tokens[0].tag]};{FIRST}")
        first = tokens[0]
    else:
        first = None
    quoted, footer = 0, False
    for index, token in enumerate(tokens):
        if token is not first:
            _style_one(token)
        if token.type.startswith("blockquote_"):
            quoted += token.nesting
        footer = footer or token.type == "hr"
        if token.type == "paragraph_open" and quoted:
            token.attrSet("style", QUOTED_P)
        elif token.type == "paragraph_open" and footer:
            token.attrSet("style", FOOTER)
        if token.type == "paragraph_open" and index + 1 < len(tokens):
            following = tokens[index + 1]
            if following.type == "inline" and _DIFF_ONLY.fullmatch(following.content):
                token.tag = tokens[_closing(tokens, index)].tag = "div"
                token.attrSet("style", DIFF_BOX)
        children = token.children or []
        for at, child in enumerate(children):
            _style_one(child)
            if child.type == "strong_open" and at + 1 < len(children):
                accent = accents.get(children[at + 1].content)
                if accent:
                    child.attrSet("style", f"{STYLES['strong']};{accent}")


def _style_one(token: Token) -> None:
    if token.nesting == -1 or token.tag not in STYLES:
        return
    own = token.attrGet("style")  # a table column's alignment comes last and wins
    token.attrSet("style", STYLES[token.tag] + (f";{own}" if own else ""))


# ---------------------------------------------------------------------------------- HTML


def to_html(parsed: Parsed, values: Sequence[object]) -> str:
    """The sanitised HTML fragment: values HTML-escaped, diffs as coloured runs.

    Each top-level block is filled in and sanitised on its own (`sanitised`), which is the
    same as sanitising the whole: a block is well nested (markdown-it's output, every value
    escaped), so the HTML parser is back in the body with nothing open after each, and nh3's
    cleaning is node by node (a test holds the two the same). The blocks of one mail (a rule's
    text, the scores, the footer) come back in mail after mail, and are cleaned once."""
    return "".join(sanitised(filled(block, values)) for block in parsed.blocks or [parsed.html])


def filled(fragment: str, values: Sequence[object]) -> str:
    """The HTML `fragment` with each value token replaced by its value, HTML-escaped (a word
    diff as its coloured runs), a line break in it a `<br>` outside `<pre>`."""
    if "<pre" not in fragment:  # the common case: one part, not in `<pre>`
        return TOKEN.sub(lambda found: _put(found, values, False), fragment)
    parts = re.split(r"(<pre[ >].*?</pre>)", fragment, flags=re.S)
    out: list[str] = []
    for part in parts:
        in_pre = part.startswith("<pre")
        out.append(TOKEN.sub(lambda found, in_pre=in_pre: _put(found, values, in_pre), part))
    return "".join(out)


def _put(found: re.Match[str], values: Sequence[object], in_pre: bool) -> str:
    """The HTML of the value a token names (a line break a `<br>` outside `<pre>`)."""
    index = int(found.group(2))
    if index >= len(values):
        return found.group(0)
    value = values[index]
    if isinstance(value, WordDiff):
        return _diff_html(value)
    escaped = html.escape(str(value), quote=False)
    return escaped if in_pre else escaped.replace("\n", "<br>\n")


_CACHED = 8_000  # the longest HTML block kept cleaned: a few megabytes at most in all


_SCHEMES = {"mailto", "https", "http"}


def _cleaner() -> Callable[[str], str]:
    """`sanitise` as one nh3 `Cleaner` made once (nh3 0.3), not its allow-lists converted
    again for every call."""
    if not hasattr(nh3, "Cleaner"):
        return sanitise
    cleaner = nh3.Cleaner(
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        filter_style_properties=_STYLE_PROPERTIES,
        url_schemes=_SCHEMES,
    )
    clean: Callable[[str], str] = cleaner.clean
    return clean


@lru_cache(maxsize=2_048)
def _sanitised(fragment: str) -> str:
    return _clean(fragment)


def sanitised(fragment: str) -> str:
    """`sanitise(fragment)`, from a cache keyed by the text itself: a block seen before
    (a short one) is not cleaned again."""
    return _sanitised(fragment) if len(fragment) <= _CACHED else _clean(fragment)


def sanitise(fragment: str) -> str:
    return nh3.clean(
        fragment,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        filter_style_properties=_STYLE_PROPERTIES,
        url_schemes=_SCHEMES,
    )


_clean = _cleaner()


def _diff_html(diff: WordDiff) -> str:
    out: list[str] = []
    for piece in diff.pieces:
        text = html.escape(piece.text, quote=False).replace("\n", "<br>\n")
        if piece.change is Change.DELETED:
            out.append(f'<del style="{DELETED}">{text}</del>')
        elif piece.change is Change.INSERTED:
            out.append(f'<ins style="{INSERTED}">{text}</ins>')
        else:
            out.append(text)
    return "".join(out)


def page(fragment: str, language: str, title: str, game: str) -> str:
    """The whole HTML document: a centred column, at most 640 pixels wide, on a light ground.

    Layout tables, not CSS layout, because Outlook's Word engine ignores most CSS; every style
    is inline because Gmail drops `<style>` in many places.
    """
    return (
        f'<!DOCTYPE html>\n<html lang="{html.escape(language)}">\n<head>\n'
        '<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n</head>\n"
        f'<body style="margin:0;padding:0;background:#f2f1ec;color:{INK}">\n'
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" '
        'style="background:#f2f1ec">\n<tr><td align="center" style="padding:16px 8px">\n'
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" '
        'style="max-width:640px;background:#ffffff;border:1px solid #e3e0d6;border-radius:6px">\n'
        f'<tr><td style="padding:12px 20px;border-bottom:1px solid #e3e0d6;font-family:{_FONT};'
        f'font-size:13px;letter-spacing:0.04em;text-transform:uppercase;color:{MUTED}">'
        f"{html.escape(game)}</td></tr>\n"
        f'<tr><td style="padding:18px 20px 6px 20px;font-family:{_FONT};font-size:16px;'
        f'line-height:1.55;color:{INK};word-wrap:break-word">\n'
        f"{fragment}\n"
        "</td></tr>\n</table>\n</td></tr>\n</table>\n</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------- plain text


def to_plain(parsed: Parsed, values: Sequence[object]) -> str:
    """The text/plain part: no Markdown syntax, tables in columns, lines of at most 72."""
    return _Plain(values).render(list(parsed.tokens))


class _Plain:
    def __init__(self, values: Sequence[object]) -> None:
        self.values = values

    def value(self, found: re.Match[str]) -> str:
        index = int(found.group(2))
        return str(self.values[index]) if index < len(self.values) else found.group(0)

    def inline(self, token: Token) -> str:
        out: list[str] = []
        for child in token.children or []:
            if child.type == "code_inline":
                # A command is wrapped as one word, glued to the word before it: no line of
                # the plain part starts with a command the template only mentions, so a reply
                # quoting this mail never seems to give it (rule 107's words stay the referee's).
                code = TOKEN.sub(self.value, child.content).replace(" ", _GLUE)
                before = "".join(out)[:-1].rpartition(" ")[2]  # the run it would join
                if out and out[-1].endswith(" ") and len(before) + len(code) < _GLUED:
                    out[-1] = out[-1][:-1] + _GLUE
                out.append(code)
            elif child.type == "text":
                out.append(TOKEN.sub(self.value, child.content))
            elif child.type == "softbreak":
                out.append(" ")
            elif child.type == "hardbreak":
                out.append("\n")
            elif child.type == "link_close":
                pass
            elif child.type == "image":
                out.append(TOKEN.sub(self.value, child.content))
        return "".join(out)

    def render(self, tokens: list[Token]) -> str:
        return self.joined(self.blocks(tokens, 0, len(tokens), WIDTH))

    def joined(self, blocks: list[str]) -> str:
        """The plain part of its top-level blocks."""
        text = "\n\n".join(b for b in blocks if b.strip()).replace(_GLUE, " ")
        return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"

    def blocks(self, tokens: list[Token], start: int, end: int, width: int) -> list[str]:
        """The plain blocks between `start` and `end` (one level of nesting)."""
        out: list[str] = []
        index = start
        while index < end:
            token = tokens[index]
            close = _closing(tokens, index)
            if token.type == "heading_open":
                text = " ".join(self.inline(tokens[index + 1]).split())
                mark = "=" if token.tag in ("h1", "h2") else "-"
                lines = wrap(text, width)
                out.append("\n".join([*lines, mark * max(len(x) for x in lines)]))
            elif token.type == "paragraph_open":
                out.append("\n".join(wrap(self.inline(tokens[index + 1]), width)))
            elif token.type == "table_open":
                out.append(self.table(tokens, index, close))
            elif token.type in ("bullet_list_open", "ordered_list_open"):
                out.append(self.items(tokens, index, close, width))
            elif token.type == "blockquote_open":
                inner = "\n\n".join(self.blocks(tokens, index + 1, close, width - 2))
                out.append("\n".join(("> " + line).rstrip() for line in inner.splitlines()))
            elif token.type in ("fence", "code_block"):
                code = TOKEN.sub(self.value, token.content).rstrip("\n")
                out.append("\n".join("    " + line for line in code.splitlines()))
            elif token.type == "hr":
                out.append("-" * 24)
            index = close + 1
        return out

    def items(self, tokens: list[Token], start: int, end: int, width: int) -> str:
        ordered = tokens[start].type == "ordered_list_open"
        number = int(tokens[start].attrGet("start") or 1)
        items: list[str] = []
        index = start + 1
        while index < end:
            close = _closing(tokens, index)
            if tokens[index].type == "list_item_open":
                bullet = f"{number}. " if ordered else "- "
                number += 1
                inner = "\n\n".join(self.blocks(tokens, index + 1, close, width - len(bullet)))
                lines = inner.split("\n")
                pad = " " * len(bullet)
                items.append(
                    "\n".join((bullet if i == 0 else pad) + x for i, x in enumerate(lines))
                )
            index = close + 1
        tight = any(t.hidden for t in tokens[start:end] if t.type == "paragraph_open")
        return ("\n" if tight else "\n\n").join(items)

    def table(self, tokens: list[Token], start: int, end: int) -> str:
        rows: list[list[str]] = []
        right: list[bool] = []
        header = 0
        for index in range(start, end):
            token = tokens[index]
            if token.type == "tr_open":
                rows.append([])
            elif token.type in ("th_open", "td_open"):
                text = " ".join(self.inline(tokens[index + 1]).split())
                rows[-1].append(text)
                if len(rows) == 1:
                    right.append("text-align:right" in str(token.attrGet("style") or ""))
            elif token.type == "thead_close":
                header = len(rows)
        columns = max(len(r) for r in rows)
        right += [False] * (columns - len(right))
        widths = [max(len(r[c]) if c < len(r) else 0 for r in rows) for c in range(columns)]
        lines: list[str] = []
        for number, row in enumerate(rows):
            cells = [
                (row[c] if c < len(row) else "").rjust(widths[c])
                if right[c]
                else (row[c] if c < len(row) else "").ljust(widths[c])
                for c in range(columns)
            ]
            lines.append("  ".join(cells).rstrip())
            if number + 1 == header:
                heads = rows[0] + [""] * (columns - len(rows[0]))
                lines.append(
                    "  ".join(
                        ("-" if heads[c] else " ") * widths[c] for c in range(columns)
                    ).rstrip()
                )
        return "\n".join(lines)


def _closing(tokens: list[Token], index: int) -> int:
    """The index of the token that closes `tokens[index]` (itself if it opens nothing)."""
    if tokens[index].nesting != 1:
        return index
    depth = 0
    for at in range(index, len(tokens)):
        depth += tokens[at].nesting
        if depth == 0:
            return at
    return len(tokens) - 1


_COMMAND_WORDS = frozenset(fold(spec.english.split()[0]) for spec in REGISTRY) | frozenset(
    fold(spec.italian.split()[0]) for spec in REGISTRY
)


_folded = lru_cache(maxsize=65_536)(fold)  # the same words come back in every mail


def _keep_commands_inside(line: str) -> str:
    """Glue a word that would start a command (`Vote with ...`) to the word before it, so that
    wrapping never puts it at the start of a line: a reply quoting the mail without marks then
    never seems to hold commands the referee only mentioned."""
    words = line.split(" ")
    for index in range(len(words) - 1, 0, -1):
        word = _folded(words[index].split(_GLUE, 1)[0])
        glued = words[index - 1] + _GLUE + words[index]
        if (
            word in _COMMAND_WORDS
            and len(glued) < _GLUED
            and match(" ".join(words[index : index + 4])) is not None
        ):
            words[index - 1 : index + 1] = [glued]
    return " ".join(words)


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width`, keeping the text's own line breaks; a word longer than the
    line (an address, a URL) stays whole on a line of its own, and no wrapped line starts
    with a command word."""
    lines: list[str] = []
    for line in text.split("\n"):
        lines += _wrap_line(line, width)
    return lines or [""]


@lru_cache(maxsize=8_192)
def _wrap_line(line: str, width: int) -> tuple[str, ...]:
    """One line of text wrapped: the same paragraph (a rule's text, a notice's sentence) comes
    back in mail after mail, and is wrapped once."""
    if not line.strip():
        return ("",)
    indent = line[: len(line) - len(line.lstrip())]
    return tuple(
        textwrap.wrap(
            _keep_commands_inside(line.strip()),
            width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        or [""]
    )
