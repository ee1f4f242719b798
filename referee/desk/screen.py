"""Screening inbound mail: an ordered chain of named checks (issue 15; rules 101-215).

Each check asks one question of a mail and, when the answer stops the mail, returns a
`Verdict` naming itself: the check's name goes into the log line and the `inbound` record, so
"why was this mail refused?" has a one-word answer. The order is data (`CHAIN`), and it
matters: every check that can refuse a mail whose sender is not believed comes before
`daily_allowance`, so a forger can never spend a player's allowance, and mail whose sender is
not believed is answered by at most one short note a day per address, which never repeats
anything of the refused mail (its subject, its text, its headers): the referee is nobody's
mail cannon. `replay` and the live service run the same chain.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from referee.config import Settings
from referee.core import outcomes
from referee.core.events import Outcome, Reason
from referee.core.model import GameState
from referee.mail.auth import Authentication, DnsLookup, authenticate, signed_headers
from referee.mail.parse import InboundMail
from referee.store.store import UNBELIEVED, SenderDay, UnitOfWork
from referee.store.tables import InboundStatus


class Answer(enum.Enum):
    SILENCE = "silence"  # no mail back at all
    NOTE = "note"  # the short note to an unbelieved sender: once a day per address, no text
    STRANGER = "stranger"  # the note to someone not playing: once a day per address
    REPLY = "reply"  # the usual reply, naming the refusal


@dataclass(frozen=True)
class Intake:
    """What the checks look at: one parsed mail, its raw bytes, when and where it arrived."""

    mail: InboundMail
    raw: bytes
    at: datetime
    state: GameState
    settings: Settings
    dns: DnsLookup | None
    oversized: bool  # only the head was read
    # The verdict intake recorded for this very message (replay, verify): keys leave the DNS
    recorded: Authentication | None = None
    _today: list[SenderDay] = field(default_factory=list, compare=False, repr=False)

    def today(self, work: UnitOfWork) -> SenderDay:
        """The sender's mail and commands so far on this mail's day, asked of the store once:
        `daily_allowance` and then the reading of the mail both need them, and nothing is
        recorded in between."""
        if not self._today:
            self._today.append(work.sender_today(self.mail.sender, self.at))
        return self._today[0]


@dataclass(frozen=True)
class Verdict:
    """A check that stopped the mail: what to record and how to answer."""

    check: str
    status: InboundStatus
    answer: Answer
    outcome: Outcome | None = None
    why: str = ""  # for the log and the record, never for the reply to an unbelieved sender
    believed: bool = True  # False: the named sender is not shown to have sent it

    @property
    def stopped(self) -> str:
        """Which check stopped the mail and why, plainly, for the operator's log line: `the
        player check (the sender is not a player of this game)`; the details the check found
        follow when they add anything (verify review: it read `player: unbelieved player`)."""
        plain = STOPS.get(self.check, self.check)
        detail = self.why or (str(self.outcome.code) if self.outcome is not None else "")
        if detail and detail not in (self.check, plain):
            plain = f"{plain}: {detail}"
        return f"the {self.check} check ({plain})"

    @property
    def note(self) -> str:
        """The `inbound.note`: unbelieved mail is marked so it never counts against anyone."""
        code = str(self.outcome.code) if self.outcome is not None else self.check
        text = code if not self.why else self.why if self.outcome is None else f"{code}: {self.why}"
        return text if self.believed else f"{UNBELIEVED}{self.check}: {text}"


Check = Callable[[Intake, UnitOfWork], Verdict | None]


def automatic(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """A bounce, an auto-reply or the referee's own mail: never answered, never obeyed."""
    mail = intake.mail
    if mail.bounce or mail.automatic or mail.sender in intake.settings.game.addresses:
        return Verdict("automatic", InboundStatus.IGNORED, Answer.SILENCE, why="")
    return None


def single_sender(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """No single mailbox in From: no one to answer and no one to obey."""
    if intake.mail.sender:
        return None
    return Verdict(
        "single_sender",
        InboundStatus.REFUSED,
        Answer.SILENCE,
        why=f"{Reason.NO_SINGLE_SENDER}: {intake.mail.sender_problem}",  # kept as before
        believed=False,
    )


def player(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """Only the game's players may command it; anyone else gets the stranger's note."""
    if intake.state.player(intake.mail.sender) is not None:
        return None
    return Verdict("player", InboundStatus.STRANGER, Answer.STRANGER, believed=False)


def whole_headers(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """A header the referee reads appears twice: which one did the signer sign? (A To prepended
    to a player's signed mail to another game would make it look written here.) It comes after
    `authenticated`: a mail not shown to be the player's gets only the day's short note there;
    one that is gets a reply naming the header. Either way nothing in it is read, and it never
    counts against the player's allowance (someone holding a copy may have added the header)."""
    if not intake.mail.duplicated:
        return None
    headers = ", ".join(intake.mail.duplicated)
    return Verdict(
        "whole_headers",
        InboundStatus.REFUSED,
        Answer.REPLY,
        Outcome(outcomes.DuplicateHeader(headers=headers)),
        why=headers,
        believed=False,
    )


def authenticated(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """The From address is vouched for by the trusted server or a DKIM signature (auth)."""
    verdict = intake.recorded or authenticate(
        intake.raw, intake.mail.sender, intake.settings.auth, intake.dns
    )
    work.authentication = {"ok": verdict.ok, "why": verdict.why}  # bound in the link (213)
    if verdict.ok:
        return None
    why = verdict.why
    if intake.oversized:
        why = f"too large to read whole, so no signature could be checked ({why})"
    return Verdict(
        "authenticated",
        InboundStatus.REFUSED,
        Answer.NOTE,
        Outcome(outcomes.NotAuthenticated(why=why)),
        why=why,
        believed=False,
    )


def addressed_here(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """The mail is written to this game: its address among To and Cc. A player's signed mail
    to another game or to another player, resent here by whoever holds a copy, never acts."""
    mail = intake.mail
    ours = intake.settings.game.addresses  # the address and its aliases, lower-case
    signed = signed_headers(intake.raw, mail.sender.rpartition("@")[2])
    named = any(a in mail.recipients for a in ours)
    if named and signed is None:
        return None
    # Signed by the sender's domain: only a recipient header the signature covers counts.
    if signed is not None and any(
        a in listed and header in signed
        for header, listed in (("to", mail.written_to), ("cc", mail.copied))
        for a in ours
    ):
        return None
    why = "unsigned" if named else "elsewhere"  # the reply's words
    refusal = outcomes.NotAddressed(address=intake.settings.game.address, why=why)
    logged = "in a header the signature does not sign" if why == "unsigned" else "not addressed"
    return Verdict("addressed_here", InboundStatus.REFUSED, Answer.REPLY, Outcome(refusal), logged)


def one_game(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """A mail another game of this referee already applied acts there only: the same signed
    mail, written to two games or resent from one to the other, never acts twice."""
    if work.seen_elsewhere(intake.mail) is None:
        return None
    refusal = outcomes.NotAddressed(address=intake.settings.game.address, why="other_game")
    return Verdict(
        "one_game", InboundStatus.REFUSED, Answer.REPLY, Outcome(refusal), "applied in another game"
    )


def daily_allowance(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """The player's mail and commands today, counting only mail shown to be his."""
    limits = intake.settings.limits
    today = intake.today(work)
    upto = datetime.combine(intake.at.astimezone(UTC).date(), time(), tzinfo=UTC) + timedelta(1)
    if today.mails >= limits.mails_per_day:
        over = outcomes.DailyLimit(what="mails", limit=limits.mails_per_day, next=upto)
    elif today.commands >= limits.commands_per_day:
        over = outcomes.DailyLimit(what="commands", limit=limits.commands_per_day, next=upto)
    else:
        return None
    # told once already (the first mail over the limit): silence till tomorrow
    answer = Answer.REPLY if today.mails <= limits.mails_per_day else Answer.SILENCE
    return Verdict("daily_allowance", InboundStatus.REFUSED, answer, Outcome(over))


def header_length(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """A Subject (or From, To, Cc, Date) longer than any client writes: refused whole, with a
    reply that names the header and never quotes it back."""
    limit = intake.settings.limits.max_header_chars
    name, length = intake.mail.longest_header
    if length <= limit:
        return None
    too_long = outcomes.HeaderTooLong(header=name, length=f"{length:,}", limit=f"{limit:,}")
    why = f"{name}: {length:,} characters"
    return Verdict("header_length", InboundStatus.REFUSED, Answer.REPLY, Outcome(too_long), why)


def size(intake: Intake, work: UnitOfWork) -> Verdict | None:
    limit = intake.settings.game.max_mail_bytes
    if intake.mail.size <= limit:
        return None
    too_large = outcomes.TooLarge(limit=f"{limit // 1_000_000} MB")
    return Verdict("size", InboundStatus.REFUSED, Answer.REPLY, Outcome(too_large))


def length(intake: Intake, work: UnitOfWork) -> Verdict | None:
    longest = intake.settings.limits.max_body_chars
    body = intake.mail.body
    if len(body) <= longest:
        return None
    too_long = outcomes.TooLong(length=f"{len(body):,}", limit=f"{longest:,}")
    return Verdict("length", InboundStatus.REFUSED, Answer.REPLY, Outcome(too_long))


# What each check's stop means, for the operator's log (`Verdict.stopped`).
STOPS = {
    "automatic": "an automatic mail (a bounce, an auto-reply, a list): never answered",
    "single_sender": "From names no single mailbox",
    "player": "the sender is not a player of this game",
    "authenticated": "the mail is not shown to be written by the player it names",
    "whole_headers": "a header the referee reads appears twice",
    "addressed_here": "the mail is not addressed to this game",
    "one_game": "another game of this referee already applied this mail",
    "daily_allowance": "the player is over the day's allowance of mail or commands",
    "header_length": "a header is longer than [limits] max_header_chars",
    "size": "the mail is larger than [game] max_mail_bytes",
    "length": "the text is longer than [limits] max_body_chars",
}


# The order is the policy: nothing that can refuse a forger's mail comes after the allowance.
CHAIN: tuple[tuple[str, Check], ...] = (
    ("automatic", automatic),
    ("single_sender", single_sender),
    ("player", player),
    ("authenticated", authenticated),
    ("whole_headers", whole_headers),
    ("addressed_here", addressed_here),
    ("one_game", one_game),
    ("daily_allowance", daily_allowance),
    ("header_length", header_length),
    ("size", size),
    ("length", length),
)


def screen(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """The first check that stops the mail, or None: the mail is read for commands."""
    for _name, check in CHAIN:
        verdict = check(intake, work)
        if verdict is not None:
            return verdict
    return None
