"""Strip what a reply quotes and what a client appends, so only the player's own words remain.

Serves the mail commands of rules 103-215: a command quoted from an earlier mail, or planted in
a proposal's text that a client quotes without `>`, must never be obeyed. The rules are data:
tables per language and per client, read by one pass over the lines.

- attribution lines, in the shapes of `_SHAPES`: Gmail, Apple Mail, Thunderbird, Outlook mobile
  and Zimbra ("On ... wrote:", "Il ... ha scritto:", "Am ... schrieb ...:", "Em ... escreveu:",
  "W dniu ... napisał:", "Den ... skrev:", "Op ... het volgende geschreven:", ...), Gmail's
  forms led by the date ("tir. 18. apr. 2017 kl. 13:09 skrev ... <addr>:", "pe 20. lokakuuta
  2017 klo 17.50 ... <addr> kirjoitti:"), the forms with no verb (Gmail in Russian, Yandex,
  Mail.ru, a time before the date: "30.09.2017, 18.30, "Name" <addr>:"), the forms framed by
  dashes (Zoho, Android: "---- On ... wrote ----"), "wrote" without its colon, and each of them
  wrapped over up to five lines (Polymail puts the address on lines of its own);
- Outlook's and Windows Mail's unprefixed history: a block of header lines in one language
  ("From:/Sent:/To:/Subject:", "Da:/Inviato:", "De:/Enviada em:/Para:/Assunto:",
  "От:/Отправлено:/Кому:", ...);
- separators: "-----Original Message-----" and its siblings, Gmail's "---------- Forwarded
  message ---------", Apple's "Begin forwarded message:", Outlook's line of underscores;
- `>` lines, the signature separator `-- `, and mobile footers ("Sent from my iPhone", ...).

An attribution not framed by dashes must name a date, a time or an address, as every client's
does: "On Monday I wrote:" or "Il giorno dopo Carla ha scritto:" in the player's own text is his
prose; the Outlook header block must hold its From line or a dated Sent/Date line. A `>`-marked
quote under an attribution is a bottom-posted or interleaved reply: the quote and its
attribution are dropped and the unmarked text after them kept, until more history begins.

The maintained library mail-parser-reply was evaluated: it misses several of the forms above
and its whole-text regular expressions take quadratic time on one long line (33 s for a 40 kB
line), so it cannot be run on a hostile body. Its patterns for the languages the tables here do
not hold (Japanese, Korean, Chinese) are used, on single short lines and bounded windows.
Everything is one pass over the lines with bounded look-ahead: linear in the size of the mail.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mailparser_reply.constants import MAIL_LANGUAGES

LONGEST = 400  # characters: an attribution or header line, even wrapped, is never longer
_WRAPPED = 5  # lines an attribution is wrapped over, at most (Polymail: five)
_PIECE = 100  # characters: a wrapped attribution's later lines are never longer


@dataclass(frozen=True)
class _Wrote:
    """How one language's clients write "On <date>, <name> wrote:"."""

    openers: tuple[str, ...]  # the words it begins with ("On", "Il giorno"); may be none
    verbs: tuple[str, ...]  # the verbs that end it ("... Carla wrote:")
    named: tuple[str, ...] = ()  # the verbs a name follows ("... schrieb Carla <addr>:")


_WROTE = {
    "en": _Wrote(("On",), ("wrote",)),
    "it": _Wrote(("Il", "Il giorno", "In data"), ("ha scritto",)),
    "de": _Wrote(("Am",), ("schrieb",), ("schrieb",)),
    "fr": _Wrote(("Le",), (r"a [ée]crit",)),
    "es": _Wrote(("El",), (r"escribi[óo]",)),
    "nl": _Wrote(("Op",), ("schreef", "het volgende geschreven"), ("schreef",)),
    "pt": _Wrote(("Em",), ("escreveu",)),
    "pl": _Wrote(("W dniu", "Dnia"), (r"napisał(?:a|\(a\))?", "pisze")),
    "sv, da, no": _Wrote(("Den", "På"), ("skrev",), ("skrev",)),
    "fi": _Wrote((), ("kirjoitti",)),
    "ru": _Wrote((), (r"написал(?:а|\(а\))?",)),
    "uk": _Wrote((), ("написав", "написала", "пише")),
    "cs": _Wrote(("Dne",), (r"napsal(?:a|\(a\))?",)),
    "vi": _Wrote(("Vào",), ("đã viết",)),
    "tr": _Wrote((), ("şunu yazdı",)),
}


def _alternatives(words: Sequence[str]) -> str:
    return "|".join(sorted(set(words), key=len, reverse=True))


_OPENERS = _alternatives([w for wrote in _WROTE.values() for w in wrote.openers])
_VERBS = _alternatives([v for wrote in _WROTE.values() for v in wrote.verbs + wrote.named])
_ENDS = _alternatives([v for wrote in _WROTE.values() for v in wrote.verbs])
_NAMED = _alternatives([v for wrote in _WROTE.values() for v in wrote.named])
# An address as clients write it in an attribution: <a@b>, (a@b), [mailto:a@b], wrapped.
_ADDRESS = r"[<(\[]\s*(?:mailto:)?[^\s<>()\[\]@]+@[^\s<>()\[\]]+\s*[>)\]]"

# What a client's attribution always names: a time, a year, a numeric date or an address.
_TIMES, _YEARS, _AT_SIGN = (
    r"(?<!\d)\d{1,2}[:.]\d{2}(?!\d)",
    r"(?<!\d)(?:19|20)\d{2}(?!\d)",
    r"\S@\S",
)
_TIME, _YEAR, _AT = re.compile(_TIMES), re.compile(_YEARS), re.compile(_AT_SIGN)
_DATED = re.compile(rf"{_TIMES}|{_YEARS}|\d[./-]\d{{1,2}}[./-]\d|{_AT_SIGN}")

# Where a client begins an attribution: an opener word, or the date itself ("tir. 18. apr.").
_OPENER_START = re.compile(rf"^[-\s]*(?:{_OPENERS})\s", re.I)
_DATED_START = r"^[-\s]*(?:\d{1,4}[./:\s-]|[^\W\d_]{1,12}[.,]\s*\d"  # "15. marts", "tir. 18."
_DATE_START = re.compile(_DATED_START + r"|[^\W\d_A-Z]{1,3}\s+\d)")  # and "ons 4 dec.", "pe 20."
_CLEAR_START = re.compile(_DATED_START + ")")
_ANY_START = re.compile(r"")


@dataclass(frozen=True)
class _Shape:
    """One shape of attribution line: how it begins, how it ends, and what it must name."""

    clients: str  # who writes it
    start: re.Pattern[str]  # matched at its beginning
    end: re.Pattern[str]  # searched for at its end (each pattern ends with `$`)
    names: tuple[re.Pattern[str], ...]  # each searched for anywhere in it


_SHAPES = (
    _Shape(  # "On Mon, Jan 1, 2024 at 10:00 AM Carla <carla@example.org> wrote:"
        "Gmail, Apple Mail, Thunderbird, Outlook mobile, Zimbra, in each language",
        _OPENER_START,
        re.compile(rf"(?:\b(?:{_ENDS})\s*|\b(?:{_NAMED})\b[^:]{{0,160}}):\s*$", re.I),
        (_DATED,),
    ),
    _Shape(  # "On Wed, 14 Nov 2018 08:14:43 -0200 John Doe <john@doe.com> wrote"
        "the same without its colon",
        _OPENER_START,
        re.compile(rf"\b(?:{_ENDS})\s*$", re.I),
        (_AT,),
    ),
    _Shape(  # "tir. 18. apr. 2017 kl. 13:09 skrev Test user <test@example.com>:"
        "Gmail in Scandinavian languages, Polish, Finnish, Czech, Turkish; Thunderbird, Mutt",
        _DATE_START,
        re.compile(rf"(?:\b(?:{_ENDS})\s*|\b(?:{_NAMED})\b[^:]{{0,160}}):\s*$", re.I),
        (_DATED,),
    ),
    _Shape(  # "John Doe <john@doe123.com> wrote:", "... <addr> kirjoitti:"
        "an address just before the verb (K-9, Samsung, Android, Gmail in Finnish)",
        _ANY_START,
        re.compile(rf"{_ADDRESS}\s*(?:{_VERBS})\s*:?\s*$", re.I),
        (),
    ),
    _Shape(  # "ср, 30 апр. 2025 г. в 15:19, John Doe <doe@example.com>:"
        "no verb: Gmail in Russian and Japanese, Yandex, Mail.ru, a time before the date",
        _ANY_START,
        re.compile(rf"{_ADDRESS}\s*:\s*$"),
        (_TIME, _YEAR),
    ),
    _Shape(  # "---- On Wed, 24 Feb 2021 14:02:50 +0530 john@gmail.com wrote ----"
        "framed by dashes: Zoho, Android",
        re.compile(r"^\s*-{2,}"),
        re.compile(rf"\b(?:{_VERBS})\s*:?\s*-{{2,}}\s*$", re.I),
        (),
    ),
)
# How a line that can end an attribution ends (a prefilter on its last characters, for speed).
_CAN_END = re.compile(rf"(?:[:\-]|\b(?:{_VERBS}))\s*$", re.I)
_TAIL = 40
_END = 200  # characters: the longest end of an attribution ("schrieb <name> <address>:")


# Outlook's and Windows Mail's header block, per language: its From-like words, the words
# before its date, and its others. A block is two of them or more, one the From-like line or a
# dated one ("Date: Wed, 16 May 2012 00:15:02 -0600").
_HEADERS = {
    "en": (("From",), ("Sent", "Date"), ("To", "Subject", "Cc")),
    "it": (("Da",), ("Inviato", "Data"), ("A", "Oggetto", "Cc")),
    "de": (("Von",), ("Gesendet", "Datum"), ("An", "Betreff", "Cc")),
    "fr": (("De",), ("Envoyé", "Envoye", "Date"), ("À", "A", "Objet", "Sujet", "Cc", "Copie à")),
    "es": (("De",), ("Enviado", "Enviado el", "Fecha"), ("Para", "Asunto", "CC")),
    "nl": (("Van",), ("Verzonden", "Datum"), ("Aan", "Onderwerp", "CC")),
    "pt": (("De",), ("Enviada em", "Enviado em", "Enviado", "Data"), ("Para", "Assunto", "Cc")),
    "pl": (("Od",), ("Wysłano", "Data"), ("Do", "Temat", "DW")),
    "sv": (("Från",), ("Skickat", "Datum"), ("Till", "Ämne", "Kopia")),
    "da, no": (("Fra",), ("Sendt", "Dato"), ("Til", "Emne", "Kopi", "Cc")),
    "fi": (("Lähettäjä",), ("Lähetetty", "Päivämäärä"), ("Vastaanottaja", "Aihe", "Kopio")),
    "ru": (("От",), ("Отправлено", "Дата"), ("Кому", "Тема", "Копия")),
    "uk": (("Від",), ("Надіслано", "Дата"), ("Кому", "Тема", "Копія")),
    "cs": (("Od",), ("Odesláno", "Datum"), ("Komu", "Předmět", "Kopie")),
}


def _header_pattern(words: Sequence[str]) -> re.Pattern[str]:
    return re.compile(rf"^\s*\*?(?:{_alternatives(words)})\s*:\*?(?:\s|$)", re.I)


@dataclass(frozen=True)
class _Block:
    """One language's header lines: any of them, and those that lead a block."""

    header: re.Pattern[str]
    sender: re.Pattern[str]
    dated: re.Pattern[str]


_HEADER_LINE = _header_pattern([w for words in _HEADERS.values() for w in sum(words, ())])
_BLOCKS = tuple(
    _Block(_header_pattern(froms + dates + others), _header_pattern(froms), _header_pattern(dates))
    for froms, dates, others in _HEADERS.values()
)

_SEPARATOR_WORDS = (
    "Original Message",
    "Forwarded message",
    "Messaggio originale",
    "Messaggio inoltrato",
    "Ursprüngliche Nachricht",
    "Originalnachricht",
    "Weitergeleitete Nachricht",
    "Message d'origine",
    "Message original",
    "Message transféré",
    "Mensaje original",
    "Mensaje reenviado",
    "Oorspronkelijk bericht",
    "Origineel bericht",
    "Doorgestuurd bericht",
    "Oprindelig meddelelse",
    "Oprindelig besked",
)
_SEPARATORS = (
    re.compile(r"^\s*_{8,}\s*$"),
    re.compile(r"^\s*\[?Original Message processed by david\b", re.I),  # Tobit David
    re.compile(r"^\s*-{3,}\s*(" + "|".join(_SEPARATOR_WORDS) + r")\s*-{3,}\s*$", re.I),
    re.compile(
        r"^\s*(Begin forwarded message|Inizio messaggio inoltrato|"
        r"Anfang der weitergeleiteten Nachricht|Début du message réexpédié|"
        r"Inicio del mensaje reenviado|Begin doorgestuurd bericht)\s*:\s*$",
        re.I,
    ),
)
_FOOTERS = re.compile(
    r"^\s*(Sent from my\b|Sent from Mail for\b|Sent from Outlook\b|Sent from Yahoo\b|"
    r"Get Outlook for\b|Inviato da\b|Inviato dal mio\b|Scarica Outlook per\b|"
    r"Sent with Proton Mail\b|Inviato con\b|Von meinem\b.*gesendet|Gesendet von\b|"
    r"Envoyé de mon\b|Envoyé depuis\b|Enviado desde mi\b|Verzonden vanaf mijn\b|"
    r"Verstuurd vanaf mijn\b)",
    re.I,
)

# The library's patterns, for the languages the tables above do not hold.
_OURS = {code for table in (_WROTE, _HEADERS) for key in table for code in key.split(", ")}
_LIBRARY_WROTE = tuple(
    re.compile(patterns["wrote_header"], re.I)
    for language, patterns in sorted(MAIL_LANGUAGES.items())
    if len(language) == 2 and language not in _OURS and patterns.get("wrote_header")
)
_CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uff00-\uffef]")
_LIBRARY_HEADERS = tuple(
    re.compile(patterns["from_header"], re.I)
    for language, patterns in sorted(MAIL_LANGUAGES.items())
    if len(language) == 2 and language not in _OURS and patterns.get("from_header")
)


def strip_reply(text: str) -> str:
    """The part of a mail body the sender wrote in this message."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    skip_to = 0  # the lines of an attribution already passed
    for index, line in enumerate(lines):
        if index < skip_to:
            continue
        if line.rstrip() == "--":
            break  # signature
        if line.lstrip().startswith(">"):
            continue
        span = _attribution(lines, index)
        if span:
            following = _next_text(lines, index + span)
            if following is not None and lines[following].lstrip().startswith(">"):
                # A bottom-posted or interleaved reply: the quote is `>`-marked, so what
                # follows it without a mark is the sender's own (unless more history).
                skip_to = following
                continue
            break
        if _other_history_starts(lines, index):
            break
        kept.append(line.rstrip())
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def _next_text(lines: Sequence[str], start: int) -> int | None:
    """The index of the first line from start holding text, if any."""
    for index in range(start, min(len(lines), start + 8)):
        if lines[index].strip():
            return index
    return None


def quoted_history_starts(lines: Sequence[str], index: int) -> bool:
    """Whether the quoted history (or a footer) begins at this line."""
    return bool(_attribution(lines, index)) or _other_history_starts(lines, index)


def _other_history_starts(lines: Sequence[str], index: int) -> bool:
    """Whether a separator, a footer or a header block begins at this line."""
    line = lines[index]
    if not line.strip() or len(line) > LONGEST:
        return False
    if any(p.match(line) for p in _SEPARATORS) or _FOOTERS.match(line):
        return True
    if _HEADER_LINE.match(line) and _header_block(lines, index):
        return True
    return _library_says_history(lines, index)


def _attribution(lines: Sequence[str], index: int) -> int:
    """How many lines the attribution beginning at this line spans (0: none begins here).

    A client wraps a long attribution, so the line and up to four more are read as one
    (skipping one blank line, as Polymail writes); a wrapped one begins where a client
    begins it (an opener word or the date), and not at a line of the sender's own above
    an attribution that begins on a later line."""
    pieces = _pieces(lines, index)
    for count in range(1, len(pieces) + 1):
        if not _CAN_END.search(pieces[count - 1][1][-_TAIL:]):
            continue
        joined = " ".join(piece for _, piece in pieces[:count])
        if count > 1 and not _begins(joined):
            break
        if _is_shaped(joined):
            for later in range(1, count):
                rest = " ".join(piece for _, piece in pieces[later:count])
                if (_OPENER_START.match(rest) or _CLEAR_START.match(rest)) and _is_shaped(rest):
                    return 0  # the attribution begins on a later line
            return pieces[count - 1][0] - index + 1
    return 0


def _begins(text: str) -> bool:
    """Whether a client may begin an attribution so: with an opener word or the date."""
    return bool(_OPENER_START.match(text) or _DATE_START.match(text))


def _pieces(lines: Sequence[str], index: int) -> list[tuple[int, str]]:
    """The line at index and the lines that may continue it as a wrapped attribution."""
    first = lines[index].strip()
    if not first or len(first) > LONGEST:
        return []
    pieces = [(index, first)]
    if not _begins(first):
        return pieces  # only a client's own beginning is wrapped
    length = len(first)
    blanks = 0 if _OPENER_START.match(first) else 1  # only "On ..." spans a blank line
    for at in range(index + 1, min(len(lines), index + _WRAPPED + 1)):
        if len(pieces) == _WRAPPED or pieces[-1][1].endswith(":"):
            break
        piece = lines[at].strip()
        if not piece:
            blanks += 1
            if blanks > 1:
                break
            continue
        length += len(piece) + 1
        if len(piece) > _PIECE or length > LONGEST or _OPENER_START.match(piece):
            break  # too long, or another attribution
        pieces.append((at, piece))
    return pieces


def _is_shaped(text: str) -> bool:
    tail = max(0, len(text) - _END)
    return any(
        shape.start.match(text)
        and shape.end.search(text, tail)
        and all(name.search(text) for name in shape.names)
        for shape in _SHAPES
    )


def _header_block(lines: Sequence[str], index: int) -> bool:
    """This header-like line and the next few hold two headers of one language, one of them
    From-like or a dated one."""
    window = [ln for ln in lines[index : index + 6] if ln.strip() and len(ln) <= LONGEST][:4]
    for block in _BLOCKS:
        found = [ln for ln in window if block.header.match(ln)]
        if len(found) >= 2 and any(
            block.sender.match(ln) or (block.dated.match(ln) and _TIME.search(ln)) for ln in found
        ):
            return True
    return False


def _library_says_history(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    if not _CJK.search(line):
        return False  # the library's languages left are Japanese, Korean and Chinese
    if any(p.match(line.strip()) for p in _LIBRARY_WROTE):
        return True
    window = "\n".join(ln for ln in lines[index : index + 4] if len(ln) <= LONGEST)
    return any(p.match(window) for p in _LIBRARY_HEADERS)
