"""The desk's letters: the reply, the notices and the short notes, rendered (205, 112, 201, 212).

Each function builds mail, never sends it: it returns `Letter` values that the unit of work
queues (`writing.post`), in the order the desk made them. A replay that only wants the final
state counts the letters without rendering them (`Letters.render` off): the decisions, and so
the state, are the same either way. Here too are the reply's lines (`item`), cut to a readable
length, and the subject and thread of a reply.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from referee.config import Settings
from referee.core import codec, mechanics, outcomes, rulings
from referee.core.events import EVERYONE, Effect, Notice, NoticeKind, Outcome
from referee.core.model import GameState, Player
from referee.core.threads import Thread
from referee.desk import confirm
from referee.desk.hints import UNREAD, Hint
from referee.mail import intake, outgoing
from referee.mail.commands import REPLY_PREFIX, ParsedLine, is_reply_subject
from referee.mail.parse import InboundMail, parse_message
from referee.mail.render import Rendered, Renderer
from referee.store.store import Pending, SentMail

BOUNCE_NOTICE = "bounced"  # the outbox kind (and template) of the notice of a bounce
# The notices that carry the whole ruleset (205): never cut, attached when too long for a body.
WHOLE_RULESET = frozenset({NoticeKind.RULESET, NoticeKind.GAME_STARTED, NoticeKind.WELCOME})
QUOTED_LINE = 200


@dataclass(frozen=True)
class Letter:
    """One mail to queue: its recipient and outbox kind, and, when rendered, its Message-ID
    and bytes (None: counted only, by a replay that wants the state alone)."""

    recipient: str
    kind: str
    message_id: str = ""
    raw: bytes | None = None


class Letters:
    """The renderer of one game's mail, and the count of the letters made (rendered or not)."""

    def __init__(self, settings: Settings, render: bool = True) -> None:
        self.settings = settings
        self.render = render
        self.queued = 0  # letters made since this object was made, rendered or not
        game = settings.game
        self.renderer = Renderer(game.language, game.timezone, game.name, game.address)

    def _made(self, recipient: str, kind: str) -> Letter | None:
        """Count one letter; the counted `Letter` when it is not to be rendered, else None."""
        self.queued += 1
        return None if self.render else Letter(recipient, kind)

    def reply(
        self,
        mail: InboundMail,
        at: datetime,
        state: GameState,
        items: list[dict[str, Any]],
        late: dict[str, Any] | None,
        confirm: bool = False,
        attached: tuple[outgoing.Attachment, ...] = (),
        unread: Sequence[Hint] = (),
    ) -> Letter:
        """The one reply; its Message-ID names the answer (`answer-<token>`, an APPEAL in
        reply is about its decisions) or, with `confirm`, that it asks for a bare yes;
        `late`: when it took effect later than delivered, and why (`writing.late`);
        `attached`: the files it carries (ARCHIVE's); `unread`: the lines of the mail the
        referee did not act on, quoted back at the end (the first UNREAD of them)."""
        counted = self._made(mail.sender, "reply")
        if counted is not None:
            return counted
        token = answer_token(mail)
        player = state.player(mail.sender)
        name = player.name if player else mail.sender_name
        rendered = self.renderer.render(
            "reply",
            {
                "items": items,
                "unread": [
                    {"line": cut_line(h.line), "hint": h.meant, "skipped": h.skipped}
                    for h in unread[:UNREAD]
                ],
                "more": max(len(unread) - UNREAD, 0),
                "subject": reply_subject(mail.subject),
                "name": name,
                "cites": mechanics.citations(state),
                "late": late,
            },
        )
        game = self.settings.game
        envelope = outgoing.Envelope(
            game=game.name,
            address=game.address,
            recipient=mail.sender,
            recipient_name=name,
            message_id=outgoing.thread_message_id(
                game.key,
                game.address,
                Thread.confirm(token) if confirm else Thread.answer(token),
                "reply",
                mail.dedupe_key,
            ),
            at=at,
            auto="auto-replied",
            in_reply_to=mail.thread_id,
            references=(*mail.references[-10:], mail.thread_id),
        )
        raw = outgoing.build(rendered, envelope, attached)
        return Letter(mail.sender, "reply", envelope.message_id, raw)

    def confirmation(self, mail: InboundMail, at: datetime, request: Pending) -> Letter:
        """The mail that asks an address to confirm a request to join or to move (201)."""
        counted = self._made(request.address, "confirm")
        if counted is not None:
            return counted
        game, address = self.settings.game.name, self.settings.game.address
        rendered = self.renderer.render(
            "confirm",
            {"kind": request.kind, "name": request.name, "new": request.address},
        )
        thread = Thread.verify(request.token)
        envelope = outgoing.Envelope(
            game=game,
            address=address,
            recipient=request.address,
            recipient_name=request.name,
            message_id=outgoing.thread_message_id(game, address, thread, mail.dedupe_key),
            at=at,
            auto="auto-replied",
            in_reply_to=mail.thread_id if request.kind == "join" else "",
            references=(mail.thread_id,) if request.kind == "join" else (),
        )
        raw = outgoing.build(rendered, envelope)
        return Letter(request.address, "confirm", envelope.message_id, raw)

    def bounce_notice(
        self,
        at: datetime,
        state: GameState,
        returned: SentMail,
        status: str,
        message_id: str,
    ) -> Letter:
        """The notice of a bounced mail, to the operator or the King (205), with none of the
        bounce's words: the subject and date of the referee's own mail that came back."""
        told = self.settings.operator or state.king or self.settings.king.email
        counted = self._made(told, BOUNCE_NOTICE)
        if counted is not None:
            return counted
        player = state.player(returned.recipient)
        assert player is not None
        king = state.player(told)
        original = parse_message(returned.raw, headers_only=True)  # the referee's own mail
        rendered = self.renderer.render(
            BOUNCE_NOTICE,
            {
                "player": player.name,
                "email": player.email,
                "subject": original.subject,
                "sent_at": original.date or at,
                "status": status,
                "operator": king is None or king.email != state.king,
            },
        )
        envelope = outgoing.Envelope(
            game=self.settings.game.name,
            address=self.settings.game.address,
            recipient=told,
            recipient_name=king.name if king is not None else "",
            message_id=message_id,
            at=at,
            auto="auto-generated",
        )
        return Letter(told, BOUNCE_NOTICE, message_id, outgoing.build(rendered, envelope))

    def note(self, mail: InboundMail, at: datetime, kind: str) -> Letter:
        """The short note to someone whose mail is not obeyed: a stranger, or mail in a
        player's name that was not shown to come from him. It names nothing of the mail it
        answers (no subject, no text), so it cannot carry a forger's words to anyone."""
        counted = self._made(mail.sender, kind)
        if counted is not None:
            return counted
        game = self.settings.game
        limit = game.max_mail_bytes
        rendered = self.renderer.render(kind, {"subject": "", "limit": f"{limit // 1_000_000} MB"})
        envelope = outgoing.Envelope(
            game=game.name,
            address=game.address,
            recipient=mail.sender,
            recipient_name="",
            message_id=outgoing.message_id(game.key, game.address, kind, mail.dedupe_key),
            at=at,
            auto="auto-replied",
            in_reply_to="",  # not even its Message-ID goes back: a forger chooses that too
            references=(),
        )
        return Letter(mail.sender, kind, envelope.message_id, outgoing.build(rendered, envelope))

    def unreadable(
        self,
        mail: InboundMail,
        at: datetime,
        why: intake.Unreadable,
        player: Player | None,
        message_id: str,
    ) -> Letter:
        """The answer to a mail that could not be read: in its thread to a believed `player`,
        else the short note that strangers get; never a word of the mail (see `receive`)."""
        kind = "unreadable" if player is not None else "unreadable_note"
        counted = self._made(mail.sender, kind)
        if counted is not None:
            return counted
        name = player.name if player is not None else ""
        rendered = self.renderer.render(
            kind, {"why": why.reason.value, "limit": intake.MAX_PARTS, "name": name}
        )
        thread = mail.thread_id if player is not None else ""  # a stranger's never goes back
        game = self.settings.game
        envelope = outgoing.Envelope(
            game=game.name,
            address=game.address,
            recipient=mail.sender,
            recipient_name=name,
            message_id=message_id,
            at=at,
            auto="auto-replied",
            in_reply_to=thread,
            references=(thread,) if thread else (),
        )
        return Letter(mail.sender, kind, message_id, outgoing.build(rendered, envelope))

    def notices(
        self, effects: Sequence[Effect], at: datetime, state: GameState, inbound: str | None
    ) -> list[Letter]:
        """Render each notice once and make one letter per recipient (205). A notice that
        carries the whole ruleset is never cut: past `[limits] ruleset_chars` its body keeps
        what changed and the scores, and the whole mail goes with it as attached files."""
        letters: list[Letter] = []
        game, address = self.settings.game.name, self.settings.game.address
        key = self.settings.game.key  # the Message-IDs' (the display name may change)
        for index, effect in enumerate(effects):
            if not isinstance(effect, Notice):
                continue
            recipients = recipients_of(state, effect.to)
            if not recipients:
                continue
            self.queued += len(recipients)
            if not self.render:
                letters += [Letter(p.email, effect.kind.value) for p in recipients]
                continue
            kind = f"notices/{effect.kind.value}"
            rendered = self.renderer.render(kind, effect.data)
            files: tuple[outgoing.Attachment, ...] = ()
            if (
                effect.kind in WHOLE_RULESET
                and len(rendered.text) > self.settings.limits.ruleset_chars
            ):
                files = self.ruleset_files(rendered)
                names = tuple(f.filename for f in files)
                rendered = self.renderer.render(kind, {**effect.data, "ruleset_files": names})
            body = outgoing.Body(rendered, f"{key}|{state.events}|{inbound}|{index}")
            thread = effect.thread
            root = outgoing.thread_root(key, address, thread) if thread is not None else ""
            table = self._table_headers(effect)
            for player in recipients:
                parts = (state.events, inbound or "", index, player.email)
                envelope = outgoing.Envelope(
                    game=game,
                    address=address,
                    recipient=player.email,
                    recipient_name=player.name,
                    message_id=outgoing.thread_message_id(key, address, thread, *parts)
                    if thread is not None
                    else outgoing.message_id(key, address, *parts),
                    at=at,
                    auto="auto-generated",
                    in_reply_to=root,
                    references=(root,) if root else (),
                    **table,
                )
                raw = outgoing.build(body, envelope, files)
                letters.append(Letter(player.email, effect.kind.value, envelope.message_id, raw))
        return letters

    def rules_attached(
        self, rules: outcomes.Rules
    ) -> tuple[Outcome, tuple[outgoing.Attachment, ...]]:
        """RULES's answer (205 on demand): in the reply's body, or, when the ruleset is longer
        than `[limits] ruleset_chars`, attached whole as the ruleset mail attaches it, the
        answer naming the files."""
        document = self.renderer.render("ruleset_file", rules.fields())
        if len(document.text) <= self.settings.limits.ruleset_chars:
            return Outcome(rules), ()
        files = self.ruleset_files(document)
        return Outcome(replace(rules, files=tuple(f.filename for f in files))), files

    def ruleset_files(self, whole: Rendered) -> tuple[outgoing.Attachment, ...]:
        """The mail that carries the whole ruleset, as it would have read in full (205): its
        subject and text as a UTF-8 text file (as the archive's `ruleset.txt` gives them under
        its header), and its HTML page, to open in a browser."""
        name = self.renderer.word("ruleset", "files")
        text = f"{whole.subject}\n\n{whole.text}"
        return (
            outgoing.Attachment(f"{name}.txt", 'text/plain; charset="utf-8"', text.encode()),
            outgoing.Attachment(f"{name}.html", 'text/html; charset="utf-8"', whole.html.encode()),
        )

    def draft_text(self, state: GameState, appeal_id: str) -> str:
        """The referee's draft ruling, as the judge's yes publishes it (in the game's words)."""
        appeal = state.appeal(appeal_id)
        if appeal is None or appeal.about is None:
            return ""
        rendered = self.renderer.render(
            "draft",
            {
                "appeal": {"id": appeal.id},
                "decision": rulings.decided_data(state, appeal),
                "cites": mechanics.citations(state),
            },
        )
        return rendered.text.strip()

    def _table_headers(self, notice: Notice) -> dict[str, str]:
        """Debate reads as the game's mailing list: the author's name on the game's address
        (which passes the players' providers' DMARC) and the list headers (112)."""
        if notice.kind not in (NoticeKind.DEBATE, NoticeKind.DEBATE_DIGEST):
            return {}
        game = self.settings.game
        data = notice.data
        author = str(data.get("author", ""))
        number = data.get("proposal")
        site = game.site_url
        stop = "DIBATTITO NIENTE" if game.language == "it" else "DEBATE NONE"
        return {
            "from_name": f"{author} via {game.name}" if author else "",
            "list_id": outgoing.list_id(game.name, game.key, game.address),
            "list_archive": f"{site}/proposals/{number}.html" if site and number else "",
            "list_unsubscribe": stop,
        }


def bounce_message_id(settings: Settings, at: datetime, player: str) -> str:
    """The Message-ID of the day's notice of a bounce of mail to `player`: once a day each."""
    game = settings.game
    day = at.astimezone(UTC).date().isoformat()
    return outgoing.message_id(game.key, game.address, BOUNCE_NOTICE, player, day)


def reply_subject(subject: str) -> str:
    """`Re: <subject>`, once: the prefixes mail programs pile up (`Re: RE: Re:`, `R:`, `AW:`)
    are taken off first, so a long exchange keeps one readable title."""
    title = subject.strip()
    while is_reply_subject(title):
        title = REPLY_PREFIX.sub("", title, count=1).strip()
    return f"Re: {title}" if title else ""


def recipients_of(state: GameState, to: tuple[str, ...]) -> list[Player]:
    """Who a notice goes to: the active players, or the addresses it names (an applicant, or
    the address a player moved from, by the name of their request)."""
    if to == EVERYONE:
        return list(state.active_players)
    found: list[Player] = []
    for email in to:
        player = state.player(email)
        if player is None:  # an applicant, or the address a player moved from
            names = [r.name for r in state.requests if r.email == email]
            player = Player(names[-1] if names else "", email, "")
        found.append(player)
    return found


def item(line: str, outcome: Outcome, meant: str = "") -> dict[str, Any]:
    """One line of the reply; `meant` is how a bare answer to a prompt was read (AWARD 7).

    The player's line is quoted back whole up to QUOTED_LINE characters, then cut with "...":
    a reply names the line it answers, it does not mirror a 5,000-digit number."""
    return {
        "line": cut_line(line),
        "meant": meant,
        "ok": outcome.ok,
        "code": outcome.code,
        "data": dict(outcome.data),
    }


def answer_token(mail: InboundMail) -> str:
    """The token of the referee's answer to `mail`, in its Message-ID's thread (212)."""
    return confirm.token(mail.dedupe_key, "answer")


def cut_line(line: str) -> str:
    """A player's line as a reply quotes it: whole up to QUOTED_LINE characters."""
    return line if len(line) <= QUOTED_LINE else at_word(line, QUOTED_LINE) + "..."


def at_word(text: str, width: int) -> str:
    """`text` cut to at most `width` characters at a space, never inside a word (a single word
    longer than that, a 5,000-digit number, is cut where it must be)."""
    cut = text[:width]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip()


def fact(
    line: ParsedLine, outcome: Outcome, logged: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One decision of an answer, as kept for an APPEAL in reply: the line, its outcome and
    the command read from it (as the event log writes it; `logged`: that command's data as
    the log was just given it, not made again)."""
    command = line.command
    if command is None:
        shown = ""
    else:
        data = logged if logged is not None else codec.event_to_data(command)
        shown = json.dumps(data, sort_keys=True)
    return {"line": cut_line(line.line), "code": outcome.code, "ok": outcome.ok, "command": shown}
