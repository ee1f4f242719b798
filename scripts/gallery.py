"""The mail gallery: one mail of every kind, in both languages, as a player sees it (107, 205).

Replays the README's example games (examples/game-<language>.toml and .mbox) through the real
service, then plays a second, scripted game in the same language for the mail the example
never causes (a stranger's note, refusals, reminders, a Champion, a deposed King, a player who
quits, an accusation that waited past the daily limit for a King no longer reigning), a
five-player game that ends in a tie for the win, mail too deeply nested to read (the answer to
its sender), and an opening mail whose ruleset is too long for its body (attached). From all
the mail the referee sent it picks the first of every kind and writes, per language,
`<kind>.html` and `<kind>.txt` (the two parts of the mail as sent, never the files it carries),
`<kind>.eml` and an `index.html`; with `--screenshots`, a
full-page PNG of every HTML part at phone width (412 px) and at desktop width (1280 px), taken
by Debian's headless Chromium, and it fails if a page is wider than its screen.

    python scripts/gallery.py --out build/gallery --screenshots
    python scripts/gallery.py --out build/gallery --screenshots --docs docs/gallery

`--docs` also writes the README's few chosen screenshots there (docs/gallery/).
"""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.config import PlayerConfig, Settings, load_settings  # noqa: E402
from referee.core.events import NoticeKind  # noqa: E402
from referee.core.threads import Thread  # noqa: E402
from referee.mail.intake import Unreadable  # noqa: E402
from referee.mail.outgoing import thread_root  # noqa: E402
from referee.replay import read_mbox  # noqa: E402
from referee.service import BOUNCE_NOTICE, Referee  # noqa: E402
from referee.store.store import Store  # noqa: E402

LANGUAGES = ("en", "it")
ADA, BOB, CARLA = "ada@example.org", "bob@example.org", "carla@example.org"
STRANGER = "eve@elsewhere.example"
PHONE, DESKTOP = 412, 1280
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# The README shows these (language, kind, width).
README_SHOTS = (
    ("en", "proposal_revised", PHONE),
    ("it", "vote_result", PHONE),
    ("en", "reply-refused", PHONE),
    ("en", "debate", PHONE),
    ("it", "ruleset", DESKTOP),
)

README_HEIGHT = 1100  # pixels: a screenful or so of each

# Kinds of reply the gallery labels by the mail that caused them.
REPLY_KINDS = (
    "reply-done",
    "reply-refused",
    "reply-status",
    "reply-scores",
    "reply-rules",
    "reply-history",
    "reply-help",
    "stranger",
)
# Kinds of mail sent for the operator's sake, not a game's event: the notice of a bounce.
OPERATOR_KINDS = (BOUNCE_NOTICE,)
# The answers to a mail that cannot be read (a player's, anyone else's), and the opening mail
# with its ruleset attached, too long for the body (205).
UNREAD_KINDS = ("unreadable", "unreadable_note")
ATTACHED_KIND = "game_started-attached"


@dataclass(frozen=True)
class Step:
    """One mail from a player in the scripted game, or (with no sender) time passing."""

    after: timedelta
    sender: str
    subject: str
    body: dict[str, str]
    label: str = ""
    thread: str = ""  # a reply in this thread of the referee's ("proposal-301")


def _days(days: float) -> timedelta:
    return timedelta(days=days)


# A second game, in each language: the mail the example game never causes.
SCRIPT: tuple[Step, ...] = (
    Step(_days(0.05), STRANGER, "move", {"en": "Can I play?", "it": "Posso giocare?"}, "stranger"),
    Step(
        _days(0.06),
        BOB,
        "move",
        {
            "en": "Hello referee,\nVOTE 399 YES\nAWARD 5\nPROPOSE AMEND 101\nObey me.\nEND\n"
            "DANCE\nPROPSE ENACT\nI will write the rest tomorrow.\nCheers,\nBob",
            "it": "Ciao arbitro,\nVOTO 399 SÌ\nPUNTI 5\nPROPONGO EMENDARE 101\nObbeditemi.\nFINE\n"
            "BALLO\nPROPONGO PROMULGRE\nIl resto lo scrivo domani.\nA presto,\nBob",
        },
        "reply-refused",
    ),
    Step(_days(0.07), BOB, "move", {"en": "STATUS", "it": "STATO"}, "reply-status"),
    Step(_days(3.5), BOB, "move", {}),  # Carla's turn waits: a reminder
    Step(
        _days(3.6),
        CARLA,
        "move",
        {
            "en": "PROPOSE AMEND 202\nOn each turn the King awards the player between 1 and 10 "
            "points, after the vote.\nEND",
            "it": "PROPONGO EMENDARE 202\nA ogni turno il Re assegna al giocatore da 1 a 10 "
            "punti, dopo il voto.\nFINE",
        },
        "reply-done",
    ),
    Step(_days(3.7), ADA, "move", {"en": "EXTEND 2 DAYS", "it": "PROROGO 2 GIORNI"}),
    Step(
        _days(3.8),
        CARLA,
        "move",
        {
            "en": "REVISE 301\nOn each turn the King awards the player between 2 and 12 points, "
            "after the vote and before the next turn.\nEND",
            "it": "RIVEDO 301\nA ogni turno il Re assegna al giocatore da 2 a 12 punti, dopo il "
            "voto e prima del turno successivo.\nFINE",
        },
    ),
    Step(
        _days(3.82),
        BOB,
        "Re: Proposal 301",
        {
            "en": "Two points at least? I would rather keep 1, so that a bad proposal costs "
            "something.\n\nAnd why after the vote? The King could award before it.\n\n"
            "On Fri, Dec 04, 2026 at 07:00PM +0100, Nomic wrote:\n> Proposal 301 by Carla",
            "it": "Almeno due punti? Preferirei tenere 1, così una cattiva proposta costa "
            "qualcosa.\n\nE perché dopo il voto? Il Re potrebbe assegnarli prima.\n\n"
            "Il 04/12/26 19:00, Nomic ha scritto:\n> Proposta 301 di Carla",
        },
        thread="proposal-301",
    ),
    Step(_days(3.83), CARLA, "move", {"en": "DEBATE DIGEST", "it": "DIBATTITO RIASSUNTO"}),
    Step(
        _days(3.84),
        ADA,
        "move",
        {
            "en": "SAY\nTea at mine on Friday: bring your amendments.\nEND",
            "it": "DICO\nTè da me venerdì: portate i vostri emendamenti.\nFINE",
        },
    ),
    Step(_days(3.9), BOB, "move", {"en": "SCORES", "it": "PUNTEGGI"}, "reply-scores"),
    Step(_days(3.95), BOB, "move", {"en": "HISTORY 202", "it": "STORIA 202"}, "reply-history"),
    Step(_days(3.96), BOB, "move", {"en": "HELP", "it": "AIUTO"}, "reply-help"),
    Step(_days(3.97), BOB, "move", {"en": "RULES", "it": "REGOLE"}, "reply-rules"),
    Step(_days(12.0), ADA, "move", {"en": "VOTE 301 YES", "it": "VOTO 301 SÌ"}),
    Step(_days(19.0), BOB, "move", {}),  # the vote closes within a day: a reminder
    Step(_days(19.1), BOB, "move", {"en": "VOTE 301 NO", "it": "VOTO 301 NO"}),
    Step(_days(19.2), CARLA, "move", {"en": "VOTE 301 YES", "it": "VOTO 301 SÌ"}),
    Step(_days(22.0), BOB, "move", {}),  # the King's award waits: a reminder
    Step(_days(22.1), ADA, "move", {"en": "AWARD 4", "it": "PUNTI 4"}),
    Step(
        _days(18.2),
        ADA,
        "move",
        {
            "en": "APPEAL\nMay a King award points to himself?\nEND",
            "it": "APPELLO\nPuò il Re assegnare punti a sé stesso?\nFINE",
        },
    ),
    Step(_days(22.3), ADA, "move", {"en": "CHAMPION A1 Bob", "it": "CAMPIONE A1 Bob"}),
    Step(
        _days(18.4),
        BOB,
        "move",
        {"en": "RULING A1\nNo, never.\nEND", "it": "SENTENZA A1\nNo, mai.\nFINE"},
    ),
    Step(_days(22.5), ADA, "move", {"en": "DISAGREE A1", "it": "DISACCORDO A1"}),
    Step(_days(22.6), CARLA, "move", {"en": "DISAGREE A1", "it": "DISACCORDO A1"}),
    Step(
        _days(18.7),
        BOB,
        "move",
        {
            "en": "RULING A1\nNo: a King's own points come from the rules, not from himself.\nEND",
            "it": "SENTENZA A1\nNo: i punti del Re vengono dalle regole, non da lui.\nFINE",
        },
    ),
    Step(_days(22.8), ADA, "move", {"en": "AGREE A1", "it": "ACCORDO A1"}),
    Step(_days(22.9), CARLA, "move", {"en": "AGREE A1", "it": "ACCORDO A1"}),
    Step(
        _days(19.0),
        BOB,
        "move",
        {
            "en": "ACCUSE\nThe King counted my vote on 301 as YES.\nEND",
            "it": "ACCUSO\nIl Re ha contato il mio voto sulla 301 come SÌ.\nFINE",
        },
    ),
    Step(_days(23.1), ADA, "move", {"en": "CHAMPION A2 Carla", "it": "CAMPIONE A2 Carla"}),
    Step(
        _days(19.2),
        CARLA,
        "move",
        {
            "en": "RULING A2\nUPHELD: the record shows a NO.\nEND",
            "it": "SENTENZA A2\nACCOLTA: il registro mostra un NO.\nFINE",
        },
    ),
    Step(_days(23.3), BOB, "move", {"en": "AGREE A2", "it": "ACCORDO A2"}),
    Step(_days(23.4), CARLA, "move", {"en": "AGREE A2", "it": "ACCORDO A2"}),
    Step(_days(23.5), ADA, "move", {"en": "CROWN Carla", "it": "INCORONO Carla"}),
    Step(_days(23.6), ADA, "move", {"en": "QUIT", "it": "ABBANDONO"}),
)


@dataclass(frozen=True)
class Sent:
    kind: str  # a notice kind, or one of REPLY_KINDS
    raw: bytes


def _mail(settings: Settings, step: Step, language: str, at: datetime, number: int) -> bytes:
    message = EmailMessage()
    names = {p.email: p.name for p in settings.players}
    sender = step.sender
    message["From"] = f"{names.get(sender, 'Eve')} <{sender}>"
    message["To"] = settings.game.address
    message["Subject"] = step.subject
    message["Date"] = format_datetime(at)
    message["Message-ID"] = f"<gallery-{language}-{number}@{sender.rpartition('@')[2]}>"
    if step.thread:
        thread = Thread.parse(step.thread)
        assert thread is not None, step.thread
        root = thread_root(settings.game.name, settings.game.address, thread)
        message["In-Reply-To"] = root
        message["References"] = root
    message.set_content(step.body[language] + "\n")
    return message.as_bytes()


class _Game:
    """A game on a throw-away store, recording what the referee sends and why."""

    def __init__(self, settings: Settings, start: datetime) -> None:
        self.store = Store("sqlite://")
        self.referee = Referee.create(self.store, settings, start)
        self.sent: list[Sent] = []

    def _collect(self, label: str) -> None:
        rows = self.store.outbox(self.referee.game_id)
        for row in rows[len(self.sent) :]:
            kind = row.kind
            if kind == "reply":
                kind = label or "reply"
            self.sent.append(Sent(kind, row.raw))

    def receive(self, raw: bytes, at: datetime, label: str = "") -> None:
        self.referee.receive(raw, at)
        self._collect(label)

    def advance(self, at: datetime) -> None:
        self.referee.advance(at)
        self._collect("")

    def close(self) -> None:
        self.store.close()


def play(language: str) -> list[Sent]:
    """Every mail the example game and the scripted game send, in order."""
    settings = load_settings(ROOT / "examples" / f"game-{language}.toml")
    messages = read_mbox(ROOT / "examples" / f"game-{language}.mbox")
    start = settings.game.start or messages[0].at
    assert start is not None
    example = _Game(settings, start)
    try:
        now = start
        for item in messages:
            now = max(item.at or now, now)
            example.receive(item.raw, now)
        example.advance(now)
        sent = list(example.sent)
    finally:
        example.close()
    scripted = _Game(settings, start)
    try:
        for number, step in enumerate(SCRIPT):
            at = start + step.after
            if step.body:
                scripted.receive(_mail(settings, step, language, at, number), at, step.label)
            else:
                scripted.advance(at)
        sent += scripted.sent
    finally:
        scripted.close()
    return (
        sent
        + play_tie(language)
        + play_roster(language)
        + play_ruling(language)
        + play_waiting(language)
        + play_bounce(language)
        + play_unreadable(language)
        + play_attached(language)
    )


def _deep(sender: str, language: str, number: int, depth: int = 150) -> bytes:
    """A mail nested `depth` multiparts deep: more than the referee reads (issue 15)."""
    head = (
        f"From: {sender}\nTo: referee@nomic.example\nSubject: deep\n"
        f"Message-ID: <gallery-deep-{language}-{number}@example.org>\nMIME-Version: 1.0\n"
    )
    opening = "".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n' for i in range(depth)
    )
    closing = "".join(f"\n--b{i}--\n" for i in reversed(range(depth)))
    return (head + opening + "Content-Type: text/plain\n\nSTATUS\n" + closing).encode()


def play_unreadable(language: str) -> list[Sent]:
    """A player's mail and a stranger's, each nested too deep to read: both are set aside,
    the player is answered, the stranger gets the short note."""
    settings = load_settings(ROOT / "examples" / f"game-{language}.toml")
    start = settings.game.start
    assert start is not None
    game = _Game(settings, start)
    try:
        for number, sender in enumerate((CARLA, STRANGER)):
            with contextlib.suppress(Unreadable):  # set aside, as the live service does
                game.receive(_deep(sender, language, number), start + timedelta(hours=number + 1))
            game._collect("")
        return [m for m in game.sent if m.kind in UNREAD_KINDS]
    finally:
        game.close()


def play_attached(language: str) -> list[Sent]:
    """The opening mail of a game whose ruleset is longer than `[limits] ruleset_chars`: its
    rules go whole as attached files (205)."""
    settings = load_settings(ROOT / "examples" / f"game-{language}.toml")
    settings = replace(settings, limits=replace(settings.limits, ruleset_chars=5_000))
    start = settings.game.start
    assert start is not None
    game = _Game(settings, start)
    try:
        game.advance(start)  # the opening mail, to everyone
        opening = next(m for m in game.sent if m.kind == NoticeKind.GAME_STARTED.value)
        return [Sent(ATTACHED_KIND, opening.raw)]
    finally:
        game.close()


def play_bounce(language: str) -> list[Sent]:
    """A player's mailbox refuses the opening mail; the MTA's report comes back and the King
    is told (205), with none of the report's words."""
    settings = load_settings(ROOT / "examples" / f"game-{language}.toml")
    start = settings.game.start
    assert start is not None
    game = _Game(settings, start)
    try:
        game.advance(start)  # the opening mail, to everyone
        player = next(p for p in settings.players if not p.king)
        returned = next(
            m.raw for m in game.sent if f"<{player.email}>".encode() in m.raw.split(b"\n\n")[0]
        )
        headers = returned.split(b"\n\n", 1)[0].replace(b"\r\n", b"\n")
        report = (
            (
                "From: MAILER-DAEMON@mx.example.org (Mail Delivery System)\n"
                f"To: {settings.game.address}\n"
                "Subject: Undelivered Mail Returned to Sender\n"
                f"Date: {format_datetime(start + timedelta(minutes=5))}\n"
                "Message-ID: <gallery-bounce@mx.example.org>\n"
                "Auto-Submitted: auto-replied\n"
                "MIME-Version: 1.0\n"
                'Content-Type: multipart/report; report-type=delivery-status; boundary="B0"\n\n'
                "--B0\nContent-Type: text/plain; charset=us-ascii\n\n"
                f"<{player.email}>: host mx.example.org said: 550 5.1.1 no such user\n\n"
                "--B0\nContent-Type: message/delivery-status\n\n"
                "Reporting-MTA: dns; mx.example.org\n\n"
                f"Final-Recipient: rfc822; {player.email}\nAction: failed\nStatus: 5.1.1\n\n"
                "--B0\nContent-Type: text/rfc822-headers\n\n"
            ).encode()
            + headers
            + b"\n\n--B0--\n"
        )
        game.receive(report, start + timedelta(minutes=5))
        return [m for m in game.sent if m.kind == BOUNCE_NOTICE]
    finally:
        game.close()


ROSTER_WORDS = {
    "en": {"join": "JOIN {name}", "yes": "yes", "no": "No.", "address": "ADDRESS {address}"},
    "it": {"join": "ENTRO {name}", "yes": "sì", "no": "No.", "address": "INDIRIZZO {address}"},
}


class _Script:
    """A scripted example game in one language: mails sent one hour apart, each a new mail or
    a bare reply to one of the referee's (its In-Reply-To and References naming it)."""

    def __init__(
        self, language: str, subject: str, first_id: int, limits: Mapping[str, int] | None = None
    ) -> None:
        self.language, self.subject, self.number = language, subject, first_id
        self.settings = load_settings(ROOT / "examples" / f"game-{language}.toml")
        if limits:  # the example's [limits], some of them tightened
            self.settings = replace(self.settings, limits=replace(self.settings.limits, **limits))
        start = self.settings.game.start
        assert start is not None
        self.at = start
        self.game = _Game(self.settings, start)

    def send(self, sender: str, body: str, answering: bytes | None = None) -> None:
        self.at, self.number = self.at + timedelta(hours=1), self.number + 1
        subject = "Re: Nomic" if answering else self.subject
        step = Step(timedelta(0), sender, subject, {self.language: body})
        raw = _mail(self.settings, step, self.language, self.at, self.number)
        if answering is not None:  # a bare reply to the referee's question
            asked = BytesParser(policy=policy.default).parsebytes(answering)["Message-ID"]
            message = BytesParser(policy=policy.default).parsebytes(raw)
            message["In-Reply-To"], message["References"] = asked, asked
            raw = message.as_bytes()
        self.game.receive(raw, self.at)

    def last(self, kind: str, to: str) -> bytes:
        found = [m.raw for m in self.game.sent if m.kind == kind and to.encode() in m.raw]
        assert found, (kind, to)
        return found[-1]


def play_roster(language: str) -> list[Sent]:
    """Players who come and go (201, 114): a stranger joins with the King's yes, another is
    refused, and a player moves to a new address, each confirmed by a bare reply."""
    script = _Script(language, "Hello", 2000)
    send, last, words = script.send, script.last, ROSTER_WORDS[language]
    try:
        king = script.settings.king.email
        for name, address, answer in (
            ("Eve Noether", "eve@example.net", "yes"),
            ("Fred Bianchi", "fred@example.net", "no"),
        ):
            send(address, words["join"].format(name=name))
            send(address, words["yes"], last("confirm", address))
            send(king, words[answer], last("join_prompt", king))
        moved = "bob.rossi@new.example"
        send("bob@example.org", words["address"].format(address=moved))
        send(moved, words["yes"], last("confirm", moved))
        return list(script.game.sent)
    finally:
        script.game.close()


RULING_WORDS = {
    "en": {
        "propose": "PROPOSE ENACT\nA player who writes\nVOTE 301 YES\nis cheerful.\nEND",
        "vote": "A player who writes\nVOTE 301 YES\nis cheerful.",  # an unmarked copy
        "appeal": "APPEAL\nThat vote was mine: I typed it.\nEND",
        "yes": "yes",
        "agree": "AGREE A1",
    },
    "it": {
        "propose": "PROPONGO PROMULGARE\nChi scrive\nVOTO 301 SÌ\nè allegro.\nFINE",
        "vote": "Chi scrive\nVOTO 301 SÌ\nè allegro.",  # una copia senza segni di citazione
        "appeal": "APPELLO\nQuel voto era mio: l'ho scritto io.\nFINE",
        "yes": "sì",
        "agree": "ACCORDO A1",
    },
}


def play_ruling(language: str) -> list[Sent]:
    """An appeal by reply about a refused vote (212): the judge's prompt with the facts and
    the draft, the King's bare yes, and the correction carried out while the vote is open."""
    script = _Script(language, "move", 3000)
    send, last, words = script.send, script.last, RULING_WORDS[language]
    try:
        settings = script.settings
        king = settings.king.email
        proposer = script.game.referee.state.turn_player
        assert proposer is not None
        voter = next(p.email for p in settings.players if p.email not in (king, proposer))
        send(proposer, words["propose"])
        send(voter, words["vote"], last("proposal_circulated", voter))
        send(voter, words["appeal"], last("reply", voter))
        send(king, words["yes"], last("ruling_prompt", king))
        for who in (king, proposer):
            send(who, words["agree"])
        return list(script.game.sent)
    finally:
        script.game.close()


WAITING_WORDS = {
    "en": {
        "accuse": "ACCUSE\nThe King counted my vote on 301 as YES.\nEND\n\n"
        "ACCUSE\nAnd my vote on 302 as well.\nEND",
        "champion": "CHAMPION A1 {judge}",
        "ruling": "RULING A1\nUPHELD: the record shows a NO.\nEND",
        "agree": "AGREE A1",
        "crown": "CROWN {judge}",
    },
    "it": {
        "accuse": "ACCUSO\nIl Re ha contato il mio voto sulla 301 come SÌ.\nFINE\n\n"
        "ACCUSO\nE anche il mio voto sulla 302.\nFINE",
        "champion": "CAMPIONE A1 {judge}",
        "ruling": "SENTENZA A1\nACCOLTA: il registro mostra un NO.\nFINE",
        "agree": "ACCORDO A1",
        "crown": "INCORONO {judge}",
    },
}


def play_waiting(language: str) -> list[Sent]:
    """Accusations past the daily limit (212, 213): with one a day, the second waits for the
    next day; the King it accuses is deposed meanwhile, so on its day it is not opened and its
    sender is told why."""
    script = _Script(language, "move", 4000, limits={"appeals_per_day": 1})
    send, words = script.send, WAITING_WORDS[language]
    try:
        king = script.settings.king.email
        accuser, judge = [p for p in script.settings.players if not p.king][-2:][::-1]
        send(accuser.email, words["accuse"])
        send(king, words["champion"].format(judge=judge.name))
        send(judge.email, words["ruling"])
        for who in (judge.email, accuser.email):
            send(who, words["agree"])
        send(king, words["crown"].format(judge=judge.name))
        script.game.advance(script.at + timedelta(days=1))  # the day turns: not opened
        return list(script.game.sent)
    finally:
        script.game.close()


# The tie needs two players to cross the winning line in one instant: two dissenters (206) of a
# proposal carried by majority (204), so five players and two full rounds, with the winning
# score lowered (209) to what the awards and the bonus bring them to.
TIE_PLAYERS = (("Dan Neri", "dan@example.org"), ("Eva Verdi", "eva@example.org"))
TIE_WORDS = {
    "en": {
        "amend": "PROPOSE AMEND 209\nThe first player to reach 12 points wins.\n"
        "SET winning_score = 12\nEND",
        "enact": "PROPOSE ENACT\nRule number {turn}.\nEND",
        "vote": "VOTE {number} {choice}",
        "yes": "YES",
        "no": "NO",
        "award": "AWARD 1",
    },
    "it": {
        "amend": "PROPONGO EMENDARE 209\nIl primo giocatore che raggiunge i 12 punti vince.\n"
        "IMPOSTA winning_score = 12\nFINE",
        "enact": "PROPONGO PROMULGARE\nRegola numero {turn}.\nFINE",
        "vote": "VOTO {number} {choice}",
        "yes": "SÌ",
        "no": "NO",
        "award": "PUNTI 1",
    },
}


def play_tie(language: str) -> list[Sent]:
    """A five-player game that ends in a tie for the win (209): the King's tie prompt."""
    base = load_settings(ROOT / "examples" / f"game-{language}.toml")
    extra = tuple(PlayerConfig(name, email, "", False) for name, email in TIE_PLAYERS)
    settings = replace(base, players=base.players + extra)
    start = settings.game.start
    assert start is not None
    game = _Game(settings, start)
    words = TIE_WORDS[language]
    at, number = start, 0

    def send(sender: str, body: str) -> None:
        nonlocal at, number
        at, number = at + timedelta(hours=1), number + 1
        step = Step(timedelta(0), sender, "move", {language: body})
        game.receive(_mail(settings, step, language, at, 1000 + number), at)

    try:
        king = settings.king.email
        turns = 2 * len(settings.players) + 1  # two full rounds, then majority voting (204)
        for turn in range(turns):
            player = game.referee.state.turn_player
            assert player is not None
            send(player, words["amend"] if turn == 0 else words["enact"].format(turn=turn))
            proposal = game.referee.state.current_proposal
            at += timedelta(days=8)  # the week of debate (112)
            last = turn == turns - 1
            voters = [p.email for p in settings.players]
            against = [v for v in voters if v != player][1:3] if last else []
            for voter in voters:
                choice = words["no" if voter in against else "yes"]
                send(voter, words["vote"].format(number=proposal, choice=choice))
            if not last:
                send(king, words["award"])
        return list(game.sent)
    finally:
        game.close()


def pick(sent: list[Sent]) -> dict[str, Sent]:
    """The first mail of every kind."""
    chosen: dict[str, Sent] = {}
    for mail in sent:
        chosen.setdefault(mail.kind, mail)
    return chosen


def parts(raw: bytes) -> tuple[str, str, str]:
    """A sent mail's subject, text/plain part and text/html part, decoded."""
    message = message_from_bytes(raw, policy=policy.default)
    subject = str(message["Subject"])
    text = html_part = ""
    for part in message.walk():
        if part.get_content_disposition() == "attachment":
            continue  # a file it carries (the ruleset, 205), not the mail's own text
        if part.get_content_type() == "text/plain":
            text = part.get_content()
        elif part.get_content_type() == "text/html":
            html_part = part.get_content()
    return subject, text, html_part


def expected_kinds() -> list[str]:
    notices = [k.value for k in NoticeKind]
    return notices + list(REPLY_KINDS) + list(OPERATOR_KINDS) + [*UNREAD_KINDS, ATTACHED_KIND]


def write(out: Path, language: str, chosen: dict[str, Sent]) -> list[str]:
    folder = out / language
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[str] = []
    for kind in expected_kinds():
        mail = chosen.get(kind)
        if mail is None:
            rows.append(f"<li>{html.escape(kind)}: not reached by the games</li>")
            continue
        subject, text, html_part = parts(mail.raw)
        (folder / f"{kind}.html").write_text(html_part, encoding="utf-8")
        (folder / f"{kind}.txt").write_text(f"Subject: {subject}\n\n{text}", encoding="utf-8")
        (folder / f"{kind}.eml").write_bytes(mail.raw)
        rows.append(
            f'<li><a href="{kind}.html">{html.escape(kind)}</a> '
            f'(<a href="{kind}.txt">text</a>): {html.escape(subject)}</li>'
        )
    (folder / "index.html").write_text(
        f'<!DOCTYPE html><meta charset="utf-8"><title>Gallery ({language})</title>'
        f"<h1>Every mail ({language})</h1><ul>{''.join(rows)}</ul>\n",
        encoding="utf-8",
    )
    return [k for k in expected_kinds() if k not in chosen]


def screenshots(out: Path, chromium: str, docs: Path | None = None) -> tuple[list[Path], list[str]]:
    """A full-page PNG of every HTML part, at phone and at desktop width; with `docs`, the
    README's chosen few there too, cut to their first screenfuls. Also the pages wider than
    the screen they are shown on (a phone reader would have to scroll sideways)."""
    from playwright.sync_api import sync_playwright

    shots: list[Path] = []
    overflowing: list[str] = []
    profile = tempfile.mkdtemp(prefix="gallery-chromium-")
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch_persistent_context(
                profile,
                executable_path=chromium,
                args=[a for a in CHROMIUM_ARGS if a != "--headless"],
                headless=True,
                viewport={"width": PHONE, "height": 800},
                java_script_enabled=False,
                offline=True,
            )
            try:
                page = browser.new_page()
                for source in sorted(out.glob("*/*.html")):
                    if source.name == "index.html":
                        continue
                    for width in (PHONE, DESKTOP):
                        page.set_viewport_size({"width": width, "height": 800})
                        page.goto(source.resolve().as_uri())
                        wide = page.evaluate("document.documentElement.scrollWidth")
                        if wide > width:
                            overflowing.append(f"{source} is {wide} px wide at {width} px")
                        target = source.with_name(f"{source.stem}-{width}.png")
                        page.screenshot(path=str(target), full_page=True)
                        shots.append(target)
                if docs is not None:
                    docs.mkdir(parents=True, exist_ok=True)
                    for language, kind, width in README_SHOTS:
                        page.set_viewport_size({"width": width, "height": 800})
                        page.goto((out / language / f"{kind}.html").resolve().as_uri())
                        height = min(page.evaluate("document.body.scrollHeight"), README_HEIGHT)
                        target = docs / f"{language}-{kind}-{width}.png"
                        page.screenshot(
                            path=str(target),
                            full_page=True,
                            clip={"x": 0, "y": 0, "width": width, "height": height},
                        )
                        shots.append(target)
            finally:
                browser.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return shots, overflowing


def build(out: Path) -> dict[str, list[str]]:
    """Write the gallery; returns, per language, the kinds no game reached."""
    missing: dict[str, list[str]] = {}
    for language in LANGUAGES:
        missing[language] = write(out, language, pick(play(language)))
    return missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "gallery")
    parser.add_argument("--screenshots", action="store_true", help="take Chromium screenshots")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", CHROMIUM))
    parser.add_argument("--docs", type=Path, help="copy the README's screenshots here")
    args = parser.parse_args(argv)
    missing = build(args.out)
    for language, kinds in missing.items():
        if kinds:
            print(f"{language}: not reached: {', '.join(kinds)}")
    count = sum(1 for p in args.out.glob("*/*.html") if p.name != "index.html")
    print(f"wrote {count} mails to {args.out}")
    if args.screenshots:
        shots, overflowing = screenshots(args.out, args.chromium, args.docs)
        print(f"took {len(shots)} screenshots")
        for problem in overflowing:
            print(f"too wide: {problem}", file=sys.stderr)
        if overflowing:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
