"""`nomic-referee demo`: a short game refereed start to winner on embedded defaults (101-215).

It writes a commented `game.toml`, makes the SQLite store, the inbox Maildir (with `new/`) and
the `sent` Maildir, then plays three turns through the real service: each player's mail is
dropped into `maildir/new/` and `Service.run_once` takes it at the script's time, the way
`run --once --now` does; every deadline (the week of debate, rule 112) is fired on the same
accelerated clock. What the referee sends lands in `sent/`, which a mail client opens. Along
the way: a refused command (not your turn, 201), an adopted amendment with a parameter (209),
a proposal rejected under unanimity (203), the King's awards (202) and the winner (209).
"""

from __future__ import annotations

import mailbox
import os
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

from referee.config import load_settings
from referee.core import engine
from referee.counts import counted
from referee.mail.sentbox import subject_of
from referee.runner import Service
from referee.starter import SAMPLE_PLAYERS, initialise, starter_config
from referee.store.store import Store

Echo = Callable[[str], None]
HEADLINE = "The game of `nomic-referee demo` (it rewrites this folder when run again)"
ADDRESS = "referee@nomic.example"
ADA, BOB, CARLA = (p.email for p in SAMPLE_PLAYERS)
NAMES = {p.email: p.name for p in SAMPLE_PLAYERS}
MADE = ("game.toml", "nomic.db", "nomic.db-wal", "nomic.db-shm", "maildir", "sent", "archive")


class DemoError(RuntimeError):
    """The demo cannot use the folder it was given."""


@dataclass(frozen=True)
class Move:
    """One player's mail, `hours` after the game starts."""

    hours: float
    sender: str
    english: str
    italian: str


DAY = 24.0
SCRIPT = (
    Move(
        1,
        CARLA,
        "PROPOSE AMEND 209\nThe first player to reach 10 points wins.\nSET winning_score = 10\nEND",
        "PROPONGO EMENDARE 209\nIl primo giocatore che raggiunge i 10 punti vince.\n"
        "IMPOSTA winning_score = 10\nFINE",
    ),
    Move(
        3,
        BOB,
        "VOTE 301 YES\nPROPOSE ENACT\nBob wins at once.\nEND",
        "VOTO 301 SÌ\nPROPONGO PROMULGARE\nBob vince subito.\nFINE",
    ),
    Move(5, ADA, "VOTE 301 YES", "VOTO 301 SÌ"),
    Move(DAY + 2, CARLA, "VOTE 301 YES\nSTATUS", "VOTO 301 SÌ\nSTATO"),
    Move(7 * DAY + 3, ADA, "AWARD 8", "PUNTI 8"),
    Move(
        7 * DAY + 4,
        ADA,
        "PROPOSE ENACT\nEvery proposal must carry a title.\nEND",
        "PROPONGO PROMULGARE\nOgni proposta deve avere un titolo.\nFINE",
    ),
    Move(7 * DAY + 6, BOB, "VOTE 302 NO", "VOTO 302 NO"),
    Move(7 * DAY + 7, CARLA, "VOTE 302 YES", "VOTO 302 SÌ"),
    Move(8 * DAY, ADA, "VOTE 302 YES", "VOTO 302 SÌ"),
    Move(14 * DAY + 5, ADA, "AWARD 2", "PUNTI 2"),
    Move(
        14 * DAY + 6,
        BOB,
        "PROPOSE ENACT\nPlayers may also vote by carrier pigeon.\nEND",
        "PROPONGO PROMULGARE\nI giocatori possono votare anche per piccione viaggiatore.\nFINE",
    ),
    Move(14 * DAY + 7, ADA, "VOTE 303 YES", "VOTO 303 SÌ"),
    Move(14 * DAY + 8, CARLA, "VOTE 303 YES", "VOTO 303 SÌ"),
    Move(14 * DAY + 9, BOB, "VOTE 303 YES", "VOTO 303 SÌ"),
    Move(21 * DAY + 8, ADA, "AWARD 10", "PUNTI 10"),
    Move(21 * DAY + 9, CARLA, "SCORES", "PUNTEGGI"),
)


def prepare(folder: Path) -> None:
    """An empty folder, or a demo folder from before (cleared); never anyone else's files."""
    if folder.exists() and not folder.is_dir():
        raise DemoError(f"{folder} is a file; give a folder: nomic-referee demo FOLDER")
    config = folder / "game.toml"
    if folder.is_dir() and any(folder.iterdir()):
        ours = config.is_file() and config.read_text(encoding="utf-8").startswith(f"# {HEADLINE}")
        if not ours:
            raise DemoError(
                f"{folder} is not empty and holds no demo; give another: nomic-referee demo FOLDER"
            )
        if not _still_the_demo(config):
            raise DemoError(
                f"{config} was made by the demo but now names another game or other players: "
                "it is left as it is; give another folder: nomic-referee demo FOLDER"
            )
        for name in MADE:
            path = folder / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    folder.mkdir(parents=True, exist_ok=True)


DEMO_NAMES = ("Nomic demo", "Nomic di prova")


def _still_the_demo(config: Path) -> bool:
    """Whether a config the demo wrote still holds the demo's game: its name and its players
    unchanged. A config copied from the demo and made a real game keeps the demo's first line,
    and its database and mail are never the demo's to clear."""
    try:
        settings = load_settings(config)
    except Exception:  # whatever it now holds, it is not the demo's config as written
        return False
    demo_players = sorted(p.email for p in SAMPLE_PLAYERS)
    return settings.game.name in DEMO_NAMES and (
        sorted(p.email for p in settings.players) == demo_players
    )


def deliver(new: Path, raw: bytes, at: datetime, index: int) -> None:
    """Put a mail into the Maildir's `new/` as an MTA would at the game's time `at`: its
    unique name starts with the seconds of `at` and the file is dated then, so the referee
    (and `verify` of the Processed folder later) takes it as delivered at `at`, not at the
    moment the demo ran."""
    name = f"{int(at.timestamp())}.demo{index}.nomic-demo"
    path = new / name
    path.write_bytes(raw)
    os.utime(path, (at.timestamp(), at.timestamp()))


SUBJECTS = {
    "PROPOSE": ("A proposal", "Una proposta"),
    "PROPONGO": ("A proposal", "Una proposta"),
    "VOTE": ("My vote", "Il mio voto"),
    "VOTO": ("My vote", "Il mio voto"),
    "AWARD": ("Points", "Punti"),
    "PUNTI": ("Points", "Punti"),
    "SCORES": ("Scores?", "Punteggi?"),
}


def mail(move: Move, language: str, at: datetime) -> bytes:
    message = EmailMessage()
    message["From"] = f"{NAMES[move.sender]} <{move.sender}>"
    message["To"] = ADDRESS
    english, italian = SUBJECTS.get(move.english.split()[0], ("Nomic", "Nomic"))
    message["Subject"] = english if language == "en" else italian
    message["Date"] = format_datetime(at)
    message["Message-ID"] = make_msgid("demo", move.sender.partition("@")[2])
    message.set_content(move.english if language == "en" else move.italian)
    return message.as_bytes()


class _Narrator:
    """Prints each step: the mail dropped in, the deadline fired, and what the referee sent."""

    def __init__(self, service: Service, store: Store, echo: Echo) -> None:
        self.service, self.store, self.echo = service, store, echo
        self.zone = service.referee.letters.renderer.zone
        self.seen = max((r.id or 0 for r in store.outbox(service.referee.game_id)), default=0)

    def clock(self, at: datetime) -> str:
        return at.astimezone(self.zone).strftime("%a %d %b %H:%M")

    def step(self, at: datetime, what: str) -> None:
        done = self.service.run_once(at)
        if done.failed:
            raise DemoError(f"the referee set aside {counted(done.failed, 'mail')}: see the log")
        rows = [
            r for r in self.store.outbox(self.service.referee.game_id) if (r.id or 0) > self.seen
        ]
        self.seen = max([self.seen, *(r.id or 0 for r in rows)])
        subjects = Counter(subject_of(r.raw) for r in rows)
        out = "; ".join(f"{s}" + (f" (x{n})" if n > 1 else "") for s, n in subjects.items())
        self.echo(f"{self.clock(at)}  {what}")
        if out:
            self.echo(f"{'':14}referee -> {out}")

    def deadlines(self, until: datetime) -> None:
        """Fire, each at its own time, the deadlines that fall before `until`."""
        while True:
            due = engine.next_deadline(self.service.referee.state)
            if due is None or due > until:
                return
            phase = self.service.referee.state.phase.value
            self.step(due, f"[clock] deadline of the {phase} phase")


def play(folder: Path, language: str, echo: Echo) -> None:
    """Write the demo folder and play the scripted game to its winner."""
    prepare(folder)
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=30)
    config = folder / "game.toml"
    name = DEMO_NAMES[0] if language == "en" else DEMO_NAMES[1]
    archive = 'archive = "archive"  # one file per rule, with its history (rule 213)\n'
    config.write_text(
        starter_config(name, language, SAMPLE_PLAYERS, start, HEADLINE, archive),
        encoding="utf-8",
    )
    settings = load_settings(config)
    done = initialise(settings, start)
    echo(f"{config}: {done.players} players, {done.rules} rules; first turn: {done.first_turn}")
    echo("Each line is a mail dropped into maildir/new/ and taken by the referee (run --once).")
    inbox = settings.maildir / "new"
    store = Store(settings.database_url)
    try:
        service = Service(settings, store)
        narrator = _Narrator(service, store, echo)
        narrator.step(start, "[game starts]")
        for index, move in enumerate(SCRIPT):
            at = start + timedelta(hours=move.hours)
            narrator.deadlines(at)
            deliver(inbox, mail(move, language, at), at, index)
            text = move.english if language == "en" else move.italian
            narrator.step(at, f"{NAMES[move.sender]}: " + " / ".join(text.splitlines()[:2]))
        narrator.deadlines(start + timedelta(days=29))
        state = service.referee.state
    finally:
        store.close()
    _epilogue(folder, config, settings.sent, state.winner, NAMES, echo)
    if state.winner is None:
        raise DemoError("the demo game ended without a winner: please report this")


def _epilogue(
    folder: Path,
    config: Path,
    sent: Path,
    winner: str | None,
    names: dict[str, str],
    echo: Echo,
) -> None:
    count = sum(1 for _ in mailbox.Maildir(str(sent), create=False).iterkeys())
    echo("")
    echo(f"Winner: {names.get(winner or '', winner or '-')}.")
    echo(f"{count} mails the referee sent are in the Maildir {sent}/ (no [smtp] in the config).")
    echo("Read everything:")
    echo(f"  nomic-referee status {config}          the game as it stands")
    echo(f"  nomic-referee outbox {config}          every mail, one line each")
    echo(f"  nomic-referee outbox {config} --export demo.mbox   all of it as one mbox")
    echo(f"  mutt -f {sent}     (or any mail client that opens a Maildir)")
    echo(f"  {folder / 'archive'}/     one file per rule, with its history")
    echo(f"  {folder / 'maildir'}/.Processed/     the players' mail, as the referee took it")
    echo(
        f"A real game: copy {config} to a folder of its own, edit it (name, players, address,"
        " [imap]/[smtp]) and see the README."
    )
