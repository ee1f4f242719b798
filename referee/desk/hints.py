"""Lines the referee did not take as commands, and what the player seems to have meant (pure).

Serves every command rule (103-215) and the debate of rule 112: a reply should help the player
act. Outside a proposal's thread every line of the player's own words that no command took is
quoted back in the reply ("I did not act on these lines"), with the nearest command when one
is close ("PROPSE ENACT": did you mean `PROPOSE ENACT`?), or the command alone when one stands
in capitals inside the line ("Ciao, STATO per favore": `STATO`), in either language; a line
that only greets or signs off ("Hi all,", "Cheers", "Un saluto") or only names the sender is
left out (`COURTESY`, `ADDRESSED`: data, in both languages), and so is the short closing block
after the last command that no "-- " marks as a signature. In a proposal's thread those lines
are the player's debate, and only the near-commands are held back. A line that says a vote in plain
words ("I vote yes on 301", "voto sì alla 301", or "+1" in reply to a proposal) is read as the
vote it seems to mean, which is applied only when the player confirms it with a bare yes in
reply; so is a misspelt command put right into a whole one ("VOTTE 301 NO", "VOTE 301 YSE":
`VOTE 301 NO`, `VOTE 301 YES`). Such lines are never relayed as debate: what reaches the table
is the player's talk, never a command they mistyped.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
from collections.abc import Collection
from dataclasses import dataclass

from referee.mail.commands import (
    END_WORDS,
    REGISTRY,
    SyntaxProblem,
    fold,
    match,
    parse_commands,
)

CLOSE = 0.75  # difflib's ratio for a misspelt keyword word ("PROPSE" / "PROPOSE": 0.92)
QUOTED = 8  # lines of a mail answered with the command they seem to mean, at most
UNREAD = 10  # lines of a mail quoted back as not acted on, at most ("and 3 more lines")
SEARCHED = 60  # lines of one mail looked at for a command they may mean; the rest only counted
SIGNATURE = 6  # lines of a mail's closing block, at most, read as a signature without "-- "

# Lines that only greet or sign off are the player's courtesy, never quoted back as lines the
# referee did not act on: whole phrases, in each language (a player may write in either).
COURTESY: dict[str, tuple[str, ...]] = {
    "en": (
        "hi", "hello", "hey", "hiya", "howdy", "dear", "dear all", "greetings", "morning",
        "good morning", "good afternoon", "good evening", "good day", "thanks", "thank you",
        "thanks a lot", "thanks so much", "thank you so much", "thank you very much",
        "many thanks", "thanks again", "thx", "ty", "cheers", "regards", "best regards",
        "kind regards", "warm regards", "best wishes", "best", "all the best", "yours",
        "yours truly", "sincerely", "yours sincerely", "bye", "goodbye", "see you",
        "see you soon", "talk soon", "speak soon", "take care", "love", "have a nice day",
        "have a good day", "thanks in advance", "thank you in advance", "xoxo", "xo",
    ),
    "it": (
        "ciao", "salve", "buongiorno", "buon giorno", "buonasera", "buona sera",
        "buon pomeriggio", "gentile", "gentili", "caro", "cara", "cari", "care", "carissimi",
        "grazie", "grazie mille", "mille grazie", "grazie ancora", "saluti", "cari saluti",
        "cordiali saluti", "distinti saluti", "tanti saluti", "un saluto", "un caro saluto",
        "a presto", "a dopo", "a domani", "alla prossima", "buona giornata", "buona serata",
        "un abbraccio", "arrivederci", "a risentirci", "grazie in anticipo",
        "grazie in anticipo a tutti", "baci", "un bacio",
    ),
}  # fmt: skip
# Whom a greeting names besides the players: "Hi all", "Ciao a tutti", "Dear referee".
ADDRESSED: dict[str, tuple[str, ...]] = {
    "en": (
        "all", "everyone", "everybody", "folks", "guys", "friends", "team", "players",
        "referee", "king", "there", "to all",
    ),
    "it": ("tutti", "tutte", "a tutti", "ragazzi", "amici", "giocatori", "arbitro", "re"),
}  # fmt: skip

_KEYWORDS = sorted(
    {tuple(fold(w) for w in kw.split()) for s in REGISTRY for kw in (s.english, s.italian)},
    key=len,
    reverse=True,
)

_WIDEST = len(_KEYWORDS[0])
# Each language's own keywords: a misspelling as close to both reads as the mail's language.
_OWN_KEYWORDS = {
    "en": frozenset(tuple(fold(w) for w in s.english.split()) for s in REGISTRY),
    "it": frozenset(tuple(fold(w) for w in s.italian.split()) for s in REGISTRY),
}


@dataclass(frozen=True)
class Hint:
    """One line of the mail no command took: where it is, and the command it may mean."""

    index: int  # the line's index in the mail's own words
    line: str
    meant: str = ""  # a command, written out, that the line seems to mean
    confirm: bool = False  # `meant` is a whole command: applied when the player confirms it
    skipped: int = 0  # the lines after it through END, the misspelt command's text: not taken


@functools.lru_cache(maxsize=8192)
def _ratio(word: str, keyword: str) -> float:
    """difflib's ratio, skipped when the lengths alone keep it under CLOSE (2m/(a+b))."""
    if 2 * min(len(word), len(keyword)) < CLOSE * (len(word) + len(keyword)):
        return 0.0
    matcher = difflib.SequenceMatcher(None, word, keyword)
    return matcher.ratio() if matcher.quick_ratio() >= CLOSE else 0.0


def _close(word: str, keyword: str) -> bool:
    if word == keyword:
        return True
    if len(word) < 3:
        return False
    return _ratio(word, keyword) >= CLOSE


def nearest(line: str, sender: str = "", language: str = "en") -> str:
    """The command `line` seems to mean when its keyword is misspelt, else ""."""
    words = line.split()
    if not words or match(line) is not None:
        return ""
    folded = [fold(w).strip(".,;:!?") for w in words[:_WIDEST]]
    own = _OWN_KEYWORDS["it" if language == "it" else "en"]
    best: tuple[float, bool, tuple[str, ...]] | None = None
    for keyword in _KEYWORDS:
        width = len(keyword)
        if len(folded) < width:
            continue
        pairs = list(zip(folded, keyword, strict=False))
        if not all(_close(w, k) for w, k in pairs):
            continue
        score = sum(1.0 if w == k else _ratio(w, k) for w, k in pairs) / width
        ranked = (score + 0.01 * width, keyword in own, keyword)
        if best is None or ranked[:2] > best[:2]:
            best = ranked
    if best is None:
        return ""
    keyword = best[2]
    written = " ".join([*keyword, *words[len(keyword) :]])
    hit = match(written)
    if hit is None:
        return ""
    spec = hit[0]
    if spec.multiline:
        return " ".join(keyword)  # its text follows; the keyword is the hint
    if _builds(spec.name, written, sender):
        return written
    # The corrected line must read as the command ("Votes are in" is not VOTE), unless the
    # player wrote the keyword in capitals, as commands are written.
    return " ".join(keyword) if words[0].isupper() else ""


INSIDE = 12  # words of a line looked at for a command written in capitals after other words


def inside(line: str, sender: str = "") -> str:
    """The command a line holds after other words, its keyword in capitals as commands are
    written ("Ciao, STATO per favore": `STATO`; "Hi! VOTE 301 YES please": `VOTE 301 YES`),
    written alone: the shortest run from the keyword that reads as the command, else the
    keyword itself; "" when no keyword stands inside the line."""
    words = [w.strip(".,;:!?") for w in line.split()[:INSIDE]]
    for at in range(1, len(words)):
        if not (words[at].isalpha() and words[at].isupper()):
            continue
        hit = match(" ".join(words[at:]))
        if hit is None:
            continue
        spec, width = hit
        for end in range(at + width, len(words) + 1):
            written = " ".join(w for w in words[at:end] if w)
            if not spec.multiline and _builds(spec.name, written, sender):
                return written
        return " ".join(words[at : at + width])
    return ""


def _answer_words(syntax: str) -> list[str]:
    """The fixed words a command's form names ("VOTE N YES|NO": YES, NO), folded."""
    words = re.split(r"[\s|\[\]()]+", syntax)
    return [fold(w) for w in words[1:] if w.isalpha() and w.isupper() and len(w) > 1]


def corrected(line: str, spec_name: str, sender: str = "") -> str:
    """The command a line that names a command but misspells one of its words seems to mean
    ("VOTE 301 YSE": `VOTE 301 YES`), or ""; only a correction that reads as the command."""
    hit = match(line)
    if hit is None or hit[0].name != spec_name:
        return ""
    spec, width = hit
    choices = {w for lang in ("en", "it") for w in _answer_words(spec.syntax(lang))}
    words = line.split()
    fixed = list(words)
    for index in range(width, len(words)):
        word = fold(words[index]).strip(".,;:!?")
        if word in choices or not word.isalpha():
            continue
        ranked = sorted(
            ((difflib.SequenceMatcher(None, word, c).ratio(), c) for c in choices), reverse=True
        )
        if ranked and ranked[0][0] >= 0.6 and (len(ranked) < 2 or ranked[1][0] < ranked[0][0]):
            fixed[index] = ranked[0][1]
    written = " ".join(fixed)
    if written == line or not _builds(spec.name, written, sender):
        return ""
    return written


def whole(written: str, sender: str = "") -> bool:
    """Whether `written` is one whole command on one line (`VOTE 301 NO`), not a keyword
    alone nor a command whose text follows: what a bare yes may confirm."""
    hit = match(written)
    return hit is not None and not hit[0].multiline and _builds(hit[0].name, written, sender)


def _builds(name: str, written: str, sender: str) -> bool:
    try:
        found = parse_commands(sender, "", written)
    except SyntaxProblem:
        return False
    return bool(found) and found[0].spec.name == name and found[0].command is not None


_NUMBER = r"(?:#|n\.?\s*|no\.?\s*)?(\d{3,4})"
_YES = r"yes|aye|for|in favou?r(?: of)?|s[iì]|favorevole(?: al(?:la)?)?|a favore(?: de(?:lla|l))?"
_NO = r"no|nay|against|contr(?:o|ario)(?: al(?:la)?)?"
_PLAIN_VOTE = re.compile(
    rf"^\s*(?:(?:i|io)\s+)?(?:(?:vote|voting|am voting|'m voting|voto|votes?)\s+)?"
    rf"(?P<answer>{_YES}|{_NO})\s+(?:on|to|for|at|alla|sulla|per|la|a)?\s*"
    rf"(?:(?:the\s+)?proposal|proposta)?\s*{_NUMBER}\s*[.!]*\s*$",
    re.I,
)
_PLUS = re.compile(r"^\s*([+-])1\s*[.!]*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?;,:])\s+")  # a vote may be one sentence of a line


def plain_vote(line: str, proposal: int | None, language: str) -> str:
    """The vote a line says in plain words, written out as the command, or ""."""
    yes_word = "SÌ" if language == "it" else "YES"
    keyword = "VOTO" if language == "it" else "VOTE"
    plus = _PLUS.match(line)
    if plus and proposal is not None:
        return f"{keyword} {proposal} {yes_word if plus.group(1) == '+' else 'NO'}"
    found = _PLAIN_VOTE.match(line)
    if found is None:  # said in a sentence of its own: "Sounds good. I vote yes on 301."
        parts = (p for p in _SENTENCE_END.split(line) if p.strip())
        found = next((m for m in map(_PLAIN_VOTE.match, parts) if m is not None), None)
    if found is None:
        return ""
    answer = fold(found.group("answer")).split()[0]
    yes = answer not in ("NO", "NAY", "AGAINST", "CONTRO", "CONTRARIO")
    return f"{keyword} {int(found.group(2))} {yes_word if yes else 'NO'}"


def _words(text: str) -> tuple[str, ...]:
    """A line's words as a table compares them: folded, punctuation and emoji aside."""
    return tuple(re.findall(r"[^\W_]+", fold(text)))


@functools.lru_cache(maxsize=256)
def _name_words(names: tuple[str, ...]) -> frozenset[str]:
    """The words of players' names as `_words` reads them: the same few names every mail."""
    return frozenset(w for name in names for w in _words(name))


def _phrases(table: dict[str, tuple[str, ...]]) -> dict[str, list[tuple[str, ...]]]:
    """Every phrase of a table in both languages, as words, by its first word, longest first."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for phrase in sorted({_words(p) for ps in table.values() for p in ps}, key=len, reverse=True):
        found.setdefault(phrase[0], []).append(phrase)
    return found


_COURTESY = _phrases(COURTESY)
_ADDRESSED = _phrases(ADDRESSED)


def _phrase_at(words: tuple[str, ...], at: int, table: dict[str, list[tuple[str, ...]]]) -> int:
    """How many words from `at` one of the table's phrases takes (the longest), or 0."""
    for phrase in table.get(words[at], ()):
        if words[at : at + len(phrase)] == phrase:
            return len(phrase)
    return 0


def _courtesy(line: str, mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether a line only greets or signs off ("Hi all,", "Thanks, Ada", "Un saluto") or only
    names the sender (`mine`: the words of the sender's names; `theirs`: of every player's)."""
    words = _words(line)
    if len(words) == 1 and len(words[0]) == 1 and line.strip().rstrip(".") == line.strip()[:1]:
        return True  # an initial alone signs the mail: "B."
    at, greeted, named = 0, False, False
    while at < len(words):
        took = _phrase_at(words, at, _COURTESY)
        if took:
            at, greeted = at + took, True
            continue
        took = _phrase_at(words, at, _ADDRESSED)
        if took:
            at, named = at + took, True
            continue
        if words[at] not in theirs:
            return False
        named = named or words[at] not in mine
        at += 1
    return bool(words) and (greeted or not named)


def courtesy(line: str, own: Collection[str] = (), others: Collection[str] = ()) -> bool:
    """Whether a line only greets, signs off or names a player (`own`: the sender's names;
    `others`: the other players'): never the words a reply quotes as the mail's."""
    mine = _name_words(tuple(own))
    return _courtesy(line, mine, mine | _name_words(tuple(others)))


def _block_end(ends: list[int], index: int, meant: str, used: set[int]) -> int:
    """Where the text of a misspelt command whose text runs to END stops ("PROPSE ENACT",
    its text, END) on line `index`: the index after its END line (`ends`: the END lines'
    indices, in order), or after its own line when a command comes first or no END follows."""
    hit = match(meant)
    if hit is None or not hit[0].multiline:
        return index + 1
    following = bisect.bisect_right(ends, index)
    if following == len(ends):
        return index + 1
    end = ends[following]
    if any(at in used for at in range(index + 1, end)):
        return index + 1
    return end + 1


def _signature_line(line: str) -> bool:
    """Whether a line reads as a signature's (a name, a firm, a title, a telephone number),
    not as a sentence to the referee or the table ("Nice one Carla!", "Why a week?")."""
    words = line.split()
    if len(line) > 60 or len(words) > 8 or line.endswith(("?", "!", ":")):
        return False
    return not (line.endswith(".") and len(words) >= 4)


def _closing_block(lines: list[str], used: set[int]) -> int:
    """Where a mail's signature written without "-- " begins (Outlook's, webmail's: "Studio
    Legale De Santis", "Tel. +39 02 ..."), or len(lines): its closing block, the last lines
    after a blank line, when a command came before it, none is in it, it is short and each
    of its lines reads as a signature's."""
    last = next((at for at in range(len(lines) - 1, -1, -1) if lines[at].strip()), -1)
    blank = next((at for at in range(last - 1, -1, -1) if not lines[at].strip()), -1)
    start = blank + 1
    if blank < 0 or last - start + 1 > SIGNATURE:
        return len(lines)
    if not any(at < start for at in used) or any(at >= start for at in used):
        return len(lines)
    if not all(_signature_line(line.strip()) for line in lines[start : last + 1] if line.strip()):
        return len(lines)
    return start


def hints(
    text: str,
    taken: list[tuple[int, int]],
    proposal: int | None,
    debate: bool,
    language: str,
    sender: str = "",
    own: Collection[str] = (),
    others: Collection[str] = (),
) -> list[Hint]:
    """Every line of `text` no command took that is a vote in plain words or near a command,
    and outside a debate (`debate`: the mail talks in a proposal's thread, where the other
    lines go to the table) every other line of the player's that is not a greeting, a
    sign-off or the sender's name alone (`own`; `others`: the other players' names), nor of
    the signature that closes the mail without "-- " (a line of it near a command is kept)."""
    used: set[int] = set()
    for first, last in taken:
        used.update(range(first, last))
    found: list[Hint] = []
    mine = _name_words(tuple(own))
    theirs = mine | _name_words(tuple(others))
    lines = text.split("\n")
    ends = [at for at, line in enumerate(lines) if fold(line.strip()) in END_WORDS]
    signature = _closing_block(lines, used)
    index = 0
    searched = 0
    while index < len(lines):
        line = lines[index].strip()
        at, index = index, index + 1
        if at in used or not line:
            continue
        searched += 1
        if searched > SEARCHED:  # a flood of lines: counted, never searched (CPU per mail)
            if not debate and any(c.isalnum() for c in line):
                found.append(Hint(at, line))
            continue
        vote = plain_vote(line, proposal, language)
        if vote:
            found.append(Hint(at, line, vote, confirm=True))
            continue
        meant = nearest(line, sender, language) or inside(line, sender)
        if meant:
            # "VOTTE 301 NO" put right is a whole command: done on a bare yes, like a vote
            if not debate:  # its text, to END, is the misspelt command's: said, not quoted
                index = _block_end(ends, at, meant, used)
            skipped = index - at - 1
            found.append(Hint(at, line, meant, confirm=whole(meant, sender), skipped=skipped))
            continue
        if debate or not any(c.isalnum() for c in line) or _courtesy(line, mine, theirs):
            continue
        if at >= signature:  # the signature: its lines are near no command
            continue
        found.append(Hint(at, line))  # the player's words the referee did not act on
    return found
