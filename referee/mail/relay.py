"""A player's words relayed to the table, made harmless as the referee's own (112; issue 15).

Debate goes out From the game's address, so a hostile player may write words that imitate the
referee: a notice's first line (`[Game] Proposal 302 adopted`), a reply's verdict (`Done.`), a
header of one of its mails, the Message-ID of a prompt (whose thread a reply would answer), or
a mail link that, clicked, writes a command or answers a prompt (`mailto:` with `subject=QUIT`,
`In-Reply-To=` a prompt, `body=yes`; a webmail's compose link with the game's address). The
templates already show the words quoted under their author's name (`> ` in the text part, a
box in the HTML part); here, before they are quoted:

- a link that writes mail with something filled in (a `mailto:` with a query) or that names
  the game's address in a query becomes a bracketed note;
- a Message-ID of the referee's mail (`<game.award-301...@domain>`, with or without its angle
  brackets) becomes a bracketed note;
- a line that begins as the referee's own mail does is marked as not the referee's; so is a
  word inside a line that would begin one where the plain part wraps the line (the game's tag,
  a verdict written as the referee writes it, a header naming the game). Every line break
  Unicode names (LF, CR, U+0085, U+2028, U+2029, and the rest `str.splitlines` knows) ends a
  line, and the mark is glued to the words it marks with no-break spaces, which the plain
  part's wrapping never breaks at (and writes as spaces): no wrapping parts them (issue 28).

The notes are in the mail's language (`words.toml`, `[relay]`). Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

from referee.core.threads import ThreadKind

# What a Message-ID of the referee's holds after the game's slug: a thread's name, or a digest.
_THREADS = "|".join(sorted((k.value for k in ThreadKind), key=len, reverse=True))
# The header names of a mail, in both languages' clients, that a forged copy would begin with.
_HEADERS = (
    "from",
    "to",
    "cc",
    "subject",
    "date",
    "message-id",
    "in-reply-to",
    "references",
    "reply-to",
    "da",
    "a",
    "oggetto",
    "data",
    "inviato",
    "sent",
)
_LEADING = " \t>*_#`~"  # quote marks and Markdown a line may open with before its words
_WORD = re.compile(r"\S+")
# Every line break Unicode names, as `str.splitlines` splits on them: a client shows each one
_BREAKS = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# A word inside a line, after the space before it: where the plain part may wrap the line
_INSIDE = re.compile(r"(?<=\s)(?=\S)")
_GLUE = "\u00a0"  # a no-break space: the plain part's wrapping never breaks at it
_REACH = 400  # characters after a word read to tell whether it begins an imitation


class Relay:
    """One game's neutraliser: its name and address, and the notes in its language."""

    def __init__(
        self,
        game: str,
        address: str,
        words: Mapping[str, str],
        verdicts: Iterable[str] = (),
    ) -> None:
        self.game = game
        self.address = address.lower()
        domain = re.escape(self.address.rpartition("@")[2])
        self.words = words
        self.ids = re.compile(
            rf"<?[a-z0-9-]+\.(?:(?:{_THREADS})(?:-[a-z0-9-]+)?(?:\.[0-9a-f]{{20}})?"
            rf"|[0-9a-f]{{20}})@{domain}>?",
            re.I,
        )
        self.tag = f"[{game}]".casefold()
        self.written = tuple(verdicts)
        self.verdicts = tuple(v.casefold() for v in self.written)

    def __call__(self, text: str) -> str:
        """The words as the table may read them from the game's address."""
        return "\n".join(self._line(line) for line in _BREAKS.split(text))

    def _line(self, line: str) -> str:
        line = _WORD.sub(lambda found: self._word(found.group(0)), line)
        line = self.ids.sub(self.words["id"], line)
        mark = self.words["line"].replace(" ", _GLUE) + _GLUE
        starts = [0] if self.imitates(line) else []
        starts += [
            at.start()
            for at in _INSIDE.finditer(line)
            if self.imitates(line[at.start() : at.start() + _REACH], inside=True)
        ]
        for at in reversed(starts):
            line = line[:at] + mark + line[at:]
        return line

    def _word(self, word: str) -> str:
        """A link that writes mail for the reader becomes a note; any other word stays."""
        plain = unquote(unquote(word)).casefold()
        writes = "mailto:" in plain and "?" in plain.partition("mailto:")[2]
        names = self.address in plain and "=" in plain  # a query that fills in the address
        return self.words["link"] if writes or names else word

    def imitates(self, line: str, inside: bool = False) -> bool:
        """Whether a line begins as the referee's own mail does: a notice's subject (the game's
        tag), a reply's verdict, or a header of a mail that names the game. `inside`: the
        words follow others on their line, where only a verdict in the referee's own capitals
        ("Done.", not "done.") reads as one."""
        opening = line.lstrip(_LEADING)
        start = opening.casefold()
        if start.startswith(self.tag):
            return True
        if opening.startswith(self.written) if inside else start.startswith(self.verdicts):
            return True
        if start.startswith("x-nomic-"):
            return True
        name, colon, _rest = start.partition(":")
        return (
            bool(colon)
            and name.strip() in _HEADERS
            and (self.address in start or self.game.casefold() in start)
        )
