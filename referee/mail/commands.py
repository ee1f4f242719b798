"""The mail commands: one small spec per command in a registry, English and Italian keywords.

Serves rules 103 (the seven proposal kinds), 112 (REVISE, EXTEND), 114 (QUIT), 202 (AWARD),
203 (VOTE), 209 (WINNER), 212-215 (APPEAL, CHAMPION, RULING, AGREE, ACCUSE, CROWN), 213
(ARCHIVE). Pure: text in, engine events (or a syntax problem) out. HELP is generated from
this registry.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.core import numerals
from referee.core.events import (
    Accuse,
    Admit,
    Agree,
    Archive,
    AskToJoin,
    Award,
    ChooseDelivery,
    Command,
    Confirm,
    Crown,
    Debate,
    Extend,
    GiveRuling,
    MoveAddress,
    NameChampion,
    NameWinner,
    OpenAppeal,
    Propose,
    Query,
    QueryKind,
    Quit,
    Revise,
    SetParameter,
    Vote,
)
from referee.core.mechanics import Mechanic
from referee.core.model import DebateDelivery, ProposalKind
from referee.core.procedure import LEGALITY

END_WORDS = ("END", "FINE")
YES_WORDS = ("YES", "Y", "SI", "AYE", "FOR", "FAVOREVOLE", "FAVORE")
NO_WORDS = ("NO", "N", "NAY", "AGAINST", "CONTRARIO", "CONTRO")
_SET_LINE = re.compile(r"^\s*(SET|IMPOSTA)\s+([A-Za-z_]+)\s*=\s*(\S+)\s*$", re.I)


class SyntaxProblem(ValueError):
    """The line starts like a command but its arguments do not fit the syntax."""


def _cut(word: str, most: int = 40) -> str:
    """A word fit to name in a refusal: a 5,000-digit number is named by its first digits."""
    return word if len(word) <= most else word[:most] + "..."


@dataclass(frozen=True)
class Args:
    sender: str
    words: tuple[str, ...]  # the words after the keyword, as written
    body: str  # for multi-line commands: the lines after the keyword line, up to END
    sets: tuple[tuple[str, str], ...]

    def text_after(self, skip: int) -> str:
        """The command's text: the keyword line's words after `skip` of them, then the body."""
        return (" ".join(self.words[skip:]) + "\n" + self.body).strip()


Builder = Callable[[Args], Command]


@dataclass(frozen=True)
class CommandSpec:
    """One mail command: its keywords, syntax and description in each language."""

    name: str
    english: str
    italian: str
    syntax_en: str
    syntax_it: str
    help_en: str
    help_it: str
    build: Builder
    multiline: bool = False
    also: tuple[Mechanic, ...] = ()  # what grants this form beyond its command's row (procedure)
    # Also an everyday word ("Say, Carla...", "Debate is healthy"): a line that does not read
    # cleanly as this command (no END, wrong arguments) is the player's prose, not a command.
    prose: bool = False

    def syntax(self, language: str) -> str:
        return self.syntax_it if language == "it" else self.syntax_en

    def description(self, language: str) -> str:
        return self.help_it if language == "it" else self.help_en


def fold(word: str) -> str:
    """Upper case without accents, so 'sì', 'SÌ' and 'si' are one word."""
    if word.isascii():  # no accents, and NFKD leaves ASCII as it is: most words a mail holds
        return word.upper()
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).upper()


def _number(word: str, what: str = "N") -> int:
    value = numerals.number(word.strip().lstrip("#").rstrip(".,:;"))
    if value is None:
        raise SyntaxProblem(f"{what}: {_cut(word)!r}")
    return value


_REF = re.compile(r"(?:§\s*)?[-\w.¶#/]+")


def _rule_ref(words: Sequence[str]) -> tuple[int | None, str, int]:
    """A rule as a player names it: `202`, `§ 2.2`, `2.2`, `IV`, `II/III` (109).

    Returns (number, reference, words used): a plain number comes back as a number, anything
    else as the reference the engine resolves by label or path."""
    if not words:
        raise SyntaxProblem("missing")
    used = 2 if words[0] in ("§", "§§") and len(words) > 1 else 1
    written = " ".join(words[:used]).strip().lstrip("#").rstrip(",:;")
    plain = written.rstrip(".")
    value = numerals.number(plain)
    if value is not None:
        return value, "", used
    if any(c.isnumeric() and not c.isascii() for c in written):
        raise SyntaxProblem(f"N: {_cut(words[0])!r}")  # ³⁰¹, ٣٠١: a number only in ASCII digits
    if plain.isdigit() or len(written) > 40:  # 5,000 digits: no rule, no label is that long
        raise SyntaxProblem(f"N: {_cut(words[0])!r}")
    looks = any(c.isdigit() for c in written) or "/" in written or "¶" in written
    looks = looks or re.fullmatch(r"[IVXLCDM]+\.?", written) is not None
    if not looks or _REF.fullmatch(written) is None:
        raise SyntaxProblem(f"N: {_cut(words[0])!r}")
    return None, written, used


def _need(args: Args, count: int) -> tuple[str, ...]:
    if len(args.words) < count:
        raise SyntaxProblem("missing")
    return args.words


def _exactly(args: Args, count: int) -> tuple[str, ...]:
    if len(args.words) != count:
        raise SyntaxProblem("arguments")
    return args.words


def _rest(args: Args, skip: int) -> str:
    return " ".join(args.words[skip:]).strip()


def _appeal_id(word: str) -> str:
    cleaned = word.strip().rstrip(".,:;").upper()
    if not re.fullmatch(f"A?{numerals.DIGITS}", cleaned):
        raise SyntaxProblem(f"A: {_cut(word)!r}")
    return cleaned if cleaned.startswith("A") else "A" + cleaned


def _amendment_ref(word: str) -> str:
    cleaned = word.strip().rstrip(",:;")
    if not re.fullmatch(rf"{numerals.DIGITS}\.{numerals.DIGITS}", cleaned):
        raise SyntaxProblem(f"N.K: {_cut(word)!r}")
    return cleaned


def _propose(kind: ProposalKind) -> Builder:
    def build(args: Args) -> Command:
        if kind is ProposalKind.ENACT:
            immutable = bool(args.words) and fold(args.words[0]) in ("IMMUTABLE", "IMMUTABILE")
            text = args.text_after(1 if immutable else 0)
            return Propose(args.sender, kind, text=text, sets=args.sets, immutable=immutable)
        if kind in (ProposalKind.AMEND_AMENDMENT, ProposalKind.REPEAL_AMENDMENT):
            ref = _amendment_ref(_need(args, 1)[0])
            text = args.text_after(1) if kind.has_text else ""
            if not kind.has_text:
                _exactly(args, 1)
            return Propose(args.sender, kind, amendment=ref, text=text, sets=args.sets)
        target, ref, used = _rule_ref(_need(args, 1))
        if not kind.has_text:
            _exactly(args, used)
            return Propose(args.sender, kind, target=target, sets=args.sets, ref=ref)
        text = args.text_after(used)
        return Propose(args.sender, kind, target=target, text=text, sets=args.sets, ref=ref)

    return build


def _vote(args: Args) -> Command:
    words = _need(args, 2)
    number = _number(words[0])
    answer = fold(words[1]).rstrip(".!,")
    later = {fold(w).strip(".!,;:()") for w in words[2:]} - {"Y", "N"}
    opposite = NO_WORDS if answer in YES_WORDS else YES_WORDS if answer in NO_WORDS else ()
    if later.intersection(opposite):
        # "VOTE 301 YES NO", "VOTE 301 NO, I mean YES": which one? Never guess a ballot (203).
        raise SyntaxProblem(f"YES/NO: {_cut(' '.join(words[1:]))!r}")
    if answer in YES_WORDS:
        return Vote(args.sender, number, True)
    if answer in NO_WORDS:
        return Vote(args.sender, number, False)
    raise SyntaxProblem(f"YES/NO: {_cut(words[1])!r}")


def _revise(args: Args) -> Command:
    number = _number(_need(args, 1)[0])
    return Revise(args.sender, number, args.text_after(1), args.sets)


def _ruling(args: Args) -> Command:
    appeal = _appeal_id(_need(args, 1)[0])
    text = args.text_after(1)
    first = text.split("\n", 1)[0].split()
    head = fold(first[0]).rstrip(".:,;") if first else ""
    verdict = None
    impossible = None
    if head in ("UPHELD", "ACCOLTA", "ACCOLTO"):
        verdict = "upheld"
    elif head in ("DISMISSED", "RESPINTA", "RESPINTO"):
        verdict = "dismissed"
    elif head in ("IMPOSSIBLE", "IMPOSSIBILE"):
        impossible = " ".join(first[1:]).strip()
        if not impossible:
            raise SyntaxProblem("IMPOSSIBLE who")
    return GiveRuling(args.sender, appeal, text, verdict, impossible)


def _extend(args: Args) -> Command:
    words = [w for w in _need(args, 1) if fold(w) not in ("DAYS", "DAY", "GIORNI", "GIORNO")]
    if len(words) == 1:
        return Extend(args.sender, 0, _number(words[0], "days"))
    if len(words) == 2:
        return Extend(args.sender, _number(words[0]), _number(words[1], "days"))
    raise SyntaxProblem("arguments")


def _say(args: Args) -> Command:
    return Debate(args.sender, args.text_after(0))


_DELIVERY = {
    "ALL": DebateDelivery.ALL,
    "TUTTO": DebateDelivery.ALL,
    "TUTTI": DebateDelivery.ALL,
    "DIGEST": DebateDelivery.DIGEST,
    "RIASSUNTO": DebateDelivery.DIGEST,
    "NONE": DebateDelivery.NONE,
    "NIENTE": DebateDelivery.NONE,
    "NESSUNO": DebateDelivery.NONE,
}


def _delivery(args: Args) -> Command:
    word = fold(_exactly(args, 1)[0]).rstrip(".!")
    if word not in _DELIVERY:
        raise SyntaxProblem(f"ALL|DIGEST|NONE: {args.words[0]!r}")
    return ChooseDelivery(args.sender, _DELIVERY[word])


def _set(args: Args) -> Command:
    match = re.fullmatch(r"([A-Za-z_]+)\s*=\s*(\S+)", " ".join(args.words))
    if match is None:
        raise SyntaxProblem("name = value")
    return SetParameter(args.sender, match.group(1).lower(), match.group(2))


def _query(kind: QueryKind, numbered: bool) -> Builder:
    def build(args: Args) -> Command:
        if numbered:
            number, ref, used = _rule_ref(_need(args, 1))
            _exactly(args, used)
            return Query(args.sender, kind, number, ref)
        _exactly(args, 0)
        return Query(args.sender, kind)

    return build


def _no_args(make: Callable[[str], Command]) -> Builder:
    def build(args: Args) -> Command:
        _exactly(args, 0)
        return make(args.sender)

    return build


def _who(make: Callable[[str, str], Command]) -> Builder:
    def build(args: Args) -> Command:
        who = _rest(args, 0)
        if not who:
            raise SyntaxProblem("who")
        return make(args.sender, who)

    return build


def _appeal_who(make: Callable[[str, str, str], Command]) -> Builder:
    def build(args: Args) -> Command:
        appeal = _appeal_id(_need(args, 2)[0])
        return make(args.sender, appeal, _rest(args, 1))

    return build


def _agree(agree: bool) -> Builder:
    def build(args: Args) -> Command:
        return Agree(args.sender, _appeal_id(_exactly(args, 1)[0]), agree)

    return build


def _award(args: Args) -> Command:
    words = [w for w in _need(args, 1) if fold(w) not in ("POINTS", "PUNTI", "POINT")]
    if len(words) != 1:
        raise SyntaxProblem("P")
    return Award(args.sender, _number(words[0], "P"))


def _confirm(args: Args) -> Command:
    number, ref, used = _rule_ref(_need(args, 1))
    _exactly(args, used)
    return Confirm(args.sender, number or 0, ref)


def _join(args: Args) -> Command:
    name = " ".join(args.words).strip()
    if len(name.split()) < 2 or len(name) > 120 or not any(c.isalpha() for c in name):
        raise SyntaxProblem("Full Name")
    return AskToJoin(args.sender, name)


_ADDRESS = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")


def _address(args: Args) -> Command:
    written = _exactly(args, 1)[0].strip("<>,;")
    if _ADDRESS.fullmatch(written) is None or len(written) > 254:
        raise SyntaxProblem(f"new@...: {written!r}")
    return MoveAddress(args.sender, written.lower())


def _admit(args: Args) -> Command:
    words = _exactly(args, 2)
    number = _number(words[0])
    answer = fold(words[1]).rstrip(".!,")
    if answer in YES_WORDS:
        return Admit(args.sender, number, True)
    if answer in NO_WORDS:
        return Admit(args.sender, number, False)
    raise SyntaxProblem(f"YES/NO: {words[1]!r}")


def _text(make: Callable[[str, str], Command]) -> Builder:
    def build(args: Args) -> Command:
        return make(args.sender, args.text_after(0))

    return build


K = ProposalKind
REGISTRY: tuple[CommandSpec, ...] = (
    CommandSpec(
        "propose-enact",
        "PROPOSE ENACT",
        "PROPONGO PROMULGARE",
        "PROPOSE ENACT <text> ... END",
        "PROPONGO PROMULGARE <testo> ... FINE",
        "your turn: propose a new rule (SET lines inside set its parameters)",
        "al tuo turno: proponi una nuova regola (righe IMPOSTA per i parametri)",
        _propose(K.ENACT),
        multiline=True,
        also=(Mechanic.CAP,),
    ),
    CommandSpec(
        "propose-enact-amendment",
        "PROPOSE ENACT AMENDMENT",
        "PROPONGO PROMULGARE EMENDAMENTO",
        "PROPOSE ENACT AMENDMENT N <text> ... END",
        "PROPONGO PROMULGARE EMENDAMENTO N <testo> ... FINE",
        "your turn: propose an amendment to rule N",
        "al tuo turno: proponi un emendamento alla regola N",
        _propose(K.ENACT_AMENDMENT),
        multiline=True,
        also=(Mechanic.NUMBERING,),
    ),
    CommandSpec(
        "propose-amend-amendment",
        "PROPOSE AMEND AMENDMENT",
        "PROPONGO EMENDARE EMENDAMENTO",
        "PROPOSE AMEND AMENDMENT N.K <text> ... END",
        "PROPONGO EMENDARE EMENDAMENTO N.K <testo> ... FINE",
        "your turn: propose a new text for amendment N.K",
        "al tuo turno: proponi un nuovo testo per l'emendamento N.K",
        _propose(K.AMEND_AMENDMENT),
        multiline=True,
        also=(Mechanic.NUMBERING,),
    ),
    CommandSpec(
        "propose-repeal-amendment",
        "PROPOSE REPEAL AMENDMENT",
        "PROPONGO ABROGARE EMENDAMENTO",
        "PROPOSE REPEAL AMENDMENT N.K",
        "PROPONGO ABROGARE EMENDAMENTO N.K",
        "your turn: propose to repeal amendment N.K",
        "al tuo turno: proponi di abrogare l'emendamento N.K",
        _propose(K.REPEAL_AMENDMENT),
        also=(Mechanic.NUMBERING,),
    ),
    CommandSpec(
        "propose-amend",
        "PROPOSE AMEND",
        "PROPONGO EMENDARE",
        "PROPOSE AMEND N <new text> ... END",
        "PROPONGO EMENDARE N <nuovo testo> ... FINE",
        "your turn: propose a new text for mutable rule N",
        "al tuo turno: proponi un nuovo testo per la regola mutabile N",
        _propose(K.AMEND),
        multiline=True,
        also=(Mechanic.NUMBERING,),
    ),
    CommandSpec(
        "propose-repeal",
        "PROPOSE REPEAL",
        "PROPONGO ABROGARE",
        "PROPOSE REPEAL N",
        "PROPONGO ABROGARE N",
        "your turn: propose to repeal mutable rule N",
        "al tuo turno: proponi di abrogare la regola mutabile N",
        _propose(K.REPEAL),
        also=(Mechanic.MUTABLE_MIN,),
    ),
    CommandSpec(
        "propose-transmute",
        "PROPOSE TRANSMUTE",
        "PROPONGO TRASMUTARE",
        "PROPOSE TRANSMUTE N",
        "PROPONGO TRASMUTARE N",
        "your turn: propose to make rule N mutable if immutable, or the reverse",
        "al tuo turno: proponi di rendere la regola N mutabile se immutabile, o viceversa",
        _propose(K.TRANSMUTE),
        also=(Mechanic.TRANSMUTATION,),
    ),
    CommandSpec(
        "revise",
        "REVISE",
        "RIVEDO",
        "REVISE N <text> ... END",
        "RIVEDO N <testo> ... FINE",
        "during the debate, the proposer's final text (votes cast so far are void)",
        "durante il dibattito, il testo finale del proponente (i voti già dati decadono)",
        _revise,
        multiline=True,
    ),
    CommandSpec(
        "vote",
        "VOTE",
        "VOTO",
        "VOTE N YES|NO",
        "VOTO N SÌ|NO",
        "your vote on proposal N; a later vote replaces it until the vote closes",
        "il tuo voto sulla proposta N; un voto successivo lo sostituisce fino alla chiusura",
        _vote,
    ),
    CommandSpec(
        "appeal",
        "APPEAL",
        "APPELLO",
        "APPEAL <question> ... END",
        "APPELLO <domanda> ... FINE",
        "appeal to the King on a move's legality or a rule's meaning",
        "appellarsi al Re sulla liceità di una mossa o sul senso di una regola",
        _text(OpenAppeal),
        multiline=True,
    ),
    CommandSpec(
        "champion",
        "CHAMPION",
        "CAMPIONE",
        "CHAMPION A <player>",
        "CAMPIONE A <giocatore>",
        "the King: name who judges appeal A in his place",
        "il Re: nomina chi giudica l'appello A al suo posto",
        _appeal_who(NameChampion),
    ),
    CommandSpec(
        "ruling",
        "RULING",
        "SENTENZA",
        "RULING A <settlement> ... END",
        "SENTENZA A <proposta> ... FINE",
        "the judge of appeal A: a proposed settlement (UPHELD/DISMISSED first for an "
        "accusation; IMPOSSIBLE <player> when play cannot continue, 215)",
        "il giudice dell'appello A: una proposta di soluzione (ACCOLTA/RESPINTA in testa "
        "per un'accusa; IMPOSSIBILE <giocatore> se il gioco non può continuare, 215)",
        _ruling,
        multiline=True,
    ),
    CommandSpec(
        "agree",
        "AGREE",
        "ACCORDO",
        "AGREE A",
        "ACCORDO A",
        "you agree with the latest ruling on appeal A",
        "sei d'accordo con l'ultima sentenza sull'appello A",
        _agree(True),
    ),
    CommandSpec(
        "disagree",
        "DISAGREE",
        "DISACCORDO",
        "DISAGREE A",
        "DISACCORDO A",
        "you disagree with the latest ruling on appeal A",
        "non sei d'accordo con l'ultima sentenza sull'appello A",
        _agree(False),
    ),
    CommandSpec(
        "accuse",
        "ACCUSE",
        "ACCUSO",
        "ACCUSE <evidence> ... END",
        "ACCUSO <prove> ... FINE",
        "a subject: accuse the King of falsifying a result or changing the rules",
        "un suddito: accusa il Re di aver falsato un risultato o cambiato le regole",
        _text(Accuse),
        multiline=True,
    ),
    CommandSpec(
        "crown",
        "CROWN",
        "INCORONO",
        "CROWN <player>",
        "INCORONO <giocatore>",
        "a deposed King: choose the new King",
        "un Re deposto: scegli il nuovo Re",
        _who(Crown),
    ),
    CommandSpec(
        "award",
        "AWARD",
        "PUNTI",
        "AWARD P",
        "PUNTI P",
        "the King: the points for the player whose turn ends",
        "il Re: i punti al giocatore che chiude il turno",
        _award,
    ),
    CommandSpec(
        "extend",
        "EXTEND",
        "PROROGO",
        "EXTEND [N] D DAYS",
        "PROROGO [N] G GIORNI",
        "the King: lengthen the debate on the current proposal by D days",
        "il Re: allunga di G giorni il dibattito sulla proposta in corso",
        _extend,
    ),
    CommandSpec(
        "confirm",
        "CONFIRM",
        "CONFERMO",
        "CONFIRM N",
        "CONFERMO N",
        "the King: keep the parameters of rule N as they were after an amendment",
        "il Re: mantieni i parametri della regola N dopo un emendamento",
        _confirm,
    ),
    CommandSpec(
        "set",
        "SET",
        "IMPOSTA",
        "SET name = value",
        "IMPOSTA nome = valore",
        "inside a proposal: a parameter it sets; alone, the King's answer to a prompt",
        "in una proposta: un parametro che imposta; da solo, la risposta del Re",
        _set,
    ),
    CommandSpec(
        "winner",
        "WINNER",
        "VINCITORE",
        "WINNER <player>",
        "VINCITORE <giocatore>",
        "the King: who wins when several reach the score together",
        "il Re: chi vince se più giocatori raggiungono insieme il punteggio",
        _who(NameWinner),
    ),
    CommandSpec(
        "say",
        "SAY",
        "DICO",
        "SAY <words> ... END",
        "DICO <parole> ... FINE",
        "words for every other player, outside any proposal's thread (a reply to a "
        "proposal's mail needs no command: its words go to the table)",
        "parole per tutti gli altri giocatori, fuori dalle discussioni delle proposte (una "
        "risposta alla mail di una proposta non ne ha bisogno: le sue parole vanno al tavolo)",
        _say,
        multiline=True,
        prose=True,
    ),
    CommandSpec(
        "debate",
        "DEBATE",
        "DIBATTITO",
        "DEBATE ALL|DIGEST|NONE",
        "DIBATTITO TUTTO|RIASSUNTO|NIENTE",
        "how the debate reaches you: every message, one digest a day, or none",
        "come ti arriva il dibattito: ogni messaggio, un riassunto al giorno, o niente",
        _delivery,
        prose=True,
    ),
    CommandSpec(
        "quit",
        "QUIT",
        "ABBANDONO",
        "QUIT",
        "ABBANDONO",
        "leave the game",
        "lascia il gioco",
        _no_args(Quit),
    ),
    CommandSpec(
        "join",
        "JOIN",
        "ENTRO",
        "JOIN <Full Name>",
        "ENTRO <Nome Cognome>",
        "not playing yet: ask to join (you confirm by reply, then the King decides)",
        "chi non gioca ancora: chiedi di entrare (confermi rispondendo, poi decide il Re)",
        _join,
    ),
    CommandSpec(
        "admit",
        "ADMIT",
        "AMMETTO",
        "ADMIT N YES|NO",
        "AMMETTO N SÌ|NO",
        "the King: answer request N to join",
        "il Re: rispondi alla richiesta N di entrare",
        _admit,
    ),
    CommandSpec(
        "address",
        "ADDRESS",
        "INDIRIZZO",
        "ADDRESS new@example.org",
        "INDIRIZZO nuovo@example.org",
        "move to a new address (you confirm from the new one)",
        "passa a un nuovo indirizzo (confermi da quello nuovo)",
        _address,
    ),
    CommandSpec(
        "status",
        "STATUS",
        "STATO",
        "STATUS",
        "STATO",
        "the game as it stands",
        "lo stato del gioco",
        _query(QueryKind.STATUS, False),
    ),
    CommandSpec(
        "rules",
        "RULES",
        "REGOLE",
        "RULES",
        "REGOLE",
        "the ruleset in force and the scores",
        "il regolamento in vigore e i punteggi",
        _query(QueryKind.RULES, False),
    ),
    CommandSpec(
        "rule",
        "RULE",
        "REGOLA",
        "RULE N",
        "REGOLA N",
        "rule N (an old number finds the rule's new one; or its label, § 2.2, or path, II/III)",
        "la regola N (un vecchio numero trova quello nuovo; o la sua etichetta, § 2.2, o il "
        "percorso, II/III)",
        _query(QueryKind.RULE, True),
        also=(Mechanic.NUMBERING,),
    ),
    CommandSpec(
        "history",
        "HISTORY",
        "STORIA",
        "HISTORY N",
        "STORIA N",
        "every change to rule N, with its numbers",
        "ogni modifica della regola N",
        _query(QueryKind.HISTORY, True),
        also=(Mechanic.NUMBERING,),
    ),
    CommandSpec(
        "scores",
        "SCORES",
        "PUNTEGGI",
        "SCORES",
        "PUNTEGGI",
        "everyone's points",
        "i punti di tutti",
        _query(QueryKind.SCORES, False),
    ),
    CommandSpec(
        "archive",
        "ARCHIVE",
        "ARCHIVIO",
        "ARCHIVE",
        "ARCHIVIO",
        "the players' mail to the game (an mbox) and its config, attached; once a day",
        "la posta dei giocatori al gioco (un mbox) e la sua configurazione, in allegato; una "
        "volta al giorno",
        _no_args(Archive),
    ),
    CommandSpec(
        "help",
        "HELP",
        "AIUTO",
        "HELP",
        "AIUTO",
        "this list",
        "questo elenco",
        _query(QueryKind.HELP, False),
    ),
)

# Longest keyword first, so PROPOSE ENACT AMENDMENT wins over PROPOSE ENACT.
_KEYWORDS: tuple[tuple[tuple[str, ...], CommandSpec], ...] = tuple(
    sorted(
        [(tuple(fold(w) for w in s.english.split()), s) for s in REGISTRY]
        + [(tuple(fold(w) for w in s.italian.split()), s) for s in REGISTRY],
        key=lambda item: -len(item[0]),
    )
)


_WIDEST = max(len(keyword) for keyword, _ in _KEYWORDS)
# The keywords by their first word, longest first: a line is compared with those alone.
_BY_FIRST: dict[str, list[tuple[tuple[str, ...], CommandSpec]]] = {}
for _keyword, _spec in _KEYWORDS:
    _BY_FIRST.setdefault(_keyword[0], []).append((_keyword, _spec))


@dataclass(frozen=True)
class ParsedLine:
    """A command found in a mail: the event, or why its line could not be read."""

    line: str
    spec: CommandSpec
    command: Command | None
    problem: str = ""
    meant: str = ""  # a bare answer to a prompt, written out as the command it stands for
    span: tuple[int, int] = (0, 0)  # the body's lines it took, [first, last); (0, 0): Subject


def match(line: str) -> tuple[CommandSpec, int] | None:
    """The command a line starts with, and how many words its keyword takes."""
    written = line.split(maxsplit=_WIDEST)[:_WIDEST]
    if not written:
        return None
    first = fold(written[0]).rstrip(":")
    candidates = _BY_FIRST.get(first)
    if candidates is None:
        return None
    words = (first, *(fold(w).rstrip(":") for w in written[1:]))
    for keyword, spec in candidates:
        if words[: len(keyword)] == keyword:
            return spec, len(keyword)
    return None


REPLY_PREFIX = re.compile(r"^\s*(re|r|fwd?|fw|i|rif|aw|sv|tr|wg)\s*(\[\d+\])?\s*:", re.I)


def is_reply_subject(subject: str) -> bool:
    return REPLY_PREFIX.match(subject) is not None


def parse_commands(
    sender: str, subject: str, text: str, end_cut_off: bool = False
) -> list[ParsedLine]:
    """Every command in a mail, in order: the Subject's first, then the body's.

    A text (PROPOSE, REVISE, APPEAL, SAY ...) runs to a line END (FINE) or, with no END, to
    the end of `text`, the player's own words; unless `end_cut_off` (`ends_in_history`): the
    player's text was cut where quoted history begins and an END stands there, so the text
    is refused rather than half obeyed. One pass over the lines, so the time is linear in the
    size of the mail; the same command twice in one mail is obeyed once.
    """
    lines = text.split("\n")
    cleaned = subject.strip()
    # A reply's or a forward's Subject is the old mail's title, never a new command.
    from_subject = (
        bool(cleaned) and not is_reply_subject(cleaned) and _subject_is_command(sender, cleaned)
    )
    shift = 0
    if from_subject:
        lines = [cleaned, *lines]
        shift = 1
    found: list[ParsedLine] = []
    # Where the next END line and the next line with text are, from each line: read once, so
    # a flood of "SAY" lines with no END costs one pass, not one pass each.
    ends, texts = _next_lines(lines)
    index = 0
    while index < len(lines):
        start = index
        line = lines[index].strip()
        index += 1
        hit = match(line) if line else None
        if hit is None:
            continue
        spec, width = hit
        words = tuple(line.split()[width:])
        body_lines: list[str] = []
        if spec.multiline:
            end = ends[index]
            if end >= len(lines) and texts[index] < len(lines):
                if spec.prose and words:  # "Say, Carla, ..." with no END: the player's prose
                    index = start + 1
                    continue
                if end_cut_off:  # its END, and the rest of its text, went with the history
                    span = _span(start, len(lines), shift)
                    found.append(ParsedLine(line, spec, None, "no END line", span=span))
                    break
            body_lines = lines[index:end]
            index = end + 1  # after the END line (or past the last line: no END)
        span = _span(start, index, shift)
        kept, sets = _split_sets(body_lines)
        args = Args(sender, words, "\n".join(kept), sets)
        try:
            command = spec.build(args)
        except SyntaxProblem as problem:
            if spec.prose:
                index = start + 1
                continue
            found.append(ParsedLine(line, spec, None, str(problem), span=span))
            continue
        found.append(ParsedLine(line, spec, command, span=span))
    # A Subject the body repeats as written is one command, not two; every body line counts.
    if from_subject and found and any(p.command == found[0].command for p in found[1:]):
        found.pop(0)
    return found


def _question(command: Command) -> tuple[tuple[object, ...], object] | None:
    """What a command answers and its answer: VOTE 301 YES answers ('Vote', 301) with True.
    None for a command that answers no question (a proposal, a query, a debate)."""
    if isinstance(command, Vote):
        return ("Vote", command.number), command.yes
    if isinstance(command, Agree):
        return ("Agree", command.appeal), command.agree
    if isinstance(command, Admit):
        return ("Admit", command.request), command.yes
    if isinstance(command, GiveRuling):
        return ("GiveRuling", command.appeal), (command.verdict, command.impossible, command.text)
    if isinstance(command, NameChampion):
        return ("NameChampion", command.appeal), fold(command.who)
    if isinstance(command, Crown | NameWinner):
        return (type(command).__name__,), fold(command.who)
    if isinstance(command, Award):
        return ("Award",), command.points
    if isinstance(command, ChooseDelivery):
        return ("ChooseDelivery",), command.delivery
    return None


def torn(
    found: Sequence[ParsedLine], quoted: Callable[[ParsedLine], bool] = lambda _: False
) -> dict[int, str]:
    """The lines of a mail that give different answers to one question, each with another
    line that contradicts it (by index into `found`). Never resolved by their order (issue
    15): the quoting that would tell the player's own line from a quoted one was not seen,
    so every answer to that question is refused and the player asked again. A line known
    to be quoted (`quoted`: it repeats the referee's own mail) is no answer of the player."""
    answers: dict[tuple[object, ...], list[tuple[int, object]]] = {}
    for index, line in enumerate(found):
        if line.command is None or quoted(line):
            continue
        asked = _question(line.command)
        if asked is not None:
            answers.setdefault(asked[0], []).append((index, asked[1]))
    out: dict[int, str] = {}
    for given in answers.values():
        for index, answer in given:
            other = next((i for i, a in given if a != answer), None)
            if other is not None:
                out[index] = found[other].line
    return out


_QUOTE_MARKS = re.compile(r"^[\s>]+")
# Any line an ASCII text holds that reads as END or FINE once its quote marks are cut: where
# there is none, no history ends a text (a prefilter; any other text is read line by line).
# Its runs never cross a line end (ASCII's other spaces are named), so it is linear in the
# text: a hostile body of a million newlines or `>` is one pass.
_END_ANYWHERE = re.compile(
    r"(?:\A|[\r\n])[\t\x0b\x0c\x1c-\x1f >]*(?:END|FINE)[\t\x0b\x0c\x1c-\x1f ]*(?:[\r\n]|\Z)", re.I
)


def ends_in_history(body: str, own_words: str) -> bool:
    """Whether the history that follows the player's own words in `body` (the quoted mail,
    or what was taken for it) holds an END line before any command whose text runs to END:
    the END of a text the player began, cut off where the history was found to begin."""
    if body.isascii() and _END_ANYWHERE.search(body) is None:
        return False  # no END line at all, as in most mail
    return _history_ends(body, own_words)


def _history_ends(body: str, own_words: str) -> bool:
    """`ends_in_history` read line by line, with no prefilter."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    at = 0
    for mine in own_words.split("\n"):  # the own words are the body's lines, in order
        while at < len(lines) and lines[at].rstrip() != mine:
            at += 1
        at += 1
    for line in lines[at:]:
        written = _QUOTE_MARKS.sub("", line).strip()
        if not written:
            continue
        if fold(written) in END_WORDS:
            return True
        hit = match(written)
        if hit is not None and hit[0].multiline:
            return False  # an END further on closes this quoted text, not the player's
    return False


def _next_lines(lines: Sequence[str]) -> tuple[list[int], list[int]]:
    """For each index (and one past the last line): the index of the first END line from it,
    and of the first line holding text, each len(lines) when there is none."""
    ends = [len(lines)] * (len(lines) + 1)
    texts = [len(lines)] * (len(lines) + 1)
    for at in range(len(lines) - 1, -1, -1):
        stripped = lines[at].strip()
        ends[at] = at if stripped and fold(stripped) in END_WORDS else ends[at + 1]
        texts[at] = at if stripped else texts[at + 1]
    return ends, texts


def _span(start: int, end: int, shift: int) -> tuple[int, int]:
    """The body lines [first, last) a command took (a Subject's command: only what follows)."""
    first = max(start - shift, 0)
    return (first, max(end - shift, first))


def _subject_is_command(sender: str, subject: str) -> bool:
    """A Subject is obeyed only when it reads cleanly as a command; else it is just a title.

    A command whose text runs to END (PROPOSE, APPEAL, SAY ...) never starts in the Subject:
    "Appeal about turn order" is a title, and the appeal is the body's."""
    hit = match(subject)
    if hit is None:
        return False
    spec, width = hit
    if spec.multiline:
        return False
    try:
        spec.build(Args(sender, tuple(subject.split()[width:]), "", ()))
    except SyntaxProblem:
        return False
    return True


def _split_sets(lines: Sequence[str]) -> tuple[list[str], tuple[tuple[str, str], ...]]:
    kept: list[str] = []
    sets: list[tuple[str, str]] = []
    for line in lines:
        found = _SET_LINE.match(line)
        if found:
            sets.append((found.group(2).lower(), found.group(3)))
        else:
            kept.append(line)
    return kept, tuple(sets)


_COMMAND_OF: dict[str, type] = {
    "revise": Revise,
    "vote": Vote,
    "appeal": OpenAppeal,
    "champion": NameChampion,
    "ruling": GiveRuling,
    "agree": Agree,
    "disagree": Agree,
    "accuse": Accuse,
    "crown": Crown,
    "award": Award,
    "extend": Extend,
    "confirm": Confirm,
    "set": SetParameter,
    "winner": NameWinner,
    "quit": Quit,
    "say": Debate,
    "debate": ChooseDelivery,
    "archive": Archive,
}


def command_of(spec: CommandSpec) -> type:
    """The engine command a spec builds, whose row in the legality table grants it."""
    if spec.name.startswith("propose"):
        return Propose
    return _COMMAND_OF.get(spec.name, Query)


def grants(spec: CommandSpec) -> tuple[str, ...]:
    """The mechanics that grant a command: its row in the legality table, then its own."""
    row = LEGALITY[command_of(spec)].grants
    return tuple(dict.fromkeys(m.value for m in (*row, *spec.also)))


def help_rows(language: str) -> list[dict[str, Any]]:
    """HELP's lines: each command's syntax, description and the mechanics that grant it,
    which the reply cites as the rules stand (`cite(*row.rules)`)."""
    return [
        {"syntax": s.syntax(language), "description": s.description(language), "rules": grants(s)}
        for s in REGISTRY
    ]
