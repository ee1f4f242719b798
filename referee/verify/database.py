"""`verify` against the game's database: its hash chain, event log, inbound rows, stored state
and outbox, each held against the replay of the mail given (213).

The checks are data: `CHECKS` names each, in the order they run; the first to find a
divergence ends the check. A new check of the database is a function over `Database` added
to that table. The database is only read; a SQLite file that is not there is never made.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from referee.config import Settings
from referee.core import chain
from referee.core.model import GameState
from referee.core.rebuild import rebuild_from
from referee.mail import intake
from referee.mail.auth import Authentication
from referee.replay import Archived
from referee.store.store import Store
from referee.store.tables import ChainRow, OutboxRow, OutboxStatus
from referee.verify.mail import addressees, first_difference, json_object, subject, utc
from referee.verify.sent import answers_withheld, withheld_answers_note
from referee.verify.verdict import UNREAD_KINDS, Divergence, Replayed, Verdict


def absent_database(settings: Settings) -> Path | None:
    """The SQLite file the config names when it is not there (connecting would make it,
    empty); None for any other database."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = Path(str(url.database))
    return None if path.exists() else path


def _stored_chain(settings: Settings) -> list[ChainRow]:
    """The hash chain the config's database holds for the game (none: no such game)."""
    store = Store(settings.database_url)
    try:
        game_id = store.game_id(settings.game.key)
        return store.chain(game_id) if game_id is not None else []
    finally:
        store.close()


def recorded_verdicts(settings: Settings) -> dict[str, Authentication]:
    """The authentication verdicts intake recorded in the database's chain, by the digest of
    the message they judged: DKIM keys leave the DNS, the record stays (213). A verdict
    changed in the database changes its link's hash, which `check_database` finds."""
    found: dict[str, Authentication] = {}
    for row in _stored_chain(settings):
        record = json_object(row.record)
        auth, digest = record.get("auth"), record.get("raw")
        if isinstance(auth, dict) and isinstance(digest, str):
            found[digest] = Authentication(bool(auth.get("ok")), str(auth.get("why", "")))
    return found


def started(settings: Settings) -> datetime | None:
    """When the game in the config's database began: its first link's time."""
    store = Store(settings.database_url)
    try:
        game_id = store.game_id(settings.game.key)
        if game_id is None:
            return None
        return store.initial(game_id).started_at
    finally:
        store.close()


def until_of(
    settings: Settings, messages: list[Archived], sent: list[Archived], database: bool
) -> datetime | None:
    """How far the replay runs its clock: to the database's last link (a deadline fired after
    the last mail, the adoption of a proposal, is part of the record), else to the last mail
    the referee sent, and never short of the last message given (new-user review: a game
    whose last event was a deadline failed `verify`)."""
    ends = [m.at for m in messages if m.at is not None]
    if database:
        links = _stored_chain(settings)
        ends += [links[-1].at] if links else []
    if not database or not ends:
        ends += [m.at for m in sent if m.at is not None]
    return max(ends, default=None)


log = logging.getLogger("referee.verify")


@dataclass(frozen=True)
class _LinkName:
    """How a divergence names a link, `link 12 (mail at …, message <id>)`: the message's id is
    read from its headers only when the name is shown (a replay's every link would pay for
    parsing them again)."""

    seq: int
    kind: str
    at: datetime
    raw: bytes | None

    def __str__(self) -> str:
        where = f"link {self.seq} ({self.kind} at {self.at.isoformat()}"
        return where + (
            f", message {intake.identify(self.raw)[0]})" if self.raw is not None else ")"
        )


@dataclass
class Database:
    """The game's record as the database holds it, beside the replay's, for the checks."""

    settings: Settings
    replayed: Replayed
    verdict: Verdict
    links: list[ChainRow]
    events: list[tuple[int, datetime, str | None, dict[str, Any]]]
    rows: list[OutboxRow]
    opened: GameState  # the state the service opens: its snapshot and the events after it
    inbound: list[tuple[str, str, str, datetime, int]]
    # The outbox the rules must make, by Message-ID: (recipient, bytes)
    outbox: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    unmade: int = 0  # the answers to withheld mail, to people not playing: not made, not checked

    @cached_property
    def bound(self) -> list[Any]:
        """The events the chain's links bind, in order."""
        return [e for row in self.links for e in json_object(row.record).get("events", [])]


def check_database(settings: Settings, replayed: Replayed, verdict: Verdict) -> None:
    """Every check of `CHECKS` in turn, to the first divergence; then the notes of a pass."""
    found = _read(settings, replayed, verdict)
    if found is None:
        verdict.notes.append("no database of this game at hand: its record was not checked")
        return
    verdict.database_links = len(found.links)
    for name, check in CHECKS:
        divergence = check(found)
        if divergence is not None:
            log.info(
                "verify: the database check %r finds %s at %s",
                name,
                divergence.what,
                divergence.where,
            )
            verdict.fail(divergence)
            return
    unsent = Counter(r.status for r in found.rows if r.status != OutboxStatus.SENT)
    if unsent:
        verdict.notes.append(
            "not sent (yet): "
            + ", ".join(f"{count} {status}" for status, count in sorted(unsent.items()))
            + " mail(s) of the outbox (`outbox` lists them)"
        )
    if found.unmade:
        verdict.notes.append(
            f"{found.unmade} mail(s) of the outbox to people not playing answer withheld mail: "
            "not made by this replay, so not checked"
        )
    if verdict.sent_answers_withheld:
        verdict.notes.append(withheld_answers_note(verdict.sent_answers_withheld, "outbox"))


def _read(settings: Settings, replayed: Replayed, verdict: Verdict) -> Database | None:
    """The database's record of the game, None when it holds no such game. The answers to
    mail that could not be read are checked only when that mail was given (213)."""
    store = Store(settings.database_url)
    try:
        game_id = store.game_id(settings.game.key)
        if game_id is None:
            return None
        snapshot, seq = store.snapshot(game_id)
        found = Database(
            settings,
            replayed,
            verdict,
            links=store.chain(game_id),
            events=store.event_log(game_id),
            rows=store.outbox(game_id),
            opened=rebuild_from(snapshot, store.events(game_id, after=seq)),  # as `run` opens it
            inbound=store.inbound_rows(game_id),
        )
    finally:
        store.close()
    rows = found.rows
    found.outbox = {r.message_id: (r.recipient, r.raw) for r in rows if r.kind not in UNREAD_KINDS}
    for answer in rows:
        if answer.kind not in UNREAD_KINDS:
            continue
        if answer.message_id in replayed.outbox:
            # its mail was given: checked byte for byte
            found.outbox[answer.message_id] = (answer.recipient, answer.raw)
        else:
            replayed.unread_answers.add(answer.message_id)
    if replayed.unread_answers:
        verdict.notes.append(
            f"{len(replayed.unread_answers)} answer(s) to mail that could not be read not "
            "checked: such a mail makes no link and is not in the mail given (give it too, "
            "from the quarantine folder, to check them)"
        )
    return found


def _links(found: Database) -> Divergence | None:
    """Each stored link hashes to its head, binds its stored message, and is the replay's."""
    previous = chain.GENESIS
    for index, row in enumerate(found.links):
        record = json_object(row.record)
        where = _LinkName(row.seq, row.kind, row.at, row.raw)  # named only on a divergence
        if record.get("prev") != previous or chain.head_of(row.record) != row.head:
            return Divergence(
                str(where), "the stored link does not hash to its head", row.head, previous
            )
        if row.raw is not None and record.get("raw") != chain.mail_digest(row.raw):
            return Divergence(
                str(where),
                "the stored message is not the one the link was made with",
                chain.mail_digest(row.raw),
                str(record.get("raw")),
            )
        previous = row.head
        if index >= len(found.replayed.links):
            return Divergence(str(where), "the database has a link the mail given does not make")
        divergence = _link_against_replay(where, row, record, found.replayed.links[index])
        if divergence is not None:
            return divergence
    return None


def _link_against_replay(
    where: _LinkName,
    row: ChainRow,
    record: dict[str, Any],
    made: tuple[int, str, datetime, bytes | None, str, str],
) -> Divergence | None:
    """A stored link against the replay's link of the same place: its mail (or deadline),
    the mail's bytes, and its head (the record it hashes: time, events, state)."""
    _seq, kind, _at, raw, text, head = made
    stored_mail = chain.canonical_mail(row.raw) if row.raw is not None else None
    given_mail = chain.canonical_mail(raw) if raw is not None else None
    if raw is not None and json_object(text).get("raw") != chain.mail_digest(raw):
        given_mail = stored_mail  # a stand-in: its link binds the stored mail's SHA-256
    if stored_mail is not None and given_mail is None:
        return Divergence(
            str(where),
            "the database holds a mail at this link where the mail given makes a "
            f"deadline's link ({kind}): a mail is missing from the mail given here",
        )
    if stored_mail is None and given_mail is not None:
        return Divergence(
            str(where),
            "the database holds a deadline's link here where the mail given has a mail "
            f"({intake.identify(raw or b'')[0]}): a mail was added to the mail given",
        )
    if stored_mail != given_mail:
        stored_text, given_text = first_difference(stored_mail or b"", given_mail or b"")
        return Divergence(
            str(where),
            "the stored message differs from the mail given",
            stored_text,
            given_text,
            ("the database holds", "the mail given holds"),
        )
    if row.head != head:
        return _record_divergence(str(where), record, json_object(text))
    return None


def _links_missing(found: Database) -> Divergence | None:
    """The replay makes no link the database does not hold."""
    if len(found.links) >= len(found.replayed.links):
        return None
    seq, kind, at, _raw, _text, _head = found.replayed.links[len(found.links)]
    return Divergence(
        f"link {seq} ({kind} at {at.isoformat()})",
        "the mail given makes a link the database does not hold",
    )


def _events_bound(found: Database) -> Divergence | None:
    """Each stored event is the one its link binds."""
    for (seq, _at, mid, payload), expected in zip(found.events, found.bound, strict=False):
        if chain.canonical(payload) != chain.canonical(expected):
            return Divergence(
                f"event {seq} (message {mid or 'a deadline'})",
                "the stored event is not the one the chain binds",
                chain.canonical(payload),
                chain.canonical(expected),
            )
    return None


def _events_timed(found: Database) -> Divergence | None:
    """Each stored event's time and mail are the replay's."""
    made = found.replayed.events
    for (seq, at, mid, _payload), (_, made_at, made_mid) in zip(found.events, made, strict=False):
        if (utc(at), mid) != (utc(made_at), made_mid):
            return Divergence(
                f"event {seq}",
                "the stored event's time or mail is not the replay's (the archive and the "
                "site name them as the deciding mail)",
                f"{utc(at).isoformat()} {mid or 'a deadline'}",
                f"{utc(made_at).isoformat()} {made_mid or 'a deadline'}",
            )
    return None


def _events_counted(found: Database) -> Divergence | None:
    """The event log holds as many events as the chain binds."""
    bound = found.bound
    if len(found.events) == len(bound):
        return None
    return Divergence(
        "the event log",
        "the stored events are not the ones the chain binds",
        f"{len(found.events)} events",
        f"{len(bound)} events",
    )


def _inbound(found: Database) -> Divergence | None:
    """Each inbound row is the replay's: sender, status and time."""
    return _inbound_divergence(found.inbound, found.replayed.inbound, found.verdict.withheld)


def _stored_state(found: Database) -> Divergence | None:
    """The state the service opens is the state the chain's last link binds."""
    links = found.links
    if not links or _opens_at_last_link(
        found.opened, json_object(links[-1].record), found.settings
    ):
        return None
    return Divergence(
        "the game's stored state",
        "the state the service opens (its snapshot and the events after it) is not the "
        "state the chain's last link binds: the database was changed",
        f"link {links[-1].seq}",
    )


def _outbox(found: Database) -> Divergence | None:
    """Each outbox mail goes to whom it is addressed and is the mail the rules make."""
    replayed, verdict = found.replayed, found.verdict
    for message_id, (recipient, raw) in found.outbox.items():
        if recipient.lower() not in addressees(raw):
            return Divergence(
                f"outbox mail {message_id}",
                "the stored mail is to be delivered to someone it is not addressed to",
                recipient,
                ", ".join(sorted(addressees(raw))),
                ("delivered to", "addressed to"),
            )
        made = replayed.outbox.get(message_id)
        if made is None and verdict.withheld and recipient not in replayed.players:
            found.unmade += 1
            continue
        if made is None and answers_withheld(raw, replayed) is not None:
            verdict.sent_answers_withheld += 1  # named in a note
            continue
        if made != raw:
            published, rules = first_difference(raw, made or b"")
            return Divergence(
                f"outbox mail {message_id}",
                "the stored mail is not the mail the rules make"
                if made is not None
                else "the stored mail is not made by the rules",
                published,
                rules,
            )
    return None


def _outbox_missing(found: Database) -> Divergence | None:
    """The outbox holds every mail the rules make."""
    held = set(found.outbox) | {r.message_id for r in found.rows}
    missing = [mid for mid in found.replayed.outbox if mid not in held]
    if not missing:
        return None
    return Divergence(
        f"outbox mail {missing[0]}",
        "the rules make this mail; the database's outbox does not hold it "
        f"({len(missing)} such mail(s))",
        subject(found.replayed.outbox[missing[0]]),
    )


# The checks of the database, by name, in the order they run: the first divergence ends them.
CHECKS: tuple[tuple[str, Callable[[Database], Divergence | None]], ...] = (
    ("chain links", _links),
    ("links the database lacks", _links_missing),
    ("events the chain binds", _events_bound),
    ("events' times and mail", _events_timed),
    ("events counted", _events_counted),
    ("inbound mail", _inbound),
    ("stored state", _stored_state),
    ("outbox mail", _outbox),
    ("outbox mail the rules make", _outbox_missing),
)


def _inbound_divergence(
    stored: list[tuple[str, str, str, datetime, int]],
    made: list[tuple[str, str, str, datetime, int]],
    withheld: int,
) -> Divergence | None:
    """The first inbound mail the database records otherwise than the replay: its sender,
    status (applied, refused, a stranger's ...) or time, or missing (its count of commands is
    not compared: rows written before that column was kept hold none); a row the replay does
    not make must be a quarantined mail's (it makes no link). A deleted
    row would let the same mail be applied again when the inbox is read again. A record that
    withholds mail (ARCHIVE's) has a stand-in in place of each of `withheld` mails, which
    records no inbound row: that many rows are left unmatched."""
    rows = {key: (who, status, utc(at)) for key, who, status, at, _ in stored}
    for key, sender, status, at, _commands in made:
        row = rows.pop(key, None)
        expected = (sender, status, utc(at))
        if row != expected:
            return Divergence(
                f"inbound mail from {sender} at {utc(at).isoformat()}",
                "the database does not record this mail"
                if row is None
                else "the database records this mail otherwise than the replay",
                "" if row is None else f"{row[0]} {row[1]} {row[2].isoformat()}",
                f"{sender} {status} {utc(at).isoformat()}",
                ("the database holds", "the replay records"),
            )
    added = [(key, row) for key, row in rows.items() if row[1] != "quarantined"]
    if len(added) > withheld:
        key, (sender, status, at) = added[0]
        return Divergence(
            f"inbound mail from {sender} at {at.isoformat()}",
            f"the database records a mail ({status}) that no link of the chain holds",
        )
    return None


def _opens_at_last_link(opened: GameState, last: dict[str, Any], settings: Settings) -> bool:
    """Whether the state the service opens hashes to the state the chain's last link binds
    (the game's display name as the config gives it, the way the service opens it, too)."""
    bound = last.get("state")
    renamed = replace(opened, name=settings.game.name)
    return bound in (chain.StateDigest()(opened), chain.StateDigest()(renamed))


def _record_divergence(where: str, stored: dict[str, Any], made: dict[str, Any]) -> Divergence:
    """Name what differs in a link: its time, its events (the commands), its state."""
    for key, what in (
        ("at", "the time it took effect"),
        ("delivered", "the time it was delivered, before it took effect"),
        ("events", "the events (the commands obeyed and the deadlines fired)"),
        ("version", "the referee's version"),
        ("state", "the state after it"),
        ("prev", "the links before it"),
    ):
        if stored.get(key) != made.get(key):
            return Divergence(
                where,
                f"{what} differ",
                chain.canonical(stored.get(key))[:2000],
                chain.canonical(made.get(key))[:2000],
            )
    return Divergence(where, "the link differs", chain.canonical(stored), chain.canonical(made))
