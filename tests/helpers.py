"""Shared builders for tests: a started game, timed commands, and real-looking mail."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from itertools import count

from referee import rulebook
from referee.core import engine
from referee.core.events import Command, Effect, Notice, Outcome, Tick
from referee.core.model import GameState, Player, Proposal

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
ADA, BOB, CARLA, DAN = (
    "ada@example.org",
    "bob@example.org",
    "carla@example.org",
    "dan@example.org",
)
PLAYERS = (
    Player("Ada Lovelace", ADA, "Lovelace"),
    Player("Bob Rossi", BOB, "Rossi"),
    Player("Carla De Santis", CARLA, "De Santis"),
)
_ids = count(1)


def new_game(
    players: tuple[Player, ...] = PLAYERS,
    king: str = ADA,
    language: str = "en",
    house: tuple[tuple[str, str], ...] = (),
) -> GameState:
    rules = rulebook.load("builtin", language).at(T0)
    state = GameState(
        name="Test Nomic",
        language=language,
        started_at=T0,
        players=players,
        king=king,
        rules=rules,
        house_parameters=house,
    )
    return engine.start_game(state, T0).state


@dataclass
class Game:
    """A game driven step by step at explicit times, keeping every effect."""

    state: GameState = field(default_factory=new_game)
    now: datetime = T0
    log: list[Effect] = field(default_factory=list)

    def at(self, when: datetime) -> Game:
        self.clock(when)
        return self

    def clock(self, when: datetime) -> None:
        """Fire every deadline due up to `when`, as the service does."""
        while True:
            due = engine.next_deadline(self.state)
            if due is None or due > when:
                break
            self.apply_tick(due)
        self.now = max(self.now, when)

    def apply_tick(self, when: datetime) -> None:
        decision = engine.decide(self.state, Tick(), when)
        self.state = decision.state
        self.log.extend(decision.effects)

    def do(self, command: Command, later: timedelta = timedelta(minutes=1)) -> Outcome:
        self.clock(self.now + later)
        decision = engine.decide(self.state, command, self.now)
        self.state = decision.state
        self.log.extend(decision.effects)
        outcome = decision.effects[0]
        assert isinstance(outcome, Outcome)
        return outcome

    def notices(self, kind: str) -> list[Notice]:
        return [e for e in self.log if isinstance(e, Notice) and e.kind.value == kind]


def player(state: GameState, email: str) -> Player:
    found = state.player(email)
    assert found is not None, email
    return found


def proposal(state: GameState, number: int) -> Proposal:
    found = state.proposal(number)
    assert found is not None, number
    return found


def mail(
    sender: str,
    body: str,
    subject: str = "move",
    at: datetime = T0,
    message_id: str | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "referee@nomic.example"
    message["Subject"] = subject
    message["Date"] = format_datetime(at)
    message["Message-ID"] = message_id or f"<test-{next(_ids)}@example.org>"
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(body)
    return message.as_bytes()


def files_of(message: EmailMessage) -> dict[str, bytes]:
    """A mail's attachments by file name, decoded."""
    found = {}
    for part in message.iter_attachments():
        assert isinstance(part, EmailMessage)
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        found[str(part.get_filename())] = payload
    return found


def flat_text(message: EmailMessage) -> str:
    """A mail's plain-text body with its whitespace run together (wrapping set aside)."""
    body = message.get_body(("plain",))
    assert body is not None
    return " ".join(str(body.get_content()).split())
