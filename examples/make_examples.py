"""Write the README's example games: a config and an mbox of players' mail, in English and Italian.

Seven turns over two rounds and a bit: a revised proposal, a rejected one, an appeal, a
transmutation, an amendment that asks the King about a parameter, the switch to majority
(rule 204), and a dissent bonus (206) that carries Bob over the winning line (209).
Run `python examples/make_examples.py` to write them again; the output never changes.
"""

from __future__ import annotations

import mailbox
import sys
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ADA, BOB, CARLA = "ada@example.org", "bob@example.org", "carla@example.org"
NAMES = {ADA: "Ada Lovelace", BOB: "Bob Rossi", CARLA: "Carla De Santis"}

CONFIG = """# The example game of the README ({language}).
[game]
name = "{name}"
address = "referee@nomic.example"
language = "{language}"
timezone = "Europe/Rome"
start = "2026-12-01T09:00:00+00:00"

[[players]]
name = "Ada Lovelace"
email = "ada@example.org"
king = true

[[players]]
name = "Bob Rossi"
email = "bob@example.org"

[[players]]
name = "Carla De Santis"
email = "carla@example.org"
surname = "De Santis"
"""

# (days after the start, hours, sender, subject, body in English, body in Italian)
SCRIPT: list[tuple[int, int, str, str, str, str]] = [
    (
        0,
        2,
        CARLA,
        "My proposal",
        "PROPOSE AMEND 209\nThe first player to reach 25 points wins.\nSET winning_score = 25\nEND",
        "PROPONGO EMENDARE 209\nIl primo giocatore che raggiunge i 25 punti vince.\n"
        "IMPOSTA winning_score = 25\nFINE",
    ),
    (
        0,
        5,
        BOB,
        "Re: [Nomic] Proposal 301",
        "VOTE 301 NO\n\nToo short a game.",
        "VOTO 301 NO\n\nUna partita troppo breve.",
    ),
    (
        1,
        3,
        CARLA,
        "Revision",
        "REVISE 301\nThe first player to reach 25 (positive) points wins.\nSET winning_score = 25\n"
        "END",
        "RIVEDO 301\nIl primo giocatore che raggiunge i 25 punti (positivi) vince.\n"
        "IMPOSTA winning_score = 25\nFINE",
    ),
    (1, 4, ADA, "Re: [Nomic] Proposal 301 revised", "VOTE 301 YES", "VOTO 301 SÌ"),
    (2, 4, BOB, "Re: [Nomic] Proposal 301 revised", "VOTE 301 YES\nSTATUS", "VOTO 301 SI\nSTATO"),
    (3, 1, CARLA, "vote", "VOTE 301 YES", "VOTO 301 SÌ"),
    (7, 3, ADA, "Re: [Nomic] King: points for Carla De Santis", "AWARD 9", "PUNTI 9"),
    (
        7,
        6,
        ADA,
        "Turn 2",
        "PROPOSE ENACT\nEvery proposal must carry a title.\nEND",
        "PROPONGO PROMULGARE\nOgni proposta deve avere un titolo.\nFINE",
    ),
    (
        8,
        1,
        BOB,
        "An appeal",
        "APPEAL\nDoes the new winning score of rule 301 apply to points already won?\nEND",
        "APPELLO\nIl nuovo punteggio della regola 301 vale anche per i punti già vinti?\nFINE",
    ),
    (
        8,
        5,
        ADA,
        "Re: [Nomic] Appeal A1",
        "RULING A1\nYes: points already won count; no rule is retroactive (108), but the "
        "score itself is not changed.\nEND",
        "SENTENZA A1\nSì: i punti già vinti contano; nessuna regola è retroattiva (108), ma il "
        "punteggio non cambia.\nFINE",
    ),
    (8, 6, BOB, "Re: [Nomic] Ruling on A1", "AGREE A1", "ACCORDO A1"),
    (8, 7, CARLA, "Re: [Nomic] Ruling on A1", "AGREE A1\nVOTE 302 YES", "ACCORDO A1\nVOTO 302 SÌ"),
    (9, 2, ADA, "vote", "VOTE 302 YES", "VOTO 302 SÌ"),
    (10, 2, BOB, "vote", "VOTE 302 NO", "VOTO 302 NO"),
    (14, 9, ADA, "Re: [Nomic] King: points", "AWARD 6", "PUNTI 6"),
    (14, 10, BOB, "Turn 3", "PROPOSE TRANSMUTE 116", "PROPONGO TRASMUTARE 116"),
    (15, 1, ADA, "v", "VOTE 303 YES", "VOTO 303 SÌ"),
    (15, 2, BOB, "v", "VOTE 303 YES", "VOTO 303 SÌ"),
    (15, 3, CARLA, "v", "VOTE 303 YES", "VOTO 303 SÌ"),
    (21, 12, ADA, "Re: [Nomic] King: points", "AWARD 8", "PUNTI 8"),
    (
        21,
        14,
        CARLA,
        "Turn 4",
        "PROPOSE ENACT AMENDMENT 301\nThe scores are announced every Sunday.\nEND",
        "PROPONGO PROMULGARE EMENDAMENTO 301\nI punteggi sono annunciati ogni domenica.\nFINE",
    ),
    (22, 1, ADA, "v", "VOTE 304 YES", "VOTO 304 SÌ"),
    (22, 2, BOB, "v", "VOTE 304 YES", "VOTO 304 SÌ"),
    (22, 3, CARLA, "v", "VOTE 304 YES", "VOTO 304 SÌ"),
    (
        28,
        15,
        ADA,
        "Re: [Nomic] King: rule 304 and its parameters",
        "CONFIRM 304\nAWARD 10",
        "CONFERMO 304\nPUNTI 10",
    ),
    (28, 16, ADA, "Turn 5", "PROPOSE REPEAL 208", "PROPONGO ABROGARE 208"),
    (29, 1, ADA, "v", "VOTE 305 YES", "VOTO 305 SÌ"),
    (29, 2, BOB, "v", "VOTE 305 NO", "VOTO 305 NO"),
    (29, 3, CARLA, "v", "VOTE 305 YES", "VOTO 305 SÌ"),
    (35, 17, ADA, "Re: [Nomic] King: points", "AWARD 7", "PUNTI 7"),
    (
        35,
        18,
        BOB,
        "Turn 6",
        "PROPOSE AMEND 210\nThere may never be more than 20 mutable rules.\n"
        "SET max_mutable_rules = 20\nEND",
        "PROPONGO EMENDARE 210\nNon ci possono essere mai più di 20 leggi mutabili.\n"
        "IMPOSTA max_mutable_rules = 20\nFINE",
    ),
    (36, 1, ADA, "v", "VOTE 306 YES", "VOTO 306 SÌ"),
    (36, 2, BOB, "v", "VOTE 306 YES", "VOTO 306 SÌ"),
    (36, 3, CARLA, "v", "VOTE 306 YES", "VOTO 306 SÌ"),
    (42, 19, ADA, "Re: [Nomic] King: points", "AWARD 9", "PUNTI 9"),
    (
        42,
        20,
        CARLA,
        "Turn 7",
        "PROPOSE ENACT\nPlayers may also vote by carrier pigeon.\nEND",
        "PROPONGO PROMULGARE\nI giocatori possono votare anche per piccione viaggiatore.\nFINE",
    ),
    (43, 1, ADA, "v", "VOTE 307 YES", "VOTO 307 SÌ"),
    (43, 2, BOB, "v", "VOTE 307 NO", "VOTO 307 NO"),
    (43, 3, CARLA, "v", "VOTE 307 YES", "VOTO 307 SÌ"),
    (50, 9, CARLA, "Scores?", "SCORES", "PUNTEGGI"),
]


# The subjects the Italian players write: their own words, and the Italian referee's subjects
# (game "Nomic del Re") in their replies, so the referee's answers read "Re: Proposta 301".
ITALIAN_SUBJECTS = {
    "My proposal": "La mia proposta",
    "An appeal": "Un appello al Re",
    "Revision": "Proposta riveduta",
    "Scores?": "Classifica?",
    "v": "il mio voto",
    "vote": "il mio voto",
    "Re: [Nomic] Appeal A1": "Re: [Nomic del Re] Appello A1",
    "Re: [Nomic] King: points": "Re: [Nomic del Re] Maestà, i punti",
    "Re: [Nomic] King: points for Carla De Santis": (
        "Re: [Nomic del Re] Maestà, i punti per Carla De Santis"
    ),
    "Re: [Nomic] King: rule 304 and its parameters": (
        "Re: [Nomic del Re] Maestà, la regola 304 e i suoi parametri"
    ),
    "Re: [Nomic] Proposal 301": "Re: [Nomic del Re] Proposta 301",
    "Re: [Nomic] Proposal 301 revised": "Re: [Nomic del Re] Proposta 301 riveduta",
    "Re: [Nomic] Ruling on A1": "Re: [Nomic del Re] Sentenza su A1",
}


def subject_in(language: str, subject: str) -> str:
    """The subject as a player of that language writes it ("Turn 3" is "Turno 3")."""
    if language != "it":
        return subject
    if subject.startswith("Turn "):
        return "Turno " + subject.removeprefix("Turn ")
    return ITALIAN_SUBJECTS[subject]


def build(language: str, start: datetime = START) -> tuple[str, list[tuple[bytes, datetime, str]]]:
    """The game's config and its mail (raw, delivery time, sender), the game starting at
    `start` (the examples' own start unless a test moves it)."""
    name = "Nomic of the King" if language == "en" else "Nomic del Re"
    out: list[tuple[bytes, datetime, str]] = []
    for index, (days, hours, sender, subject, english, italian) in enumerate(SCRIPT, start=1):
        at = start + timedelta(days=days, hours=hours)
        message = EmailMessage()
        message["From"] = f"{NAMES[sender]} <{sender}>"
        message["To"] = "referee@nomic.example"
        message["Subject"] = subject_in(language, subject)
        message["Date"] = format_datetime(at)
        message["Message-ID"] = f"<example-{language}-{index:03d}@example.org>"
        message.set_content(english if language == "en" else italian)
        out.append((message.as_bytes(), at, sender))
    return CONFIG.format(language=language, name=name), out


def write(folder: Path) -> list[Path]:
    written: list[Path] = []
    for language in ("en", "it"):
        config, messages = build(language)
        config_path = folder / f"game-{language}.toml"
        config_path.write_text(config, encoding="utf-8")
        mbox_path = folder / f"game-{language}.mbox"
        if mbox_path.exists():
            mbox_path.unlink()
        box = mailbox.mbox(str(mbox_path))
        box.lock()
        for raw, at, sender in messages:
            entry = mailbox.mboxMessage(raw)
            entry.set_from(sender, at.timetuple())
            box.add(entry)
        box.flush()
        box.unlock()
        box.close()
        written += [config_path, mbox_path]
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for path in write(target):
        print(path)
