"""Strip what a reply quotes and what a client appends, so only the player's own words remain.

Serves the mail commands of rules 103-215: a command quoted from an earlier mail, or planted in
a proposal's text that a client quotes without `>`, must never be obeyed. The rules are data,
one table per language (English, Italian, German, French, Spanish, Dutch), for the forms the
current clients write:

- attribution lines: Gmail, Apple Mail, Thunderbird ("On ... wrote:", "Il ... ha scritto:",
  "Am ... schrieb ...:", "Le ... a écrit :", "El ... escribió:", "Op ... schreef ...:"), also
  wrapped over up to three lines;
- Outlook's unprefixed history: a block of header lines ("From:/Sent:/To:/Subject:",
  "Da:/Inviato:", "Von:/Gesendet:/An:/Betreff:", "De :/Envoyé :/À :/Objet :",
  "De:/Enviado el:/Para:/Asunto:", "Van:/Verzonden:/Aan:/Onderwerp:") holding a From-like line;
- separators: "-----Original Message-----", Thunderbird's "-------- Original Message --------"
  and "-------- Weitergeleitete Nachricht --------" and their siblings in each language,
  Gmail's "---------- Forwarded message ---------", Apple's "Begin forwarded message:",
  Outlook's line of underscores;
- `>` lines, the signature separator `-- `, and mobile footers ("Sent from my iPhone", ...).

A `>`-marked quote under an attribution is a bottom-posted or interleaved reply: the quote and
its attribution are dropped and the unmarked text after them kept, until more history begins.
An attribution-like first line with no date or address above unmarked text is the sender's own
prose ("On the matter, Carla wrote:"), not a client's attribution.

The maintained library mail-parser-reply was evaluated: it misses several of the forms above
(Spanish "Enviado el:", Gmail's Dutch and Spanish attributions, the German forward header) and
its whole-text regular expressions take quadratic time on one long line (33 s for a 40 kB
line), so it cannot be run on a hostile body. Its per-language patterns are used here as well,
on single short lines and bounded windows, for the languages beyond the six above. Everything
is one pass over the lines with bounded look-ahead: linear in the size of the mail.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mailparser_reply.constants import MAIL_LANGUAGES

LONGEST = 400  # characters: an attribution or header line is never longer

# "On <date>, <name> wrote:", per language: (first word, the words that end it).
_WROTE = {
    "en": (r"On", r"wrote\s*:"),
    "it": (r"Il(?: giorno)?", r"ha scritto\s*:"),
    "de": (r"Am", r"schrieb\b.*:"),
    "fr": (r"Le", r"a [ée]crit\s*:"),
    "es": (r"El", r"escribi[óo]\s*:"),
    "nl": (r"Op", r"schreef\b.*:"),
}
_ATTRIBUTION = re.compile(
    "|".join(rf"(?:{start})\b.*\b(?:{end})" for start, end in _WROTE.values()) + r"\s*$",
    re.I,
)
# Some clients drop the colon ("... <bob@example.org> wrote"): taken as an attribution only
# when it names an address, so a sentence ending "Carla wrote" stays the player's own.
_WROTE_BARE = {
    "en": r"wrote",
    "it": r"ha scritto",
    "de": r"schrieb",
    "fr": r"a [ée]crit",
    "es": r"escribi[óo]",
    "nl": r"schreef",
}
_ATTRIBUTION_BARE = re.compile(
    "|".join(rf"(?:{_WROTE[lang][0]})\b.*@.*\b(?:{end})" for lang, end in _WROTE_BARE.items())
    + r"\s*$",
    re.I,
)
_ATTRIBUTION_START = re.compile(
    r"^\s*(?:" + "|".join(start for start, _ in _WROTE.values()) + r")\s", re.I
)

# Outlook's header block: a From-like line near another header line, in each language.
_FROM_WORDS = ("From", "Da", "Von", "De", "Van")
_OTHER_WORDS = (
    "Sent",
    "Date",
    "To",
    "Subject",
    "Cc",
    "Inviato",
    "Data",
    "A",
    "Oggetto",
    "Gesendet",
    "Datum",
    "An",
    "Betreff",
    "Envoyé",
    "Envoye",
    "À",
    "Objet",
    "Enviado",
    "Enviado el",
    "Fecha",
    "Para",
    "Asunto",
    "Verzonden",
    "Aan",
    "Onderwerp",
)
_HEADER_LINE = re.compile(
    r"^\s*\*?(" + "|".join(_FROM_WORDS + _OTHER_WORDS) + r")\s*:\*?(\s|$)", re.I
)
_FROM_LINE = re.compile(r"^\s*\*?(" + "|".join(_FROM_WORDS) + r")\s*:\*?(\s|$)", re.I)

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
)
_SEPARATORS = (
    re.compile(r"^\s*_{8,}\s*$"),
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

# The library's patterns, for languages beyond the six tables above.
_OURS = {"en", "it", "de", "fr", "es", "nl"}
_LIBRARY_WROTE = tuple(
    re.compile(patterns["wrote_header"], re.I)
    for language, patterns in sorted(MAIL_LANGUAGES.items())
    if len(language) == 2 and patterns.get("wrote_header")
)
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
        if len(line) <= LONGEST and _is_attribution(lines, index):
            following = _next_text(lines, index + 1)
            if following is not None and lines[following].lstrip().startswith(">"):
                # A bottom-posted or interleaved reply: the quote is `>`-marked, so what
                # follows it without a mark is the sender's own (unless more history).
                skip_to = following
                continue
            if not any(ln.strip() for ln in kept) and not _looks_dated(line):
                kept.append(line.rstrip())  # his own prose: "On the matter, Carla wrote:"
                continue
            break
        if quoted_history_starts(lines, index):
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


def _looks_dated(line: str) -> bool:
    """A client's attribution names a date or an address; a player's sentence rarely does."""
    return "@" in line or bool(re.search(r"\d", line))


def quoted_history_starts(lines: Sequence[str], index: int) -> bool:
    """Whether the quoted history (or a footer) begins at this line."""
    line = lines[index]
    if not line.strip() or len(line) > LONGEST:
        return False
    if any(p.match(line) for p in _SEPARATORS) or _FOOTERS.match(line):
        return True
    if _is_attribution(lines, index):
        return True
    if _HEADER_LINE.match(line) and _header_block(lines, index):
        return True
    return _library_says_history(lines, index)


def _is_attribution(lines: Sequence[str], index: int) -> bool:
    line = lines[index].strip()
    if _ATTRIBUTION.match(line) or _ATTRIBUTION_BARE.match(line):
        return True
    # Gmail wraps a long attribution over two or three lines.
    if _ATTRIBUTION_START.match(line):
        joined = line
        for follow in lines[index + 1 : index + 3]:
            if len(follow) > LONGEST:
                break
            joined += " " + follow.strip()
            if _ATTRIBUTION.match(joined) or _ATTRIBUTION_BARE.match(joined):
                return True
    return False


def _header_block(lines: Sequence[str], index: int) -> bool:
    """This header-like line and the next few hold a From-like line and another header."""
    window = [ln for ln in lines[index : index + 6] if ln.strip() and len(ln) <= LONGEST][:4]
    headers = [ln for ln in window if _HEADER_LINE.match(ln)]
    return len(headers) >= 2 and any(_FROM_LINE.match(ln) for ln in headers)


def _library_says_history(lines: Sequence[str], index: int) -> bool:
    line = lines[index]
    if ":" not in line:
        return False
    if any(p.match(line.strip()) for p in _LIBRARY_WROTE):
        return True
    window = "\n".join(ln for ln in lines[index : index + 4] if len(ln) <= LONGEST)
    return any(p.match(window) for p in _LIBRARY_HEADERS)
