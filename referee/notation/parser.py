"""Read a mechanics block into the project's tree (issue 26; rules 101, 207).

The grammar is `mechanics.lark` (LALR, with an indenter for the lines that continue a `:`);
its keywords are terminals the lexer assigns to a word in capitals through keywords.toml, in
the game's language and English. The lowercase words a place expects (a holder kind, a period,
an event, an argument kind) are checked here, so a block is either a `Program` or one
`Problem` with its line, its column and what was expected there.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from functools import cache
from importlib import resources
from typing import TypeVar

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.indenter import DedentError, Indenter

from referee.core import program as p
from referee.notation import keywords


class _Indenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR"]  # noqa: RUF012 (lark's own attribute names and types)
    CLOSE_PAREN_types = ["RPAR"]  # noqa: RUF012
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 4


class _Refused(Exception):
    def __init__(self, problem: p.Problem) -> None:
        super().__init__(problem.code.value)
        self.problem = problem


def grammar() -> str:
    """The grammar's text: the EBNF the docs show."""
    return resources.files("referee.notation").joinpath("mechanics.lark").read_text("utf-8")


@cache
def _parser(language: str) -> Lark:
    table = keywords.words(language)

    def keyword(token: Token) -> Token:
        if token.value.isupper():
            token.type = table.get(token.value, "UNKNOWN_KEYWORD")
        return token

    return Lark(
        grammar(),
        parser="lalr",
        lexer="basic",
        postlex=_Indenter(),
        lexer_callbacks={"NAME": keyword},
        maybe_placeholders=True,
        propagate_positions=True,
    )


def split(text: str) -> tuple[str, str | None, int]:
    """A rule's text as (prose, block, the block's first line number in the text): the block
    is every line after a line `MECHANICS` (`MECCANICA`); None when there is none."""
    lines = text.splitlines()
    markers = keywords.block_markers()
    for index, line in enumerate(lines):
        if line.strip() in markers:
            return "\n".join(lines[:index]).rstrip(), "\n".join(lines[index + 1 :]), index + 2
    return text, None, 1


def read(text: str, language: str) -> p.Program | p.Problem | None:
    """The mechanics block of a rule's text, read; None when the text has none."""
    _prose, block, first = split(text)
    if block is None:
        return None
    return read_block(block, language, first)


def read_block(block: str, language: str, first_line: int = 1) -> p.Program | p.Problem:
    """A block's text read into a `Program`, or the first `Problem` in it. `first_line` is
    the number of the block's first line in the text the player wrote (for the problem)."""
    lines = [line.rstrip() for line in block.expandtabs(4).splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
        first_line += 1
    margin = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    source = "\n".join(x[margin:] for x in lines).strip("\n") + "\n"
    shift = first_line - 1
    try:
        tree = _parser(language).parse(source)
        return _Builder(shift, margin).program(tree, source)
    except _Refused as refused:
        return refused.problem
    except UnexpectedToken as error:
        if error.token.type == "_INDENT":  # a line indented more than the one above allows
            return p.Problem(p.ProblemCode.INDENT, (error.line or 0) + 1 + shift, 1)
        return _syntax(error, shift, margin, language, error.token.value)
    except UnexpectedCharacters as error:
        where = error.pos_in_stream or 0
        return _syntax(error, shift, margin, language, source[where : where + 1])
    except UnexpectedInput as error:
        return _syntax(error, shift, margin, language, "")
    except DedentError:
        return p.Problem(p.ProblemCode.INDENT, shift + 1, 1)
    except LarkError as error:  # an indentation the indenter could not follow
        return p.Problem(p.ProblemCode.INDENT, shift + 1, 1, str(error)[:80])


# How the parser's terminals are named to a player: keywords in their language, others by kind
_SHOWN = {
    "NAME": "name",
    "NUMBER": "number",
    "STRING": "text",
    "_NL": "end of line",
    "_INDENT": "indented line",
    "_DEDENT": "end of block",
    "$END": "end of block",
    "LPAR": "(",
    "RPAR": ")",
    "COLON": ":",
    "COMMA": ",",
    "DOT": ".",
    "DOTS": "..",
    "EQ": "=",
    "EQEQ": "==",
    "NE": "!=",
    "LT": "<",
    "LE": "<=",
    "GT": ">",
    "GE": ">=",
    "PLUS": "+",
    "MINUS": "-",
    "STAR": "*",
    "SLASH": "/",
}


def _syntax(
    error: UnexpectedInput, shift: int, margin: int, language: str, found: str
) -> p.Problem:
    expected: set[str] = set()
    if isinstance(error, UnexpectedToken):
        expected = set(error.accepts or error.expected)
    elif isinstance(error, UnexpectedCharacters):
        expected = set(error.allowed or ())
    table = keywords.table()
    shown = sorted(
        {
            keywords.spelled(name, language) if name in table else _SHOWN.get(name, name)
            for name in expected
            if not name.startswith("__")
        }
    )
    line = (error.line if error.line and error.line > 0 else 1) + shift
    column = (error.column if error.column and error.column > 0 else 1) + margin
    return p.Problem(p.ProblemCode.SYNTAX, line, column, found.strip(), tuple(shown))


def _number(token: Token) -> Fraction:
    return Fraction(str(token))


class _Builder:
    """The lark tree into the project's tree, checking the lowercase words by their place."""

    def __init__(self, shift: int, margin: int) -> None:
        self.shift = shift
        self.margin = margin

    def at(self, node: Tree[Token] | Token) -> p.At:
        line = getattr(node, "line", None) if isinstance(node, Token) else node.meta.line
        column = getattr(node, "column", None) if isinstance(node, Token) else node.meta.column
        return p.At((line or 1) + self.shift, (column or 1) + self.margin)

    def refuse(self, node: Tree[Token] | Token, code: p.ProblemCode, word: str = "") -> None:
        at = self.at(node)
        raise _Refused(p.Problem(code, at.line, at.column, word))

    def choice(self, token: Token, allowed: Mapping[str, _W]) -> _W:
        """A lowercase word known by its place (a kind, a period, an edge)."""
        found = allowed.get(str(token))
        if found is None:
            self.refuse(token, p.ProblemCode.UNKNOWN_WORD, str(token))
            raise AssertionError  # refuse raises
        return found

    def integer(self, token: Token) -> int:
        value = _number(token)
        if value.denominator != 1 or value > 10_000:
            self.refuse(token, p.ProblemCode.SYNTAX, str(token))
        return int(value)

    # --- declarations

    def program(self, tree: Tree[Token], source: str) -> p.Program:
        made = tuple(self.declaration(child) for child in _trees(tree))
        return p.Program(made, source)

    def declaration(self, tree: Tree[Token]) -> p.Declaration:
        build = {
            "counter": self.counter,
            "handler": self.handler,
            "every": self.every,
            "action": self.action,
            "forbid": self.forbid,
            "win": self.win,
        }[str(tree.data)]
        return build(tree)

    def counter(self, tree: Tree[Token]) -> p.Declaration:
        name = _tok(tree.children[1])
        options: dict[str, object] = {}
        for option in _trees(tree):
            kind = str(option.data)
            if kind in options:
                self.refuse(option, p.ProblemCode.DUPLICATE, kind)
            value = option.children[-1]
            if kind == "holder_kind":
                options[kind] = self.choice(_tok(value), _HOLDERS)
            elif kind == "decimals":
                options[kind] = self.integer(_tok(value))
            else:
                options[kind] = self.signed(_tree(value))
        return p.Counter(
            str(name),
            holder=_opt(options, "holder_kind", p.HolderKind),
            start=_opt(options, "start", Fraction),
            minimum=_opt(options, "minimum", Fraction),
            maximum=_opt(options, "maximum", Fraction),
            decimals=_opt(options, "decimals", int),
            at=self.at(tree),
        )

    def signed(self, tree: Tree[Token]) -> Fraction:
        tokens = [_tok(c) for c in tree.children if c is not None]
        value = _number(tokens[-1])
        return -value if len(tokens) == 2 else value

    def handler(self, tree: Tree[Token]) -> p.Declaration:
        _on, event, _if, condition, suite = tree.children
        parts = [str(t) for t in _tree(event).children]
        name = ".".join(parts)
        if name not in p.EVENTS and not (len(parts) == 2 and parts[0] == "action"):
            self.refuse(_tree(event), p.ProblemCode.UNKNOWN_WORD, name)
        cond = None if condition is None else self.expr(condition)
        return p.Handler(name, cond, self.suite(_tree(suite)), self.at(tree))

    def every(self, tree: Tree[Token]) -> p.Declaration:
        _every, period, edge, suite = tree.children
        when = self.choice(_tok(period), _CLOCK_PERIODS)
        side = p.Edge.START
        if edge is not None and _tok(_tree(edge).children[0]).type == "END":
            side = p.Edge.END
        return p.Every(when, side, self.suite(_tree(suite)), self.at(tree))

    def action(self, tree: Tree[Token]) -> p.Declaration:
        children = tree.children
        name = _tok(children[1])
        parameters = tuple(self.parameter(c) for c in children[2:-5] if c is not None)
        mover = self.choice(_tok(children[-4]), _MOVERS)
        limit = None
        if children[-3] is not None:
            _l, times, _per, period = _tree(children[-3]).children
            limit = p.Limit(self.integer(_tok(times)), self.choice(_tok(period), _LIMIT_PERIODS))
        acceptance = None
        if children[-2] is not None:
            _a, _by, who, _w, days, _d = _tree(children[-2]).children
            acceptance = p.Acceptance(str(who), self.integer(_tok(days)))
        body = self.suite(_tree(children[-1]))
        return p.Action(str(name), parameters, mover, limit, acceptance, body, self.at(tree))

    def parameter(self, node: Tree[Token] | Token) -> p.Parameter:
        name, kind = _tree(node).children
        return p.Parameter(str(name), self.choice(_tok(kind), _ARG_KINDS), self.at(_tok(name)))

    def forbid(self, tree: Tree[Token]) -> p.Declaration:
        _f, move, _when, condition = tree.children
        token = _tok(move)
        what = {"PROPOSE": "propose", "VOTE": "vote"}.get(token.type, str(token))
        return p.Forbid(what, self.expr(condition), self.at(tree))

    def win(self, tree: Tree[Token]) -> p.Declaration:
        children = tree.children
        each = ""
        if children[0] is not None:  # FOR EACH player p:
            self.choice(_tok(children[2]), {"player": p.ArgKind.PLAYER})
            each = str(children[3])
        who, condition = children[-3], children[-1]
        return p.Win(self.expr(who), self.expr(condition), each, self.at(tree))

    # --- effects

    def suite(self, tree: Tree[Token]) -> tuple[p.Effect, ...]:
        return tuple(self.effect(child) for child in _trees(tree))

    def effect(self, tree: Tree[Token]) -> p.Effect:
        kind = str(tree.data)
        c = tree.children
        at = self.at(tree)
        if kind == "give":
            return p.Give(str(c[1]), self.expr(c[2]), str(c[3]), at)
        if kind == "take":
            return p.Take(str(c[1]), self.expr(c[2]), str(c[3]), at)
        if kind == "move":
            return p.Move(self.expr(c[1]), str(c[2]), str(c[4]), str(c[6]), at)
        if kind == "set":
            holder, counter = (str(c[1]), str(c[2])) if c[2] is not None else ("", str(c[1]))
            return p.SetValue(holder, counter, self.expr(c[4]), at)
        if kind == "roll":
            return p.Roll(str(c[1]), self.expr(c[3]), self.expr(c[5]), at)
        if kind == "announce":
            return p.Announce(_text(_tok(c[1])), at)
        if kind == "require":
            return p.Require(self.expr(c[1]), at)
        if kind == "if":
            otherwise = () if c[4] is None else self.suite(_tree(c[4]))
            return p.If(self.expr(c[1]), self.suite(_tree(c[2])), otherwise, at)
        # for_each
        self.choice(_tok(c[2]), {"player": p.ArgKind.PLAYER})
        return p.ForEach(str(c[3]), self.suite(_tree(c[4])), at)

    # --- expressions

    def expr(self, node: Tree[Token] | Token | None) -> p.Expr:
        if isinstance(node, Token):  # a bare terminal kept by an inlined rule
            if node.type == "NUMBER":
                return p.Number(_number(node), self.at(node))
            return p.Name(str(node), self.at(node))
        tree = _tree(node)
        kind = str(tree.data)
        c = tree.children
        at = self.at(tree)
        if kind == "number":
            return p.Number(_number(_tok(c[0])), at)
        if kind == "name":
            return p.Name(str(c[0]), at)
        if kind == "attribute":
            return p.Attribute(str(c[0]), str(c[1]), at)
        if kind == "call":
            args = tuple(self.expr(a) for a in c[1:] if a is not None)
            return p.Call(str(c[0]), args, at)
        if kind == "ask":
            return p.Ask(str(c[1]), _text(_tok(c[2])), at)
        if kind == "not_":
            return p.Unary("not", self.expr(c[1]), at)
        if kind == "negative":
            return p.Unary("-", self.expr(c[1]), at)
        if kind == "comparison":
            operator = str(_tree(c[1]).children[0])
            return p.Binary(
                "=" if operator == "==" else operator, self.expr(c[0]), self.expr(c[2]), at
            )
        # a left-to-right chain: disjunction, conjunction, sum, product
        result = self.expr(c[0])
        for index in range(1, len(c), 2):
            operator = _tok(c[index])
            word = {"OR": "or", "AND": "and"}.get(operator.type, str(operator))
            result = p.Binary(word, result, self.expr(c[index + 1]), at)
        return result


_W = TypeVar("_W")

_HOLDERS = {"player": p.HolderKind.PLAYER, "game": p.HolderKind.GAME}
_CLOCK_PERIODS = {"day": p.Period.DAY, "week": p.Period.WEEK, "month": p.Period.MONTH}
_LIMIT_PERIODS = {"day": p.Period.DAY, "week": p.Period.WEEK, "turn": p.Period.TURN}
_MOVERS = {"player": p.Mover.PLAYER, "king": p.Mover.KING}
_ARG_KINDS = {"player": p.ArgKind.PLAYER, "number": p.ArgKind.NUMBER}


def _trees(tree: Tree[Token]) -> list[Tree[Token]]:
    return [c for c in tree.children if isinstance(c, Tree)]


def _tree(node: object) -> Tree[Token]:
    assert isinstance(node, Tree)
    return node


def _tok(node: object) -> Token:
    assert isinstance(node, Token)
    return node


def _text(token: Token) -> str:
    return str(token)[1:-1]


def _opt(options: Mapping[str, object], key: str, kind: type[_W]) -> _W | None:
    value = options.get(key)
    return value if isinstance(value, kind) else None
