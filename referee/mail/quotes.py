"""Strip what a reply quotes and what a client appends, so only the player's own words remain.

Serves the mail commands of rules 103-215: a command quoted from an earlier mail, or planted in
a proposal's text that a client quotes without `>`, must never be obeyed. The rules are data:
tables per language and per client, read by one pass over the lines.

- attribution lines, in the shapes of `_SHAPES`: Gmail, Apple Mail, Thunderbird, Outlook mobile
  and Zimbra ("On ... wrote:", "Il ... ha scritto:", "Am ... schrieb ...:", "Em ... escreveu:",
  "W dniu ... napisał:", "Den ... skrev:", "Op ... het volgende geschreven:", ...), Gmail's
  forms led by the date ("tir. 18. apr. 2017 kl. 13:09 skrev ... <addr>:", "pe 20. lokakuuta
  2017 klo 17.50 ... <addr> kirjoitti:"), the forms with no verb (Gmail in Russian, Yandex,
  Mail.ru, a time before the date: "30.09.2017, 18.30, "Name" <addr>:"), the address with
  its link inside (Outlook on an iPad: "<a@b<mailto:a@b>>"), the forms framed by
  dashes (Zoho, Android: "---- On ... wrote ----", "---- Am ... schrieb Carla <addr> ----"),
  "wrote" without its colon, the name first
  (Gmail and Outlook in Turkish: "Carla <addr>, 1 Oca 2024 Pzt, 10:00 tarihinde şunu yazdı:"),
  led by words (Apple Mail in Polish: "Wiadomość napisana przez ... w dniu ..., o godz. 10:00:"),
  and each of them wrapped over up to five lines (Polymail puts the address on lines of its own);
  Gmail in Greek ("Στις ... έγραψε:"), Indonesian ("Pada tanggal ... menulis:"), Korean ("...
  <addr>님이 작성:") and Chinese (name and address first: "... <addr> 于...08:00写道：");
- Outlook's and Windows Mail's unprefixed history: a block of header lines in one language
  ("From:/Sent:/To:/Subject:", "Da:/Inviato:", "De:/Enviada em:/Para:/Assunto:",
  "От:/Отправлено:/Кому:", "Feladó:/Elküldve:", "De la:/Trimis:", "Από:/Στάλθηκε:", "差出人:/
  送信日時:", ...), two or more in a row;
- separators: "-----Original Message-----" and its siblings in each language ("-----Mensagem
  original-----", "-----Wiadomość oryginalna-----", "-----Исходное сообщение-----", ...),
  Gmail's "---------- Forwarded message ---------", Apple's "Begin forwarded message:",
  Outlook's line of underscores above its header block;
- `>` lines, the signature separator "-- " (exactly: "--" is the player's line), and mobile
  footers ("Sent from my iPhone", ...).

An attribution not framed by dashes must name a date, a time or an address, as every client's
does: "On Monday I wrote:" or "Il giorno dopo Carla ha scritto:" in the player's own text is his
prose, and so is a sentence that ends a clause before its verb or gives the verb to a pronoun
("On 9 December 2026 at 09:00 the vote closes; as I wrote:"); one naming an address but no date
("As Bob <bob@example.org> wrote:") counts only above a `>`-marked quote. The Outlook header
block must hold its From line or a dated Sent/Date line, and a From line and one other count
only if one names an address or a date: "From: me", "Da: Ada" / "A: tutti" are the player's own
lines, and the commands under them are his. A `>`-marked quote under an attribution is a
bottom-posted or interleaved reply: the quote and its attribution are dropped and the unmarked
text after them kept, until more history begins.

The maintained library mail-parser-reply was evaluated: it misses several of the forms above
and its whole-text regular expressions take quadratic time on one long line (33 s for a 40 kB
line), so it cannot be run on a hostile body. Its patterns for the languages the tables here do
not hold (Japanese, Korean, Chinese) are used, on single short lines and bounded windows.
Everything is one pass over the lines with bounded look-ahead: linear in the size of the mail.
"""

from __future__ import annotations

import itertools
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
    "tr": _Wrote((), ("şunu yazdı", "şunları yazdı")),
    "el": _Wrote(("Στις",), ("έγραψε",)),
    "id": _Wrote(("Pada", "Pada tanggal"), ("menulis",)),
    "ko": _Wrote((), ("님이 작성",)),  # Gmail: "..., Carla <carla@example.org>님이 작성:"
    "zh": _Wrote((), ("写道", "寫道")),  # Gmail: "Carla <carla@example.org> 于...08:00写道："
}


def _alternatives(words: Sequence[str]) -> str:
    return "|".join(sorted(set(words), key=len, reverse=True))


_OPENERS = _alternatives([w for wrote in _WROTE.values() for w in wrote.openers])
_VERBS = _alternatives([v for wrote in _WROTE.values() for v in wrote.verbs + wrote.named])
_ENDS = _alternatives([v for wrote in _WROTE.values() for v in wrote.verbs])
_NAMED = _alternatives([v for wrote in _WROTE.values() for v in wrote.named])
# An address as clients write it in an attribution: <a@b>, (a@b), [mailto:a@b], wrapped.
# Outlook on an iPad writes the address with its link inside: <a@b<mailto:a@b>>.
_ADDRESS = (
    r"[<(\[]\s*(?:mailto:)?[^\s<>()\[\]@]+@[^\s<>()\[\]]+(?:<mailto:[^\s<>]{1,254}>)?\s*[>)\]]"
)

# What a client's attribution always names: a time, a year, a numeric date or an address.
_TIMES, _YEARS, _AT_SIGN = (
    r"(?<!\d)\d{1,2}[:.]\d{2}(?!\d)",
    r"(?<!\d)(?:19|20)\d{2}(?!\d)",
    r"\S@\S",
)
_TIME, _YEAR, _AT = re.compile(_TIMES), re.compile(_YEARS), re.compile(_AT_SIGN)
_WHEN = re.compile(rf"{_TIMES}|{_YEARS}|\d[./-]\d{{1,2}}[./-]\d")  # a time or a date
_NAMED_BY = re.compile(rf"{_WHEN.pattern}|{_AT_SIGN}")  # a time, a date or an address

# Where a client begins an attribution: an opener word, or the date itself ("tir. 18. apr.").
_OPENER_START = re.compile(rf"^[-\s]*(?:{_OPENERS})\s", re.I)
_DATED_START = r"^[-\s]*(?:\d{1,4}[./:\s-]|[^\W\d_]{1,12}[.,]\s*\d"  # "15. marts", "tir. 18."
_DATE_START = re.compile(_DATED_START + r"|[^\W\d_A-Z]{1,3}\s+\d)")  # and "ons 4 dec.", "pe 20."
_CLEAR_START = re.compile(_DATED_START + ")")
_ANY_START = re.compile(r"")
# Where the name comes first, then its address and a comma, then the date: Gmail and Outlook in
# Turkish ("Carla <carla@example.org>, 1 Oca 2024 Pzt, 10:00 tarihinde şunu yazdı:").
_NAME_START = re.compile(rf"^\s*[^\s<>()\[\]@][^<>()\[\]@]{{0,80}}{_ADDRESS}\s*,")
# Words that lead an attribution with no verb at its end: Apple Mail in Polish ("Wiadomość
# napisana przez Carla <carla@example.org> w dniu 01.01.2024, o godz. 10:00:").
_LEAD_START = re.compile(r"^\s*Wiadomo(?:ść|sc) napisana przez\s", re.I)
# Where the name and its address come first with no comma: Gmail in Chinese ("Carla
# <carla@example.org> 于2026年12月2日周三 08:00写道：").
_ADDRESSED_START = re.compile(rf"^\s*[^\s<>()\[\]@][^<>()\[\]@]{{0,80}}{_ADDRESS}")
# What a sentence of the player's own holds and an attribution never does: "On 9 December 2026
# at 09:00 the vote closes; as I wrote:" is prose (an attribution's verb follows a name or an
# address, never a pronoun, and no clause ends before it).
_PROSE = re.compile(
    r"[;!?]|\b(?:I|we|you|they|he|she|io|noi|tu|voi|lui|lei|loro)\s+(?:wrote|ha scritto|"
    r"hanno scritto|abbiamo scritto|ho scritto)\s*:?\s*$",
    re.I,
)


@dataclass(frozen=True)
class _Shape:
    """One shape of attribution line: how it begins, how it ends, and what it must name."""

    clients: str  # who writes it
    start: re.Pattern[str]  # matched at its beginning
    end: re.Pattern[str]  # searched for at its end (each pattern ends with `$`)
    names: tuple[re.Pattern[str], ...] = ()  # each searched for anywhere in it
    # True: naming no time or date (only an address), it is one only above a `>` quote
    when: bool = True


_SHAPES = (
    _Shape(  # "On Mon, Jan 1, 2024 at 10:00 AM Carla <carla@example.org> wrote:"
        "Gmail, Apple Mail, Thunderbird, Outlook mobile, Zimbra, in each language",
        _OPENER_START,
        re.compile(rf"(?:\b(?:{_ENDS})\s*|\b(?:{_NAMED})\b[^:]{{0,160}}):\s*$", re.I),
        (_NAMED_BY,),
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
        (_NAMED_BY,),
    ),
    _Shape(  # "Carla <carla@example.org>, 13 Şub 2020 Per, 10:15 tarihinde şunu yazdı:"
        "the name and address first, then the date and the verb: Gmail, Outlook in Turkish",
        _NAME_START,
        re.compile(rf"\b(?:{_ENDS})\s*:\s*$", re.I),
    ),
    _Shape(  # "Carla De Santis <carla@example.org> 于2026年12月2日周三 08:00写道："
        "the name and address first, no comma, then the date and the verb: Gmail in Chinese",
        _ADDRESSED_START,
        re.compile(r"(?:写道|寫道)\s*[:：]\s*$"),
        (_TIME,),
    ),
    _Shape(  # "Wiadomość napisana przez Carla <addr> w dniu 01.01.2024, o godz. 10:00:"
        "led by words, no verb at its end: Apple Mail in Polish",
        _LEAD_START,
        re.compile(r":\s*$"),
    ),
    _Shape(  # "pe 20. lokakuuta 2017 klo 17.50 John Coe <addr> kirjoitti:"
        "an address just before the verb (K-9, Samsung, Android, Gmail in Finnish)",
        _ANY_START,
        re.compile(rf"{_ADDRESS}\s*(?:{_VERBS})\s*:?\s*$", re.I),
    ),
    _Shape(  # "ср, 30 апр. 2025 г. в 15:19, John Doe <doe@example.com>:"
        "no verb: Gmail in Russian and Japanese, Yandex, Mail.ru, a time before the date",
        _ANY_START,
        re.compile(rf"{_ADDRESS}\s*:\s*$"),
        (_TIME, _YEAR),
        when=False,
    ),
    _Shape(  # "---- On Wed, 24 Feb 2021 14:02:50 +0530 john@gmail.com wrote ----"
        "framed by dashes: Zoho, Android",
        re.compile(r"^\s*-{2,}"),
        re.compile(rf"(?:\b(?:{_VERBS})|\b(?:{_NAMED})\b[^-]{{0,160}})\s*:?\s*-{{2,}}\s*$", re.I),
        when=False,
    ),
)
# The shapes that also begin a wrapped attribution (besides an opener word or the date).
_WRAPPED_STARTS = (_NAME_START, _LEAD_START)
# How a line that can end an attribution ends (a prefilter on its last characters, for speed).
_CAN_END = re.compile(rf"(?:[:：\-]|\b(?:{_VERBS}))\s*$", re.I)
_TAIL = 40
_END = 200  # characters: the longest end of an attribution ("schrieb <name> <address>:")


# Outlook's and Windows Mail's header block, per language: its From-like words, the words
# before its date, and its others. A block is two of them or more, one the From-like line or a
# dated one ("Date: Wed, 16 May 2012 00:15:02 -0600").
_HEADERS = {
    "en": (("From",), ("Sent", "Date"), ("To", "Subject", "Cc")),
    "it": (("Da",), ("Inviato", "Data"), ("A", "Oggetto", "Cc")),
    "de": (("Von",), ("Gesendet", "Datum"), ("An", "Betreff", "Cc")),
    "fr": (
        ("De",),
        ("Envoyé le", "Envoye le", "Envoyé", "Envoye", "Date"),
        ("À", "A", "Objet", "Sujet", "Cc", "Copie à"),
    ),
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
    "hu": (("Feladó",), ("Elküldve", "Dátum"), ("Címzett", "Tárgy", "Másolatot kap")),
    "ro": (("De la",), ("Trimis", "Data"), ("Către", "Catre", "Subiect", "Cc")),
    "el": (("Από",), ("Στάλθηκε", "Ημερομηνία"), ("Προς", "Θέμα", "Κοιν")),
    "ja": (("差出人", "送信者"), ("送信日時", "日付"), ("宛先", "件名", "CC")),
    "ko": (("보낸 사람",), ("보낸 날짜",), ("받는 사람", "제목", "참조")),
    "zh": (
        ("发件人", "寄件者"),
        ("发送时间", "寄件日期", "日期"),
        ("收件人", "收件者", "主题", "主旨", "抄送"),
    ),
}


def _header_pattern(words: Sequence[str]) -> re.Pattern[str]:
    return re.compile(rf"^\s*\*{{0,2}}(?:{_alternatives(words)})\s*[:：]\*{{0,2}}(?:\s|$)", re.I)


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

# What Outlook, Thunderbird, Gmail and the webmails write between dashes above the history,
# in each language ("-----Original Message-----", "---------- Forwarded message ---------").
_SEPARATOR_WORDS = (
    "Original Message",
    "Forwarded message",
    "Messaggio originale",  # it
    "Messaggio inoltrato",
    "Ursprüngliche Nachricht",  # de
    "Originalnachricht",
    "Original-Nachricht",
    "Weitergeleitete Nachricht",
    "Message d'origine",  # fr
    "Message original",
    "Message transféré",
    "Mensaje original",  # es
    "Mensaje reenviado",
    "Mensagem original",  # pt
    "Mensagem encaminhada",
    "Oorspronkelijk bericht",  # nl
    "Origineel bericht",
    "Doorgestuurd bericht",
    "Ursprungligt meddelande",  # sv
    "Vidarebefordrat meddelande",
    "Oprindelig meddelelse",  # da
    "Oprindelig besked",
    "Videresendt meddelelse",
    "Opprinnelig melding",  # no
    "Videresendt melding",
    "Alkuperäinen viesti",  # fi
    "Välitetty viesti",
    "Wiadomość oryginalna",  # pl
    "Oryginalna wiadomość",
    "Wiadomość przekazana dalej",
    "Przekazana wiadomość",
    "Původní zpráva",  # cs
    "Přeposlaná zpráva",
    "Özgün ileti",  # tr
    "Orijinal mesaj",
    "İletilen ileti",
    "Yönlendirilmiş ileti",
    "Исходное сообщение",  # ru
    "Пересылаемое сообщение",
    "Пересланное сообщение",
    "Оригінальне повідомлення",  # uk
    "Вихідне повідомлення",
    "Переслане повідомлення",
    "Eredeti üzenet",  # hu
    "Továbbított üzenet",
)
_SEPARATORS = (
    re.compile(r"^\s*\[?Original Message processed by david\b", re.I),  # Tobit David
    re.compile(
        r"^\s*-{3,}\s*(" + "|".join(map(re.escape, _SEPARATOR_WORDS)) + r")\s*-{3,}\s*$", re.I
    ),
    re.compile(
        r"^\s*(Begin forwarded message|Inizio messaggio inoltrato|"
        r"Anfang der weitergeleiteten Nachricht|Début du message réexpédié|"
        r"Inicio del mensaje reenviado|Begin doorgestuurd bericht)\s*:\s*$",
        re.I,
    ),
)
_RULE = re.compile(r"^\s*_{8,}\s*$")  # Outlook's line of underscores above its header block
SIGNATURE = "-- "  # the separator of a signature, exactly (RFC 3676, 4.3)
_FOOTERS = re.compile(
    r"^\s*(Sent from my\b|Sent from Samsung\b|Sent from Mail for\b|Sent from Outlook\b|"
    r"Sent from Yahoo\b|"
    r"Get Outlook for\b|Inviato da\b|Inviato dal mio\b|Scarica Outlook per\b|"
    r"Sent with Proton Mail\b|Inviato con\b|Von meinem\b.*gesendet|Gesendet von\b|"
    r"Envoyé de mon\b|Envoyé depuis\b|Enviado desde mi\b|Verzonden vanaf mijn\b|"
    r"Verstuurd vanaf mijn\b)",
    re.I,
)

# The library's patterns, for the languages the tables above do not hold, and beside them for
# Japanese, Korean and Chinese (the tables hold only the forms the library misses).
_CJK_CODES = {"ja", "ko", "zh"}
_OURS = {
    code for table in (_WROTE, _HEADERS) for key in table for code in key.split(", ")
} - _CJK_CODES
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


# Every line `_other_history_starts` can take for history matches this (a prefilter, one search a
# line rather than seven: the alternatives are its patterns, each read case-blind, which only
# lets more lines through to the exact checks).
_MAYBE_HISTORY = re.compile(
    "|".join(
        f"(?:{p.pattern})" if p is _CJK else f"^(?:{p.pattern})"
        for p in (*_SEPARATORS, _FOOTERS, _RULE, _HEADER_LINE, _CJK)
    ),
    re.I,
)


def strip_reply(text: str) -> str:
    """The part of a mail body the sender wrote in this message."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    ends = _can_end(lines)
    kept: list[str] = []
    skip_to = 0  # the lines of an attribution already passed
    for index, line in enumerate(lines):
        if index < skip_to:
            continue
        if line == SIGNATURE:
            break  # the signature, under its separator: "-- " exactly ("--" is the player's)
        if line.lstrip().startswith(">"):
            continue
        span, dated = _attribution(lines, index, ends)
        if span:
            following = _next_text(lines, index + span)
            if following is not None and lines[following].lstrip().startswith(">"):
                # A bottom-posted or interleaved reply: the quote is `>`-marked, so what
                # follows it without a mark is the sender's own (unless more history).
                skip_to = following
                continue
            if dated:
                break
            # "As Bob <bob@example.org> wrote:" names no date: above no quote, it is prose
        if _other_history_starts(lines, index):
            break
        kept.append(line.rstrip())
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def cut_at_top(text: str) -> tuple[str, str]:
    """When a mail's first line of text starts what is never the sender's own (a mobile
    footer, the signature separator "-- ", an Outlook header block or a separator) and text
    follows it, so that nothing of the mail is read: which of them ("footer", "signature",
    "header") and that line; else ("", "")."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = _next_text(lines, 0)
    if first is None or strip_reply(text).strip():
        return "", ""
    line = lines[first]
    if not any(ln.strip() for ln in lines[first + 1 :]):
        return "", ""  # nothing below it was left unread
    if line == SIGNATURE:
        return "signature", SIGNATURE
    shown = line.strip()[:80]
    if len(line) > LONGEST:
        return "", ""
    if _FOOTERS.match(line):
        return "footer", shown
    if any(p.match(line) for p in _SEPARATORS) or _RULE.match(line) or _header_block(lines, first):
        return "header", shown
    return "", ""


def _can_end(lines: Sequence[str]) -> list[bool]:
    """For each line (and past the last), whether it may end an attribution or begins one
    within the look-ahead of a wrapped one: one short search a line, so the rest is done only
    where an attribution can be."""
    near = [False] * (len(lines) + 1)
    following = len(lines) + _WRAPPED + 1  # the next line that can end one
    for at in range(len(lines) - 1, -1, -1):
        stripped = lines[at].strip()
        if stripped and len(stripped) <= LONGEST and _CAN_END.search(stripped[-_TAIL:]):
            following = at
        near[at] = following - at <= _WRAPPED
    return near


def _next_text(lines: Sequence[str], start: int) -> int | None:
    """The index of the first line from start holding text, if any."""
    for index in range(start, min(len(lines), start + 8)):
        if lines[index].strip():
            return index
    return None


def quoted_history_starts(lines: Sequence[str], index: int) -> bool:
    """Whether the quoted history (or a footer) begins at this line (an attribution that
    names no date counts only above a `>`-marked quote, which is history anyway)."""
    span, dated = _attribution(lines, index)
    return bool(span and dated) or _other_history_starts(lines, index)


def _other_history_starts(lines: Sequence[str], index: int) -> bool:
    """Whether a separator, a footer or a header block begins at this line."""
    if not _MAYBE_HISTORY.search(lines[index]):
        return False  # none of the checks below can take it
    return _history_starts_exactly(lines, index)


def _history_starts_exactly(lines: Sequence[str], index: int) -> bool:
    """`_other_history_starts` with no prefilter: each check in turn."""
    line = lines[index]
    if not line.strip() or len(line) > LONGEST:
        return False
    if any(p.match(line) for p in _SEPARATORS) or _FOOTERS.match(line):
        return True
    if _RULE.match(line):  # Outlook's line of underscores: above its header block only
        following = _next_text(lines, index + 1)
        return following is not None and (
            _header_block(lines, following) or _sender_line(lines[following])
        )
    return _header_block(lines, index) or _library_says_history(lines, index)


def _attribution(
    lines: Sequence[str], index: int, ends: Sequence[bool] | None = None
) -> tuple[int, bool]:
    """How many lines the attribution beginning at this line spans (0: none begins here), and
    whether it names a time or a date (else only its address: then it is one only above a
    `>`-marked quote).

    A client wraps a long attribution, so the line and up to four more are read as one
    (skipping one blank line, as Polymail writes); a wrapped one begins where a client
    begins it (an opener word, the date, or the Turkish and Polish forms' beginnings), and
    not at a line of the sender's own above an attribution that begins on a later line.
    `ends` (of `_can_end`) skips at once the lines no attribution can begin at."""
    if ends is not None and not ends[index]:
        return 0, False
    pieces = _pieces(lines, index)
    for count in range(1, len(pieces) + 1):
        if not _CAN_END.search(pieces[count - 1][1][-_TAIL:]):
            continue
        joined = " ".join(piece for _, piece in pieces[:count])
        if count > 1 and not _begins(joined):
            break
        shaped = _shaped(joined)
        if shaped:
            for later in range(1, count):
                rest = " ".join(piece for _, piece in pieces[later:count])
                if (_OPENER_START.match(rest) or _CLEAR_START.match(rest)) and _shaped(rest):
                    return 0, False  # the attribution begins on a later line
            return pieces[count - 1][0] - index + 1, shaped == _DATED
    return 0, False


def _begins(text: str) -> bool:
    """Whether a client may begin an attribution so: with an opener word or the date, or as
    Gmail in Turkish and Apple Mail in Polish do."""
    return bool(
        _OPENER_START.match(text)
        or _DATE_START.match(text)
        or any(start.match(text) for start in _WRAPPED_STARTS)
    )


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


_DATED, _ADDRESSED = 2, 1  # what `_shaped` finds: a dated attribution, or one with an address


def _shaped(text: str) -> int:
    """Whether the text is an attribution: _DATED (it names a time or a date, or needs none),
    _ADDRESSED (it names only an address), or 0."""
    if _PROSE.search(text):
        return 0  # "...; as I wrote:" ends a sentence of the player's own
    tail = max(0, len(text) - _END)
    found = 0
    for shape in _SHAPES:
        if (
            shape.start.match(text)
            and shape.end.search(text, tail)
            and all(name.search(text) for name in shape.names)
        ):
            if not shape.when or _WHEN.search(text):
                return _DATED
            found = _ADDRESSED
    return found


def _header_block(lines: Sequence[str], index: int) -> bool:
    """Whether an Outlook or Windows Mail header block begins at this line: two or more
    header lines of one language in a row, one of them From-like or dated (a time or a year),
    and more than a From line and one other naming neither an address nor a date ("Da: Ada",
    "A: tutti" is the player's own; "From: Carla <carla@example.org>", "To: ..." is not)."""
    if not _HEADER_LINE.match(lines[index]):
        return False
    run: list[str] = []
    for line in lines[index : index + 6]:
        if not line.strip() or len(line) > LONGEST or not _HEADER_LINE.match(line):
            break
        run.append(line)
    if len(run) < 2:
        return False
    for block in _BLOCKS:
        found = list(itertools.takewhile(block.header.match, run))
        if len(found) < 2:
            continue
        senders = [ln for ln in found if block.sender.match(ln)]
        if any(block.dated.match(ln) and _WHEN.search(ln) for ln in found):
            return True
        if senders and (len(found) >= 3 or any(_AT.search(ln) for ln in senders)):
            return True
    return False


def _sender_line(line: str) -> bool:
    """Whether the line is a header block's From line naming an address ("De : a@b.org")."""
    return len(line) <= LONGEST and any(
        block.sender.match(line) and _AT.search(line) for block in _BLOCKS
    )


def _library_says_history(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    if not _CJK.search(line):
        return False  # the library's languages left are Japanese, Korean and Chinese
    if any(p.match(line.strip()) for p in _LIBRARY_WROTE):
        return True
    window = "\n".join(ln for ln in lines[index : index + 4] if len(ln) <= LONGEST)
    return any(p.match(window) for p in _LIBRARY_HEADERS)
