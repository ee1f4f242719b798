"""The referee service: one game's mail in, the engine, the store and the outbox (rules 101-215).

This is the one module that ties the pure core to the edges. `receive` takes a raw message,
fires the deadlines due before it, obeys its commands and writes the reply and the notices to
the outbox, all in one transaction. `advance` fires the deadlines due by a time. `replay` and
the live service both go through here, so they reach the same state from the same mail.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
    outcomes,
    procedure,
    roster,
)
from referee.core.events import (
    AskToJoin,
    Command,
    Effect,
    Enrol,
    MoveAddress,
    OpenAppeal,
    Outcome,
    Quit,
    Reason,
    Suggest,
    Tick,
)
from referee.core.model import Decided, GameState, Player
from referee.core.rebuild import rebuild_from
from referee.core.threads import ThreadKind
from referee.desk import bounces, checks, confirm, deciding, letters, reading, writing
from referee.desk.debate import nearest_thread
from referee.desk.hints import (
    QUOTED,
    Hint,
)
from referee.desk.letters import BOUNCE_NOTICE as BOUNCE_NOTICE  # gallery's
from referee.desk.letters import Letters, item
from referee.desk.logged import Redacted, Shown, redact
from referee.desk.prompts import (
    awaited,
    expected,
    spell,
    thread_of,
)
from referee.desk.run import Run
from referee.desk.screen import CHAIN, Answer, Intake, Verdict, screen
from referee.mail import intake, lookalike, outgoing
from referee.mail.auth import Authentication, DnsLookup, authenticate
from referee.mail.parse import InboundMail, parse_message
from referee.mail.quotes import cut_at_top
from referee.store.store import Pending, SenderDay, SentMail, Store, StoreError, UnitOfWork
from referee.store.tables import InboundStatus

SIGN_OFF_WORDS = 3  # words beside commands that read as a sign-off, not as debate (112)
log = logging.getLogger("referee")
STOPPED = "mail %s claiming to be from %s stopped by %s"  # the log line of a mail screened out


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


@dataclass(frozen=True)
class Receipt:
    """What became of one inbound message, for the log and the caller."""

    message_id: str
    status: InboundStatus
    commands: int = 0
    refused: int = 0
    sent: int = 0


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
        its sender has been told, when its headers name one to tell (`_unreadable`).
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
            self._unreadable(raw, at, problem)
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
        verdict = screen(intake, work)
        if verdict is not None:
            if verdict.check == "player":  # not playing: a request to join, or its confirmation
                joining = self._stranger(work, intake)
                if joining is not None:
                    return joining
            if verdict.check == "automatic" and mail.bounce:
                return self._bounced(work, intake), state
            return self._refuse(work, intake, verdict), state
        today = intake.today(work)  # as `daily_allowance` found it
        said = reading.read(mail, state, self.settings, self.letters.draft_text)
        for check in checks.MAIL_CHECKS:
            refusal = check.check(said, today, self.settings.limits)
            if refusal is not None:
                return self._refused(work, mail, at, state, check.name, refusal), state
        votes = [h.meant for h in said.hinted if h.confirm]  # kept for a bare yes
        note = "" if said.lines or votes else Reason.NO_COMMAND.value
        work.record_inbound(mail, at, InboundStatus.PROCESSED, note, len(said.lines))
        run = Run(
            mail,
            at,
            state,
            self.settings,
            said,
            ask=lambda now, request: self._ask_confirmation(work, mail, at, now, request),
            about=lambda appeal: self._about(work, mail, appeal),
            render=self.letters.render,
            rules_attached=self.letters.rules_attached,
            votes=votes,
        )
        deciding.decide(run)
        for payload in run.events:
            work.append_event(payload, at, mail.message_id)
        return self._answered(work, run, today)

    def _refused(
        self,
        work: UnitOfWork,
        mail: InboundMail,
        at: datetime,
        state: GameState,
        check: str,
        refusal: checks.MailRefusal,
    ) -> Receipt:
        """Record and answer a mail a check of `checks.MAIL_CHECKS` refused whole."""
        work.record_inbound(mail, at, InboundStatus.REFUSED, refusal.note, refusal.counted)
        writing.keep_answer(work, mail, at, list(refusal.facts))
        sent = 0
        if refusal.items is not None:  # None: a loop, no longer answered
            sent = self._reply(work, mail, at, state, list(refusal.items))
        if refusal.warning:
            log.warning("mail %s: %s", Shown(mail.message_id), refusal.warning)
        log.info("mail %s: refused by %s", Shown(mail.message_id), check)
        return Receipt(mail.message_id, InboundStatus.REFUSED, 0, refusal.refused, sent)

    def _answered(self, work: UnitOfWork, run: Run, today: SenderDay) -> tuple[Receipt, GameState]:
        """The reply to a mail decided line by line, and the notices its decisions send."""
        mail, at, said, state = run.mail, run.at, run.said, run.state
        hinted = list(said.hinted)
        items = run.items + _hint_items(hinted) + list(said.unseen) + list(said.ignored)
        unread = [h for h in hinted if not h.confirm]  # quoted back: "I did not act on these"
        if run.votes or said.confirmed:  # kept for a bare yes, or used by one
            kept = Suggest(mail.sender, "\n".join(run.votes))
            state = engine.decide(state, kept, at).state
            work.append_event(codec.event_to_data(kept), at, mail.message_id)
        if not said.lines and not run.votes:
            items.append(item("", Outcome(self._no_command(mail, state, today, at))))
        writing.keep_answer(work, mail, at, run.facts)
        attached = run.attached
        if run.archive is not None and (self.letters.render or self.site is not None):
            made, files = self._archive(work, state)
            attached += files
            asked = items[run.archive]
            items[run.archive] = item(asked["line"], made, asked["meant"])
        sent = self._reply(
            work, mail, at, state, items, confirm=bool(run.votes), attached=attached, unread=unread
        )
        sent += self._emit(work, run.effects, at, state, inbound=mail.dedupe_key)
        refused = sum(1 for i in items if not i["ok"])
        receipt = Receipt(mail.message_id, InboundStatus.PROCESSED, len(said.lines), refused, sent)
        return receipt, state

    def _no_command(
        self, mail: InboundMail, state: GameState, today: SenderDay, at: datetime
    ) -> outcomes.NoCommand:
        """The answer to a mail with no command: the one it seems to mean, or the ones the
        game awaits of its sender, and when the day's answers to such mail run out."""
        language, limits = self.settings.game.language, self.settings.limits
        thread = thread_of(mail.references, mail.in_reply_to, self.settings.game.key)
        guess = expected(state, mail.sender, thread, mail.own_words)
        waited = awaited(state, mail.sender, thread, language) if guess is None else []
        hint = spell(guess, language) if guess is not None else next(iter(waited), "")
        other = waited[1] if len(waited) > 1 else ""
        last = today.empty + 1 >= limits.empty_replies_per_day
        upto = clock.tomorrow(at) if last else None
        cut, cut_at = cut_at_top(mail.body)
        return outcomes.NoCommand(hint=hint, other=other, next=upto, cut=cut, cut_line=cut_at)

    def _archive(
        self, work: UnitOfWork, state: GameState
    ) -> tuple[Outcome, tuple[outgoing.Attachment, ...]]:
        """ARCHIVE's attachments (213): the mail received so far, as a gzipped mbox (the
        players' whole, every other a stand-in: `record.archive_mbox`), and the game's config
        without secrets. Past `[limits] archive_bytes`, the two are written on the game's site
        under the SHA-256 of the mbox (`record.publish_archive`) and the reply links them;
        without a site, the refusal sends the player to the operator's `export-mail`. The reply
        names the record's last link and its head, the one `verify` must reach (the request's
        own link comes after it)."""
        shared = record.shared_mail(work, state)
        made = record.archive_mbox(work.mail_links(), shared, self.settings.game.language)
        size = record.shown_size(len(made.packed))
        config = record.public_config(self.settings, state.started_at)
        limit = self.settings.limits.archive_bytes
        if len(made.packed) > limit:
            url = self.settings.game.site_url.rstrip("/")
            if self.site is None or not url:
                most = record.shown_size(limit)
                return Outcome(outcomes.ArchiveTooLarge(size=size, limit=most)), ()
            folder = record.publish_archive(self.site, made, config)
            linked = outcomes.ArchiveLinked(
                messages=made.shared,
                withheld=made.withheld,
                size=size,
                mailbox=f"{url}/{folder}/{record.MAILBOX}",
                config=f"{url}/{folder}/{record.CONFIG}",
                link=self.link,
                head=self.head,
            )
            return Outcome(linked), ()
        files = (
            outgoing.Attachment(record.MAILBOX, "application/gzip", made.packed),
            outgoing.Attachment(record.CONFIG, 'text/plain; charset="utf-8"', config.encode()),
        )
        sent = outcomes.ArchiveSent(
            messages=made.shared,
            size=size,
            withheld=made.withheld,
            link=self.link,
            head=self.head,
        )
        return Outcome(sent), files

    # ----- requests confirmed by reply: joining, moving (201) --------------------------------

    def _stranger(self, work: UnitOfWork, intake: Intake) -> tuple[Receipt, GameState] | None:
        """A stranger's confirmation of a request, or a request to join; None: neither.

        Both pass the same checks as a player's mail (headers, authentication, size) first:
        a mail not shown to come from its address gets the short note, never a confirmation.
        """
        mail, at, state = intake.mail, intake.at, intake.state
        game = self.settings.game.name
        key = confirm.confirmation_thread(mail.references, mail.in_reply_to, game)
        pending = work.pending(at, token=key) if key else None
        confirming = (
            pending is not None
            and pending.address == mail.sender
            and confirm.bare_yes(mail.own_words)
        )
        parsed = reading.mail_commands(mail)
        join = next((p for p in parsed if p.spec.name == "join"), None)
        if not confirming and join is None:
            return None
        stopped = _believed(intake, work)
        if stopped is not None:
            return self._refuse(work, intake, stopped), state
        if confirming and pending is not None:
            return self._confirmed(work, mail, at, state, pending)
        assert join is not None
        work.record_inbound(mail, at, InboundStatus.STRANGER, "join", 1)
        if isinstance(join.command, AskToJoin):
            refusal = self._ask_confirmation(work, mail, at, state, join.command)
            if refusal.ok:  # the confirmation mail is the answer
                return Receipt(mail.message_id, InboundStatus.STRANGER, 1, 0, 1), state
        else:
            syntax = join.spec.syntax(self.settings.game.language)
            refusal = Outcome(outcomes.Syntax(syntax=syntax, problem=join.problem))
        sent = 0
        day = at.date().isoformat()
        if work.first_note_today(mail.sender, day, self.settings.limits.stranger_notes_per_day):
            sent = self._reply(work, mail, at, state, [item(join.line, refusal)])
        return Receipt(mail.message_id, InboundStatus.STRANGER, 1, 1, sent), state

    def _ask_confirmation(
        self,
        work: UnitOfWork,
        mail: InboundMail,
        at: datetime,
        state: GameState,
        command: AskToJoin | MoveAddress,
    ) -> Outcome:
        """Check a request to join or move now, and mail its address for a confirmation."""
        refused = procedure.bar(state, command)
        if refused is not None:
            return Outcome(refused)
        if isinstance(command, MoveAddress):
            address, kind = command.new, "address"
            if any(roster.same_mailbox(address, ours) for ours in self.settings.game.addresses):
                return Outcome(outcomes.AddressOfGame(email=address))
            if state.player(address) is not None or roster.address_taken(
                state, address, command.sender
            ):
                return Outcome(outcomes.AddressTaken(email=address))
        else:
            address, kind = command.sender, "join"
            if any(r.email == address and r.status == "pending" for r in state.requests):
                return Outcome(outcomes.RequestPending(email=address))
            limit = self.settings.limits.joins_per_day
            if work.joins_today(at.date().isoformat()) >= limit:
                return Outcome(outcomes.JoinsFull(limit=limit))
        if work.pending(at, address=address) is not None:
            return Outcome(outcomes.RequestPending(email=address))
        me = state.player(mail.sender)
        name = command.name if isinstance(command, AskToJoin) else (me.name if me else "")
        request = Pending(confirm.token(mail.dedupe_key, kind), kind, address, name, command.sender)
        work.add_pending(request, at)
        writing.post(work, [self.letters.confirmation(mail, at, request)], at)
        if isinstance(command, MoveAddress):
            return Outcome(outcomes.AddressConfirmSent(new=address))
        return Outcome(outcomes.JoinConfirmSent(name=name))

    def _confirmed(
        self,
        work: UnitOfWork,
        mail: InboundMail,
        at: datetime,
        state: GameState,
        pending: Pending,
    ) -> tuple[Receipt, GameState]:
        """The address said yes: the request becomes an event of the game."""
        work.record_inbound(mail, at, InboundStatus.PROCESSED, "confirmation", 1)
        command: Command = (
            lookalike.asking(state, mail.sender, pending.name)
            if pending.kind == "join"
            else MoveAddress(pending.old, pending.address)
        )
        spell = "JOIN" if pending.kind == "join" else "ADDRESS"
        decision = engine.decide(state, command, at)
        outcome, notices = deciding.split(decision)
        if outcome.ok:
            work.append_event(codec.event_to_data(command), at, mail.message_id)
            work.confirmed(pending.token)
            state = decision.state
        log.info("mail %s: %s confirmed -> %s", Shown(mail.message_id), spell, outcome.code)
        line = f"{spell} {pending.name if pending.kind == 'join' else pending.address}"
        sent = self._reply(work, mail, at, state, [item(line, outcome)])
        if outcome.ok:
            sent += self._emit(work, notices, at, state, inbound=mail.dedupe_key)
        refused = 0 if outcome.ok else 1
        return Receipt(mail.message_id, InboundStatus.PROCESSED, 1, refused, sent), state

    def _refuse(self, work: UnitOfWork, intake: Intake, verdict: Verdict) -> Receipt:
        """Record a mail the screening stopped, and answer it as the check says."""
        mail, at = intake.mail, intake.at
        work.record_inbound(mail, at, verdict.status, verdict.note)
        if not verdict.believed or verdict.status is not InboundStatus.IGNORED:
            log.warning(
                STOPPED,
                Shown(mail.message_id),
                Redacted(mail.sender) if mail.sender else "nobody",
                Shown(verdict.stopped),
            )
        sent = 0
        day = at.date().isoformat()
        notes = self.settings.limits.stranger_notes_per_day
        if verdict.check == "header_length":  # the reply never carries the over-long subject
            mail = replace(mail, subject="")
        if verdict.answer is Answer.REPLY and verdict.outcome is not None:
            sent = self._reply(work, mail, at, intake.state, [item("", verdict.outcome)])
        elif verdict.answer is Answer.STRANGER:
            if work.first_note_today(mail.sender, day, notes):
                sent = writing.post(work, [self.letters.note(mail, at, "stranger")], at)
        elif verdict.answer is Answer.NOTE and work.first_note_today(mail.sender, day, notes):
            sent = writing.post(work, [self.letters.note(mail, at, "unbelieved")], at)
        refused = 0 if verdict.status in (InboundStatus.IGNORED, InboundStatus.STRANGER) else 1
        return Receipt(mail.message_id, verdict.status, 0, refused, sent)

    # ----- bounces: the King (or the operator) is told (205) ----------------------------------

    def _bounced(self, work: UnitOfWork, intake: Intake) -> Receipt:
        """A bounce is never obeyed nor answered. When it returns a mail the referee sent to a
        player, the King, or `[game] operator`, is told, once per player and day, with none
        of the bounce's words; a bounce of such a notice tells no one (no loops)."""
        mail, at, state = intake.mail, intake.at, intake.state
        report = bounces.read_bounce(intake.raw)
        returned = next(iter(work.sent_mail(report.message_ids)), None)
        note, sent = "bounce", 0
        if returned is None:
            note = "bounce: of no mail the referee sent"
        elif not report.failed:
            note = f"bounce: a report, not a failure, of {returned.kind}"
        elif returned.kind == BOUNCE_NOTICE:
            note = "bounce: of a notice of a bounce; no one is told (no loops)"
        elif state.player(returned.recipient) is None:
            note = f"bounce: of {returned.kind} to someone not playing"
        else:
            note = f"bounce: of {returned.kind} to {redact(returned.recipient)}"
            sent = self._tell_of_bounce(work, at, state, returned, report.status)
        work.record_inbound(mail, at, InboundStatus.IGNORED, note)
        log.warning("mail %s: %s%s", Shown(mail.message_id), note, "; told" if sent else "")
        return Receipt(mail.message_id, InboundStatus.IGNORED, 0, 0, sent)

    def _tell_of_bounce(
        self, work: UnitOfWork, at: datetime, state: GameState, returned: SentMail, status: str
    ) -> int:
        """The notice of a bounced mail, to the operator or the King: once per player a day
        (its Message-ID names the player and the day, and the outbox has each id once)."""
        message_id = letters.bounce_message_id(self.settings, at, returned.recipient)
        if work.sent_mail([message_id]):
            return 0  # told today already
        notice = self.letters.bounce_notice(at, state, returned, status, message_id)
        return writing.post(work, [notice], at)

    # ----- appeals about the referee's own decisions (212) -----------------------------------

    def _about(self, work: UnitOfWork, mail: InboundMail, appeal: OpenAppeal) -> OpenAppeal:
        """An APPEAL in reply to one of the referee's answers is about its decision: the
        first refused one, else the first (see docs/interpretation.md)."""
        game = self.settings.game
        thread = nearest_thread(mail.references, mail.in_reply_to, game.key, game.address)
        if thread is None or thread.kind not in (ThreadKind.ANSWER, ThreadKind.CONFIRM):
            return appeal
        kept = work.answer(thread.key) if thread.key else None
        if kept is None:
            return appeal
        facts = json.loads(kept[1])
        decisions = facts["decisions"]
        chosen = next((d for d in decisions if not d["ok"] and d["command"]), decisions[0])
        about = Decided(
            sender=facts["sender"],
            at=datetime.fromisoformat(facts["at"]),
            line=chosen["line"],
            code=chosen["code"],
            ok=chosen["ok"],
            command=chosen["command"],
            subject=facts["subject"],
        )
        return replace(appeal, about=about)

    def _unreadable(self, raw: bytes, at: datetime, problem: intake.Unreadable) -> None:
        """Tell the sender of a mail that cannot be read (nested too deep, a body the parser
        gives up on) that it was not read, and why, before it is set aside in quarantine.

        Its headers alone say who sent it. A player the receiving server vouches for (or any
        player while `[auth] required` is off) is answered in the mail's thread, at most once
        a day: send it again as plain text. Anyone else, or a player whose mail could only be
        shown to be his by a DKIM signature checked here (its verdict would be in no link of
        the chain, so `verify` could not decide it the same way once the key has left the
        DNS), gets at most the day's short note that strangers get, within the day's cap on
        them. Machines (bounces, auto-replies, the game's own address) and mail with no single
        sender are told nothing. No word of the mail is quoted, nothing in it is obeyed, and it
        makes no link; the deadlines due before it fire first, as for any mail, so `replay`
        decides the same from the same bytes."""
        try:
            mail = parse_message(raw, headers_only=True)
        except Exception:  # not even its headers: no one to tell
            return
        game = self.settings.game
        if not mail.sender or mail.bounce or mail.automatic or mail.sender in game.addresses:
            return
        self.advance(at)
        player = self.state.player(mail.sender)
        believed = player is not None and self._vouched(raw, mail.sender)
        kind = "unreadable" if believed else "unreadable_note"
        day = at.date().isoformat()
        mid = outgoing.message_id(game.key, game.address, kind, mail.sender, day)
        notes = self.settings.limits.stranger_notes_per_day
        with self.store.unit(self.game_id) as work:
            if believed:
                if work.sent_mail([mid]):
                    return  # told today already
            elif not work.first_note_today(mail.sender, day, notes):
                return
            work.name_link(self.link, self.head)
            log.info(
                "mail %s from %s: unreadable (%s); %s",
                Shown(mail.message_id),
                Redacted(mail.sender),
                problem.reason.value,
                "answered" if believed else "the short note sent",
            )
            told = self.letters.unreadable(mail, at, problem, player if believed else None, mid)
            writing.post(work, [told], at)

    def _reply(
        self,
        work: UnitOfWork,
        mail: InboundMail,
        at: datetime,
        state: GameState,
        items: list[dict[str, Any]],
        confirm: bool = False,
        attached: tuple[outgoing.Attachment, ...] = (),
        unread: Sequence[Hint] = (),
    ) -> int:
        """Queue the one reply to `mail` (`Letters.reply`)."""
        late = writing.late(work, at, state)
        made = self.letters.reply(mail, at, state, items, late, confirm, attached, unread)
        return writing.post(work, [made], at)

    def _emit(
        self,
        work: UnitOfWork,
        effects: Sequence[Effect],
        at: datetime,
        state: GameState,
        inbound: str | None,
    ) -> int:
        """Queue the notices among `effects`, one mail per recipient (`Letters.notices`)."""
        return writing.post(work, self.letters.notices(effects, at, state, inbound), at)

    def _vouched(self, raw: bytes, sender: str) -> bool:
        """Whether a mail that cannot be read is believed to be its sender's: `[auth]
        required` off, or the receiving server's Authentication-Results (read from the
        headers); never a DKIM signature checked here (see `_unreadable`)."""
        auth = replace(self.settings.auth, verify_dkim=False)
        try:
            return authenticate(raw, sender, auth, self.dns).ok
        except Exception:  # the headers defeat the check: not shown to be his
            return False


_NOT_FOR_STRANGERS = ("automatic", "single_sender", "player", "daily_allowance")


def _believed(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """The screening a stranger's request or confirmation passes: every check of a player's
    mail but the ones about being a player (201: only a believed address may ask or confirm)."""
    for name, check in CHAIN:
        if name in _NOT_FOR_STRANGERS:
            continue
        verdict = check(intake, work)
        if verdict is not None:
            return verdict
    return None


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


def _hint_items(hinted: list[Hint]) -> list[dict[str, Any]]:
    """The lines no command took that read as a whole command (a vote in plain words, a
    misspelt keyword put right), each with the command it seems to mean, done on a bare yes."""
    meant = [h for h in hinted if h.confirm][:QUOTED]
    return [item(h.line, Outcome(outcomes.ConfirmNeeded(meant=h.meant))) for h in meant]
