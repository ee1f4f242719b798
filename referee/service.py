"""The referee service: one game's mail in, the engine, the store and the outbox (rules 101-215).

This is the one module that ties the pure core to the edges. `receive` takes a raw message,
fires the deadlines due before it, obeys its commands and writes the reply and the notices to
the outbox, all in one transaction. `advance` fires the deadlines due by a time. `replay` and
the live service both go through here, so they reach the same state from the same mail.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from referee import __version__, record, rulebook
from referee.config import Settings
from referee.core import (
    chain,
    clock,
    codec,
    engine,
)
from referee.core.events import (
    Effect,
    Enrol,
    MoveAddress,
    Outcome,
    Quit,
    Tick,
)
from referee.core.model import GameState, Player
from referee.core.rebuild import rebuild_from
from referee.desk import deciding, pipeline, unreadable
from referee.desk.answering import STOPPED as STOPPED  # replay's
from referee.desk.answering import Desk
from referee.desk.answering import Receipt as Receipt
from referee.desk.letters import BOUNCE_NOTICE as BOUNCE_NOTICE  # gallery's
from referee.desk.letters import Letters
from referee.desk.logged import Redacted, Shown
from referee.desk.screen import Intake
from referee.mail import intake
from referee.mail.auth import Authentication, DnsLookup
from referee.mail.parse import InboundMail
from referee.store.store import Store, StoreError, UnitOfWork
from referee.store.tables import InboundStatus

log = logging.getLogger("referee")


def missing_game(store: Store, settings: Settings) -> str:
    """Why `[game]` finds no game, and how to reach the one the operator meant."""
    game = settings.game
    held = store.games()
    text = f"no game with id {game.key!r} ({game.name!r}) in the database"
    if not held:
        return f"{text}: run 'nomic-referee init'"
    listed = ", ".join(f"id {key!r} ({name!r})" for key, name in held)
    return (
        f"{text}; it holds {listed}. A renamed game keeps its id: set [game] id to it "
        '(e.g. id = "' + held[0][0] + "\"); a new game: run 'nomic-referee init'"
    )


def initial_state(settings: Settings, started: datetime) -> GameState:
    """The game before its first turn: the config's players and King, the ruleset's rules."""
    ruleset = rulebook.load(
        settings.game.ruleset, settings.game.language, settings.folder, dict(settings.parameters)
    )
    players = tuple(Player(name=p.name, email=p.email, surname=p.surname) for p in settings.players)
    rules = ruleset.at(started)
    state = GameState(
        name=settings.game.name,
        language=settings.game.language,
        started_at=started,
        players=players,
        king=settings.king.email,
        rules=rules,
        house_parameters=settings.parameters,
        carriers=ruleset.carriers,
        house_mechanics=ruleset.house_mechanics,
    )
    try:
        rulebook.check_playable(state)  # 210, 115: never start a game that cannot move
    except rulebook.RulesetError as exc:
        if Path(ruleset.source).is_file():  # a document named directly has no ruleset.toml
            raise rulebook.RulesetError(
                f"{exc}. {rulebook.document_advice(ruleset.source)}"
            ) from exc
        raise
    return state


class Referee:
    """One game, bound to a store and a renderer."""

    def __init__(
        self,
        store: Store,
        game_id: int,
        settings: Settings,
        render: bool = True,
        dns: DnsLookup | None = None,
        recorded: Mapping[str, Authentication] | None = None,
    ) -> None:
        self.dns = dns  # DKIM key lookups; None: the system's DNS
        # Verdicts intake recorded, by the message's digest: replay and verify decide as intake
        # did, though the keys have left the DNS since (213)
        self.recorded = recorded or {}
        self.store = store
        self.game_id = game_id
        self.settings = settings
        # A replay that only wants the final state counts the mail it would send but does not
        # render it; the decisions, and so the state, are the same either way.
        # Where ARCHIVE writes a record too large for a mail (213): the website's folder; a
        # replay sets its own (`replay --site`) or none
        self.site: Path | None = settings.game.site if settings.game.site_url else None
        self.withheld = 0  # stand-ins of withheld mail taken since this object was made
        # The links made by a stand-in of a mail that changed the game: a replay cannot follow
        self.unfollowed: list[int] = []
        snapshot, seq = store.snapshot(game_id)
        self.state = rebuild_from(snapshot, store.events(game_id, after=seq))
        if self.state.name != settings.game.name:  # the display name was corrected: show it
            self.state = replace(self.state, name=settings.game.name)
        latest = store.last_event_at(game_id)
        self.last_at = clock.utc(latest) if latest is not None else self.state.started_at
        self.link, self.head = store.chain_head(game_id)  # the hash chain's last link (213)
        self._digested: tuple[GameState, str] | None = None
        self._digest = chain.StateDigest()  # repr(state)'s unchanged parts, kept (213)
        # A replay that only wants the final state counts the mail it would send but does not
        # render it; the decisions, and so the state, are the same either way.
        self.letters = Letters(settings, render)

    @property
    def desk(self) -> Desk:
        """What the desk's stages share: the settings, the letters, the DNS as set now."""
        return Desk(self.settings, self.letters, self.dns)

    @property
    def queued(self) -> int:
        """Mails decided since this object was made, rendered or not."""
        return self.letters.queued

    # ----- creating and opening games -------------------------------------------------------

    @classmethod
    def create(
        cls, store: Store, settings: Settings, started: datetime, render: bool = True
    ) -> Referee:
        """A new game: the initial state, the opening mail to everyone, the first turn."""
        store.create_schema()
        started = clock.utc(started)
        initial = initial_state(settings, started)
        game_id = store.create_game(
            settings.game.key,
            settings.game.name,
            settings.game.address,
            settings.game.language,
            initial,
            started,
        )
        try:
            referee = cls(store, game_id, settings, render)
            decision = engine.start_game(initial, started)
            with store.unit(game_id) as work:
                referee._emit(work, decision.effects, started, decision.state, inbound=None)
                work.save_state(decision.state, force=True)
                made = referee._chain(work, "start", started, None, decision.state)
            referee.link, referee.head = made
        except BaseException:  # a half-made game is no game: leave nothing behind
            store.delete_game(game_id)
            raise
        referee.state = decision.state
        log.info("game %r created with %d players", settings.game.name, len(settings.players))
        return referee

    @classmethod
    def open(cls, store: Store, settings: Settings) -> Referee:
        game_id = store.game_id(settings.game.key)
        if game_id is None:
            raise StoreError(missing_game(store, settings))
        if dict(store.games()).get(settings.game.key) != settings.game.name:
            store.rename_game(game_id, settings.game.name)  # the key stays; the name is shown
        return cls(store, game_id, settings)

    def checkpoint(self) -> None:
        """Write a state snapshot now (at shutdown, or when a replay ends)."""
        with self.store.unit(self.game_id) as work:
            work.save_state(self.state, force=True)

    # ----- the hash chain (213) ---------------------------------------------------------------

    def _chain(
        self,
        work: UnitOfWork,
        kind: str,
        at: datetime,
        raw: bytes | None,
        state: GameState,
        digest: str | None = None,
    ) -> tuple[int, str]:
        """Write the unit's link: the message as received, its time, the events it caused, the
        referee's version and the state's digest. Returns the new (number, head), which the
        caller keeps once the unit has committed. `digest` is the SHA-256 of the mail a
        stand-in holds the place of (`withhold`), when `raw` is that stand-in."""
        seq = self.link + 1
        if digest is None and raw is not None:
            digest = chain.mail_digest(raw)
        text = chain.record(
            self.head,
            seq,
            kind,
            at,
            digest,
            work.appended,
            __version__,
            self._state_digest(state),
            work.authentication,
            work.delivered if kind == "mail" else None,
        )
        head = chain.head_of(text)
        work.append_link(seq, kind, at, raw, text, head)
        return seq, head

    def _state_digest(self, state: GameState) -> str:
        """The SHA-256 of the state's full representation (the frozen model's `repr`, a fifth
        of the cost of its JSON, which would be half a replay's time); a mail that changes
        nothing reuses it. The link names the referee's version, whose model it is."""
        if self._digested is None or self._digested[0] is not state:
            self._digested = (state, self._digest(state))
        return self._digested[1]

    # ----- the clock ------------------------------------------------------------------------

    def advance(self, now: datetime) -> int:
        """Fire every deadline due by `now`, each in order and in its own transaction."""
        now = clock.utc(now)
        fired = 0
        while True:
            due = engine.next_deadline(self.state)
            if due is None or due > now:
                return fired
            self._apply_tick(clock.catch_up(self.state, due, now))
            fired += 1

    def _apply_tick(self, at: datetime) -> None:
        decision = engine.decide(self.state, Tick(), at)
        with self.store.unit(self.game_id) as work:
            work.append_event(codec.event_to_data(Tick()), at, None)
            self._emit(work, decision.effects, at, decision.state, inbound=None)
            work.save_state(decision.state)
            made = self._chain(work, "tick", at, None, decision.state)
        self.link, self.head = made
        self.state = decision.state
        self.last_at = max(self.last_at, at)
        log.info("deadline at %s: phase %s", at.isoformat(), decision.state.phase.value)

    # ----- the operator --------------------------------------------------------------------

    def operate(self, event: Enrol | Quit | MoveAddress, at: datetime) -> Outcome:
        """An operator's change of the roster (`nomic-referee players`): an event of the log,
        announced to the table like the same change made by mail (201, 114)."""
        at = max(clock.utc(at), self.last_at)
        self.advance(at)
        decision = engine.decide(self.state, event, at)
        outcome, notices = deciding.split(decision)
        if outcome.ok:
            with self.store.unit(self.game_id) as work:
                work.append_event(codec.event_to_data(event), at, None)
                self._emit(work, notices, at, decision.state, inbound=None)
                work.save_state(decision.state)
            self.state = decision.state
            self.last_at = at
        log.info("operator: %s -> %s", type(event).__name__, outcome.code)
        return outcome

    # ----- inbound mail ---------------------------------------------------------------------

    def receive(self, raw: bytes, at: datetime, size: int | None = None) -> Receipt:
        """Process one raw message delivered at `at`; everything it causes is committed
        together.

        It takes effect at its delivery time, or, when a later event was logged before it was
        read (a deadline fired, another mail applied), at that event's time: the log's times
        never go back (one clock per run). Both times are kept, in its inbound row and its
        link, and its reply says when it took effect later than it was delivered.
        `size` is the message's real size when `raw` is only its head (a mail too large to
        read whole). A mail that cannot be read safely raises `Unreadable` (quarantine), once
        its sender has been told, when its headers name one to tell (`desk.unreadable`).
        """
        delivered = clock.utc(at)
        at = max(delivered, self.last_at)
        size = max(size or 0, len(raw))
        oversized = size > self.settings.game.max_mail_bytes
        if oversized:
            raw = intake.head(raw)
        try:
            mail = intake.read(raw, headers_only=oversized)
        except intake.Unreadable as problem:
            told = unreadable.sender_to_tell(self.desk, raw)
            if told is not None:  # the deadlines due before it fire first, as for any mail
                self.advance(at)
                with self.store.unit(self.game_id) as work:
                    made = (self.link, self.head)  # it makes no link: it names the last
                    unreadable.tell(self.desk, work, raw, told, at, problem, self.state, made)
            raise
        if size != mail.size:
            mail = replace(mail, size=size)
        self.advance(at)
        state = self.state
        with self.store.unit(self.game_id) as work:
            if work.seen(mail):
                # A copy of a mail already applied decides nothing: no link, so the chain is
                # the same whether the inbox was read again (a restore, a crash) or not.
                log.info("mail %s: duplicate, already applied", Shown(mail.message_id))
                return Receipt(mail.message_id, InboundStatus.DUPLICATE)
            work.delivered = delivered
            receipt, state = self._handle(work, mail, raw, at, state, oversized)
            work.save_state(state)
            self.link, self.head = self._chain(work, "mail", at, raw, state)
        self.state = state
        self.last_at = max(self.last_at, at)
        log.info(
            "mail %s from %s: %s, %d command(s), %d refused, %d mail(s) queued",
            Shown(mail.message_id),
            Redacted(mail.sender),
            receipt.status,
            receipt.commands,
            receipt.refused,
            receipt.sent,
        )
        return receipt

    def withhold(self, raw: bytes, at: datetime) -> None:
        """A replay's stand-in for a mail an archive withholds (213; `record.stand_in`),
        delivered at `at`: the deadlines due before it fire, then it makes the link the mail
        made, from what the stand-in keeps of it (its SHA-256, the verdict on its sender, the
        time it took effect, the one it was delivered). A mail of someone not playing changes
        nothing, so the link's events and state are the replay's own; a stand-in that says its
        mail caused events (a confirmed request to join the King has not admitted) cannot be
        followed, and its link is named in `unfollowed`. ValueError: not a stand-in."""
        held = record.read_stand_in(raw)
        delivered = clock.utc(at)
        at = max(delivered, self.last_at)
        self.advance(at)
        with self.store.unit(self.game_id) as work:
            work.delivered = delivered
            work.authentication = held.authentication
            made = self._chain(work, "mail", at, raw, self.state, held.digest)
        self.link, self.head = made
        self.last_at = max(self.last_at, at)
        self.withheld += 1
        if held.events or held.state != self._state_digest(self.state):
            self.unfollowed.append(self.link)
        log.info("link %d: a withheld mail's stand-in", self.link)

    def _handle(
        self,
        work: UnitOfWork,
        mail: InboundMail,
        raw: bytes,
        at: datetime,
        state: GameState,
        oversized: bool,
    ) -> tuple[Receipt, GameState]:
        recorded = self.recorded.get(chain.mail_digest(raw)) if self.recorded else None
        intake = Intake(mail, raw, at, state, self.settings, self.dns, oversized, recorded)
        link = (self.link, self.head)
        desked = pipeline.Desked(self.desk, work, intake, self._reply, self.site, link)
        return pipeline.handle(desked)

    def _reply(self, work: UnitOfWork, mail: InboundMail, *args: Any, **kwargs: Any) -> int:
        """Queue the one reply to a player's mail (`Desk.reply`); the desk's stages call it
        through here, so the service's own hook on the reply is the one they reach."""
        return self.desk.reply(work, mail, *args, **kwargs)

    def _emit(
        self,
        work: UnitOfWork,
        effects: Sequence[Effect],
        at: datetime,
        state: GameState,
        inbound: str | None,
    ) -> int:
        """Queue the notices among `effects`, one mail per recipient (`Desk.emit`)."""
        return self.desk.emit(work, effects, at, state, inbound)


def roster_difference(settings: Settings, state: GameState) -> list[str]:
    """How the config's players differ from the game's, one line each (after `init` the
    game's database is the roster; the config is only read by `init`)."""
    lines = []
    listed = {p.email: p for p in settings.players}
    for entry in settings.players:
        player = state.player(entry.email)
        if player is None:
            lines.append(f"{entry.name} <{entry.email}> is in the config but not in the game")
        elif not player.active:
            lines.append(f"{player.name} <{entry.email}> is in the config but left the game")
        elif player.name != entry.name:
            lines.append(
                f"<{entry.email}> is {entry.name!r} in the config, {player.name!r} in the game"
            )
    for player in state.active_players:
        if player.email not in listed:
            lines.append(f"{player.name} <{player.email}> plays but is not in the config")
    return lines
