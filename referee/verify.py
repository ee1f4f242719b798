"""`nomic-referee verify`: prove from the mail alone that every result follows the rules (213).

Given the mail the referee received (an mbox, or a Maildir such as its Processed folder) it
replays the game with the same engine and templates, then checks:

- every link of the hash chain the game's database holds, when the config's database is at
  hand: the link's own head, the message stored for it (byte for byte against the mail
  given), the events it records and the state digest, against what the replay gives;
- the database's event log against the events the chain binds, and the mail its outbox holds
  against the mail the replay makes;
- with `--sent`, every mail the referee sent (an mbox or Maildir, as a player saved it), byte
  for byte against the mail the replay makes (any `DKIM-Signature` header is set aside: a
  signature is checked apart), and the chain head each one names. A player's check of an
  archive (ARCHIVE) against the mail he received cannot remake two kinds of mail, which are
  counted and named in notes, never passed over in silence nor failed: mail of links after the
  record's last (the reply to ARCHIVE itself, and anything sent since: its `X-Nomic-Chain`
  names a later link), and mail answering a withheld mail (it names the stand-in's link and
  is dated when the stand-in took effect). Any other mail the rules do not make fails. The
  reply that carried the record says when it was asked for: the replay's clock stops there.

A player's archive (ARCHIVE) holds a stand-in in place of each mail of someone not playing:
the replay makes that mail's link from it, so the chain's heads are checked, and the verdict
counts such mails (`withheld`): what they said, and the referee's answers to them, cannot be.
A stand-in of a mail that changed the game (a confirmed request to join the King has not
admitted) cannot be followed: verify says so and names the link.

A mail that could not be read makes no link, so `export-mail` does not hold it; the answer its
sender was sent (kind `unreadable` or `unreadable_note` in the outbox) is then checked only
when that mail is given too (from the quarantine folder), and otherwise named in a note: a game
where one was answered passes (new-user review).

It stops at the first divergence and names it: where (the link, the message, the mail), what
was published or stored and what the rules give. Pure comparison over `replay`; it writes
nothing: a SQLite database the config names that is not there is not made (it is said,
and only the mail is checked), and a gzip-compressed mbox (ARCHIVE's mail.mbox.gz) is read as
it is.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from email.parser import BytesHeaderParser, BytesParser
from email.policy import compat32
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import Path
from typing import Any

from referee.config import Settings, slug
from referee.core import chain
from referee.core.chain import CHAIN_HEADER
from referee.core.model import GameState
from referee.core.rebuild import rebuild_from
from referee.mail import intake
from referee.mail.auth import Authentication
from referee.record import MAILBOX
from referee.replay import GZIP_MAGIC, Archived, read_mail, replay, undated
from referee.service import Referee
from referee.store.store import Store
from referee.store.tables import OutboxStatus


@dataclass(frozen=True)
class Divergence:
    """The first place where what was published or stored is not what the rules give."""

    where: str
    what: str
    published: str = ""
    rules_give: str = ""
    # What `published` and `rules_give` are, as the report names them: a stored message that
    # differs from the mail given is the database's copy against the file's, not a decision
    labels: tuple[str, str] = ("published", "the rules give")


@dataclass
class Verdict:
    ok: bool = True
    messages: int = 0
    links: int = 0
    head: str = chain.GENESIS
    database_links: int = 0  # links of the database's chain checked (0: no database at hand)
    sent_checked: int = 0
    signatures_checked: int = 0  # DKIM signatures of the sent mail that verified (213)
    sent_missing: int = 0  # mails the rules make that the sent mail given does not hold
    withheld: int = 0  # mails of people not playing, given as stand-ins: their text unchecked
    last_link: int = 0  # the number of the record's last link (0: none), whose head is `head`
    sent_after_record: int = 0  # sent mail of links after the record's last: not checked
    sent_answers_withheld: int = 0  # sent mail answering a withheld mail: not made, not checked
    divergence: Divergence | None = None
    notes: list[str] = field(default_factory=list)

    def fail(self, divergence: Divergence) -> Verdict:
        if self.divergence is None:
            self.ok, self.divergence = False, divergence
        return self

    def as_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2)


@dataclass
class _Replayed:
    links: list[tuple[int, str, datetime, bytes | None, str, str]] = field(default_factory=list)
    outbox: dict[str, bytes] = field(default_factory=dict)
    players: set[str] = field(default_factory=set)  # every address that played, at the end
    # Each inbound mail as the replay records it (`Store.inbound_rows`)
    inbound: list[tuple[str, str, str, datetime, int]] = field(default_factory=list)
    # Each event's sequence, time and the Message-ID of its mail, as the replay logs them
    events: list[tuple[int, datetime, str | None]] = field(default_factory=list)
    # Answers to mail that could not be read, which the mail given does not make (that mail is
    # in no link, so not in an export): by Message-ID, from the database's outbox
    unread_answers: set[str] = field(default_factory=set)


UNREAD_KINDS = ("unreadable", "unreadable_note")  # the outbox kinds of those answers


def verify(
    settings: Settings,
    inbound: Path,
    sent: Path | None = None,
    database: bool = True,
    progress: bool = False,
) -> Verdict:
    """Replay `inbound` and check the database's record and the `sent` mail against it."""
    messages = read_mail(inbound)
    verdict = Verdict(messages=len(messages))
    missing = undated(messages)
    if missing:
        verdict.notes.append(
            f"{missing} of {len(messages)} messages have no delivery time in their 'From ' line:"
            " the time their sender wrote in Date was used (`replay --strict` refuses them)"
        )
    absent = _absent_database(settings) if database else None
    if absent is not None:  # connecting would make an empty file: verify writes nothing
        database = False
        verdict.notes.append(
            f"no database at {absent}: only the mail was checked (as with --no-database)"
        )
    replayed = _Replayed()

    def keep(store: Store, referee: Referee) -> None:
        replayed.links = [
            (r.seq, r.kind, r.at, r.raw, r.record, r.head) for r in store.chain(referee.game_id)
        ]
        replayed.outbox = {r.message_id: r.raw for r in store.outbox(referee.game_id)}
        replayed.players = {p.email for p in referee.state.players}
        replayed.events = [(q, at, mid) for q, at, mid, _ in store.event_log(referee.game_id)]
        replayed.inbound = store.inbound_rows(referee.game_id)

    began = _started(settings) if database else None
    recorded = _recorded(settings) if database else {}
    mails = read_mail(sent) if sent is not None else []
    other = _another_game(settings, mails)
    if other is not None:
        verdict.fail(
            Divergence(
                f"the sent mail given ({sent})",
                f"it holds no mail of this game ({settings.game.key!r}, whose Message-IDs start "
                f"<{slug(settings.game.key)}.): its mail names {other}; give the config and "
                "the mail of one game",
            )
        )
        return verdict
    until = _until(settings, messages, mails, database)
    asked = _archive_reply(inbound, mails) if not database else None
    if asked is not None:  # the record ends where the request for it took effect
        until = max([asked[1], *(m.at for m in messages if m.at is not None)])
    result = replay(
        settings,
        messages,
        until=until,
        render=True,
        inspect=keep,
        start=began,
        recorded=recorded,
        progress=progress,  # a bar on a terminal, for a long record
    )
    verdict.withheld = result.withheld
    if result.withheld:
        verdict.notes.append(
            f"{result.withheld} mail(s) of people not playing were withheld from this record: "
            "each stand-in gave its link (when it took effect, its SHA-256), so the chain is "
            "checked, but what those mails said and the answers to them cannot be"
        )
    if result.unfollowed:
        verdict.fail(
            Divergence(
                f"link {result.unfollowed[0]}",
                "the stand-in of a withheld mail says its mail changed the game there, and "
                "the replay's game did not change: either that mail was a confirmed request "
                "to join the King has not admitted (this record cannot show the game after it; "
                "the operator's export-mail can), or the stand-in was altered, or the config "
                "is not this record's game",
            )
        )
    if recorded:
        verdict.notes.append(
            f"senders judged as intake recorded ({len(recorded)} verdicts), not by the DNS of today"
        )
    verdict.links = len(replayed.links)
    verdict.head = replayed.links[-1][5] if replayed.links else chain.GENESIS
    verdict.last_link = replayed.links[-1][0] if replayed.links else 0
    if asked is not None and asked[0] - 1 != verdict.last_link:
        verdict.notes.append(
            f"the reply to ARCHIVE that carried this record belongs to link {asked[0]}, so the "
            f"record should end at link {asked[0] - 1}; the replay ends at link "
            f"{verdict.last_link}"
        )
    if database:
        _check_database(settings, replayed, verdict)
    if sent is not None and verdict.ok:
        _check_sent(mails, replayed, verdict)
        if verdict.ok:
            _check_signatures(settings, mails, verdict)
    if not database and sent is None:
        verdict.notes.append(UNCHECKED)
    return verdict


# What a check with neither the database nor the sent mail can show, said in its notes (and so
# in --json): that the mail given makes the head it names, not that the head is the game's.
UNCHECKED = (
    "nothing to hold it against: neither the database nor the referee's sent mail was given, "
    "so this shows only that the mail given makes the head above; it is the game's mail when "
    "that head is the one in the X-Nomic-Chain header of the referee's mail you hold "
    "(or give --sent)"
)


def _another_game(settings: Settings, sent: list[Archived]) -> str | None:
    """When the sent mail given holds mail but none of this game's (the referee's Message-IDs
    start with the game's key), what its Message-IDs name instead ("no game" when none)."""
    if not sent:
        return None
    ours = f"<{slug(settings.game.key)}."
    games: Counter[str] = Counter()
    for item in sent:
        value = BytesHeaderParser(policy=compat32).parsebytes(item.raw).get("Message-ID", "")
        found = str(value).strip()
        if found.startswith(ours):
            return None
        local = found[1:].partition("@")[0] if found.startswith("<") else ""
        if "." in local:
            games[local.split(".", 1)[0]] += 1
    return f"the game {games.most_common(1)[0][0]!r}" if games else "no game"


def _archive_reply(inbound: Path, sent: list[Archived]) -> tuple[int, datetime] | None:
    """The reply to ARCHIVE among the sent mail that carried the record given (its
    `mail.mbox.gz` attached, or linked on the site by the SHA-256 of its bytes): the link it
    names and its Date, when the request took effect. The record ends just before: a replay of
    it runs its clock to then, firing the deadlines due before the request and none after."""
    if not sent or not inbound.is_file():
        return None
    given = inbound.read_bytes()
    packed = given if given.startswith(GZIP_MAGIC) else None
    for item in sent:
        named, dated = chain_named(item.raw), _dated(item.raw)
        if named is None or dated is None:
            continue
        if packed is not None and hashlib.sha256(packed).hexdigest().encode() in item.raw:
            return named[0], dated
        if b"mail.mbox.gz" not in item.raw:
            continue
        message = BytesParser(policy=compat32).parsebytes(item.raw)
        for part in message.walk():
            if part.get_filename() != MAILBOX:
                continue
            payload = part.get_payload(decode=True)
            if not isinstance(payload, bytes):
                continue
            try:
                if payload == given or gzip.decompress(payload) == given:
                    return named[0], dated
            except (OSError, EOFError):  # not gzip: not this record
                continue
    return None


def _absent_database(settings: Settings) -> Path | None:
    """The SQLite file the config names when it is not there (connecting would make it,
    empty); None for any other database."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    path = Path(str(url.database))
    return None if path.exists() else path


def _check_signatures(settings: Settings, sent: list[Archived], verdict: Verdict) -> None:
    """Each sent mail's DKIM signature, checked against the game's own key when the config's
    [dkim] key is at hand (keys leave the DNS), else against the DNS."""
    import dkim

    from referee.mail.signing import Signer, SigningError

    lookup = None
    if settings.dkim is not None:
        try:
            signer = Signer.load(settings.dkim, settings.game.address.rpartition("@")[2])
            lookup = signer.dns()
        except SigningError as exc:
            verdict.notes.append(f"signatures checked against the DNS: {exc}")
    unsigned = 0
    for item in sent:
        if not _signed(item.raw):
            unsigned += 1
            continue
        try:
            good = dkim.verify(item.raw, dnsfunc=lookup) if lookup else dkim.verify(item.raw)
        except dkim.DKIMException:
            good = False
        if not good:
            mid, _, _ = intake.identify(item.raw)
            verdict.fail(
                Divergence(
                    f"sent mail {mid}",
                    "its DKIM signature does not verify: the mail was changed after it left, "
                    "or another key signed it",
                    _subject(item.raw),
                )
            )
            return
        verdict.signatures_checked += 1
    if unsigned and settings.dkim is not None:
        verdict.notes.append(f"{unsigned} sent mail(s) carry no DKIM signature")


def _signed(raw: bytes) -> bool:
    head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    return any(line.lower().startswith(b"dkim-signature:") for line in head.split(b"\n"))


def _recorded(settings: Settings) -> dict[str, Authentication]:
    """The authentication verdicts intake recorded in the database's chain, by the digest of
    the message they judged: DKIM keys leave the DNS, the record stays (213). A verdict
    changed in the database changes its link's hash, which `_check_database` finds."""
    store = Store(settings.database_url)
    try:
        game_id = store.game_id(settings.game.key)
        links = store.chain(game_id) if game_id is not None else []
    finally:
        store.close()
    found: dict[str, Authentication] = {}
    for row in links:
        record = _json(row.record)
        auth, digest = record.get("auth"), record.get("raw")
        if isinstance(auth, dict) and isinstance(digest, str):
            found[digest] = Authentication(bool(auth.get("ok")), str(auth.get("why", "")))
    return found


def _started(settings: Settings) -> datetime | None:
    """When the game in the config's database began: its first link's time."""
    store = Store(settings.database_url)
    try:
        game_id = store.game_id(settings.game.key)
        if game_id is None:
            return None
        return store.initial(game_id).started_at
    finally:
        store.close()


def _until(
    settings: Settings, messages: list[Archived], sent: list[Archived], database: bool
) -> datetime | None:
    """How far the replay runs its clock: to the database's last link (a deadline fired after
    the last mail, the adoption of a proposal, is part of the record), else to the last mail
    the referee sent, and never short of the last message given (new-user review: a game
    whose last event was a deadline failed `verify`)."""
    ends = [m.at for m in messages if m.at is not None]
    if database:
        store = Store(settings.database_url)
        try:
            game_id = store.game_id(settings.game.key)
            links = store.chain(game_id) if game_id is not None else []
        finally:
            store.close()
        ends += [links[-1].at] if links else []
    if not database or not ends:
        ends += [m.at for m in sent if m.at is not None]
    return max(ends, default=None)


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


def _check_database(settings: Settings, replayed: _Replayed, verdict: Verdict) -> None:
    store = Store(settings.database_url)
    try:
        game_id = store.game_id(settings.game.key)
        if game_id is None:
            verdict.notes.append("no database of this game at hand: its record was not checked")
            return
        links = store.chain(game_id)
        events = store.event_log(game_id)
        rows = store.outbox(game_id)
        snapshot, seq = store.snapshot(game_id)
        opened = rebuild_from(snapshot, store.events(game_id, after=seq))  # as `run` opens it
        inbound = store.inbound_rows(game_id)
    finally:
        store.close()
    outbox = {r.message_id: (r.recipient, r.raw) for r in rows if r.kind not in UNREAD_KINDS}
    for answer in rows:
        if answer.kind not in UNREAD_KINDS:
            continue
        if answer.message_id in replayed.outbox:
            # its mail was given: checked byte for byte
            outbox[answer.message_id] = (answer.recipient, answer.raw)
        else:
            replayed.unread_answers.add(answer.message_id)
    if replayed.unread_answers:
        verdict.notes.append(
            f"{len(replayed.unread_answers)} answer(s) to mail that could not be read not "
            "checked: such a mail makes no link and is not in the mail given (give it too, "
            "from the quarantine folder, to check them)"
        )
    verdict.database_links = len(links)
    previous = chain.GENESIS
    bound: list[dict[str, Any]] = []
    for index, row in enumerate(links):
        record = _json(row.record)
        where = _LinkName(row.seq, row.kind, row.at, row.raw)
        if record.get("prev") != previous or chain.head_of(row.record) != row.head:
            verdict.fail(
                Divergence(
                    str(where), "the stored link does not hash to its head", row.head, previous
                )
            )
            return
        if row.raw is not None and record.get("raw") != chain.mail_digest(row.raw):
            verdict.fail(
                Divergence(
                    str(where),
                    "the stored message is not the one the link was made with",
                    chain.mail_digest(row.raw),
                    str(record.get("raw")),
                )
            )
            return
        previous = row.head
        bound.extend(record.get("events", []))
        if index >= len(replayed.links):
            verdict.fail(
                Divergence(str(where), "the database has a link the mail given does not make")
            )
            return
        seq, kind, _at, raw, text, head = replayed.links[index]
        stored_mail = chain.canonical_mail(row.raw) if row.raw is not None else None
        given_mail = chain.canonical_mail(raw) if raw is not None else None
        if raw is not None and _json(text).get("raw") != chain.mail_digest(raw):
            given_mail = stored_mail  # a stand-in: its link binds the stored mail's SHA-256
        if stored_mail is not None and given_mail is None:
            verdict.fail(
                Divergence(
                    str(where),
                    "the database holds a mail at this link where the mail given makes a "
                    f"deadline's link ({kind}): a mail is missing from the mail given here",
                )
            )
            return
        if stored_mail is None and given_mail is not None:
            verdict.fail(
                Divergence(
                    str(where),
                    "the database holds a deadline's link here where the mail given has a mail "
                    f"({intake.identify(raw or b'')[0]}): a mail was added to the mail given",
                )
            )
            return
        if stored_mail != given_mail:
            stored_text, given_text = _first_difference(stored_mail or b"", given_mail or b"")
            verdict.fail(
                Divergence(
                    str(where),
                    "the stored message differs from the mail given",
                    stored_text,
                    given_text,
                    ("the database holds", "the mail given holds"),
                )
            )
            return
        if row.head != head:
            verdict.fail(_record_divergence(str(where), record, _json(text)))
            return
    if len(links) < len(replayed.links):
        seq, kind, at, raw, _text, _head = replayed.links[len(links)]
        verdict.fail(
            Divergence(
                f"link {seq} ({kind} at {at.isoformat()})",
                "the mail given makes a link the database does not hold",
            )
        )
        return
    for (seq, _at, mid, payload), expected in zip(events, bound, strict=False):
        if chain.canonical(payload) != chain.canonical(expected):
            verdict.fail(
                Divergence(
                    f"event {seq} (message {mid or 'a deadline'})",
                    "the stored event is not the one the chain binds",
                    chain.canonical(payload),
                    chain.canonical(expected),
                )
            )
            return
    for (seq, at, mid, _payload), (_, made_at, made_mid) in zip(
        events, replayed.events, strict=False
    ):
        if (_utc(at), mid) != (_utc(made_at), made_mid):
            verdict.fail(
                Divergence(
                    f"event {seq}",
                    "the stored event's time or mail is not the replay's (the archive and the "
                    "site name them as the deciding mail)",
                    f"{_utc(at).isoformat()} {mid or 'a deadline'}",
                    f"{_utc(made_at).isoformat()} {made_mid or 'a deadline'}",
                )
            )
            return
    if len(events) != len(bound):
        verdict.fail(
            Divergence(
                "the event log",
                "the stored events are not the ones the chain binds",
                f"{len(events)} events",
                f"{len(bound)} events",
            )
        )
        return
    found = _inbound_divergence(inbound, replayed.inbound, verdict.withheld)
    if found is not None:
        verdict.fail(found)
        return
    if links and not _opens_at_last_link(opened, _json(links[-1].record), settings):
        verdict.fail(
            Divergence(
                "the game's stored state",
                "the state the service opens (its snapshot and the events after it) is not the "
                "state the chain's last link binds: the database was changed",
                f"link {links[-1].seq}",
            )
        )
        return
    unmade = 0  # the answers to withheld mail, to people not playing: not made, not checked
    for message_id, (recipient, raw) in outbox.items():
        if recipient.lower() not in _addressed(raw):
            verdict.fail(
                Divergence(
                    f"outbox mail {message_id}",
                    "the stored mail is to be delivered to someone it is not addressed to",
                    recipient,
                    ", ".join(sorted(_addressed(raw))),
                    ("delivered to", "addressed to"),
                )
            )
            return
        made = replayed.outbox.get(message_id)
        if made is None and verdict.withheld and recipient not in replayed.players:
            unmade += 1
            continue
        if made is None and _answers_withheld(raw, replayed) is not None:
            verdict.sent_answers_withheld += 1  # named in a note below
            continue
        if made != raw:
            published, rules = _first_difference(raw, made or b"")
            verdict.fail(
                Divergence(
                    f"outbox mail {message_id}",
                    "the stored mail is not the mail the rules make"
                    if made is not None
                    else "the stored mail is not made by the rules",
                    published,
                    rules,
                )
            )
            return
    held = set(outbox) | {r.message_id for r in rows}
    missing = [mid for mid in replayed.outbox if mid not in held]
    if missing:
        verdict.fail(
            Divergence(
                f"outbox mail {missing[0]}",
                "the rules make this mail; the database's outbox does not hold it "
                f"({len(missing)} such mail(s))",
                _subject(replayed.outbox[missing[0]]),
            )
        )
        return
    unsent = Counter(r.status for r in rows if r.status != OutboxStatus.SENT)
    if unsent:
        verdict.notes.append(
            "not sent (yet): "
            + ", ".join(f"{count} {status}" for status, count in sorted(unsent.items()))
            + " mail(s) of the outbox (`outbox` lists them)"
        )
    if unmade:
        verdict.notes.append(
            f"{unmade} mail(s) of the outbox to people not playing answer withheld mail: "
            "not made by this replay, so not checked"
        )
    if verdict.sent_answers_withheld:
        verdict.notes.append(_withheld_answers_note(verdict.sent_answers_withheld, "outbox"))


def _check_sent(sent: list[Archived], replayed: _Replayed, verdict: Verdict) -> None:
    """Each sent mail byte for byte against the mail the replay makes. A mail the replay does
    not make fails, unless it belongs to a link after the record's last (its `X-Nomic-Chain`
    names a later link and its Date is not before the record's end: the reply to ARCHIVE
    itself, and any mail sent since), or answers a withheld mail (it names the stand-in's link,
    number and head, and is dated when the stand-in took effect: the note to a player whose
    address a stranger forged, the King's notice of a stranger's request): those are counted
    and named in a note, not checked (213)."""
    made = {mid: _comparable(raw) for mid, raw in replayed.outbox.items()}
    names = {mid: _field_names(raw) for mid, raw in replayed.outbox.items()}
    delivered = 0  # mails given with header fields added on delivery, set aside
    seen = set()
    after = _after_record(replayed)
    for item in sent:
        mid, _, _ = intake.identify(item.raw)
        fields = names.get(mid)
        published = _comparable(item.raw, fields)
        if fields is not None and published != _comparable(item.raw):
            delivered += 1
        verdict.sent_checked += 1
        seen.add(mid)
        expected = made.get(mid)
        if expected is None and mid in replayed.unread_answers:
            verdict.sent_checked -= 1  # named in a note: its mail was not given
            continue
        if expected is None and after(item.raw):
            verdict.sent_checked -= 1
            verdict.sent_after_record += 1
            continue
        if expected is None and _answers_withheld(item.raw, replayed) is not None:
            verdict.sent_checked -= 1
            verdict.sent_answers_withheld += 1
            continue
        if expected is None:
            verdict.fail(
                Divergence(f"sent mail {mid}", "the rules never make this mail", _subject(item.raw))
            )
            return
        if not _names_a_reached_link(item.raw, replayed):
            named = chain_named(item.raw)
            reached = {seq: head for seq, *_, head in replayed.links}
            same = named is not None and named[0] in reached
            verdict.fail(
                Divergence(
                    f"sent mail {mid}",
                    f"its X-Nomic-Chain header names link {named[0]} with another head than "
                    "the replay's: the mail given is not the mail of the game this was sent in"
                    if same and named is not None
                    else "its X-Nomic-Chain header names no link the replay reached",
                    _chain_header_text(item.raw),
                    f"{named[0]} {reached[named[0]]}" if same and named is not None else "",
                    ("the mail names", "the replay's link"),
                )
            )
            return
        if published != expected:
            first, second = _first_difference(published, expected)
            verdict.fail(
                Divergence(f"sent mail {mid}", "the mail differs from the rules'", first, second)
            )
            return
    verdict.sent_missing = len(set(made) - seen)
    _note_missing_to_holder(sent, replayed, set(made) - seen, verdict)
    if delivered:
        verdict.notes.append(
            f"{delivered} sent mail(s) carry header fields the referee did not write (added on "
            "delivery or by a mail client: Received, Return-Path, Status, ...): set aside, and "
            "the referee's own header fields and body compared byte for byte"
        )
    if verdict.sent_after_record:
        verdict.notes.append(
            f"after the record: {verdict.sent_after_record} sent mail(s) belong to links after "
            f"its last (link {verdict.last_link}), the reply to ARCHIVE among them: not checked"
        )
    if verdict.sent_answers_withheld:
        verdict.notes.append(_withheld_answers_note(verdict.sent_answers_withheld, "sent"))


def _note_missing_to_holder(
    sent: list[Archived], replayed: _Replayed, missing: set[str], verdict: Verdict
) -> None:
    """The mail the rules make to the address the sent mail given is mostly to (the player
    whose mailbox it is) that it does not hold, named in a note: a notice the referee never
    sent them shows here (or one they deleted); mail to the other players is only counted."""
    addressed = Counter(a for item in sent for a in _addressed(item.raw))
    if not addressed or not missing:
        return
    holder, _ = addressed.most_common(1)[0]
    theirs = sorted(m for m in missing if holder in _addressed(replayed.outbox[m]))
    if theirs:
        subjects = "; ".join(_subject(replayed.outbox[m]) or m for m in theirs[:5])
        verdict.notes.append(
            f"{len(theirs)} mail(s) the rules make to {holder} (whose mailbox this looks like) "
            f"are not in the mail given, deleted or never sent: {subjects}"
            + (" ..." if len(theirs) > 5 else "")
        )


def _withheld_answers_note(count: int, where: str) -> str:
    return (
        f"{count} {where} mail(s) answer withheld mail (each names a stand-in's link and is "
        "dated when it took effect): a stand-in cannot make them again, so they are not checked"
    )


def _chain_header_text(raw: bytes) -> str:
    """The `X-Nomic-Chain` header's value of a mail the referee sent, "" when it has none."""
    for line in raw.replace(b"\r\n", b"\n").split(b"\n"):
        if not line:
            break
        if line.lower().startswith(CHAIN_HEADER.lower()):
            return line[len(CHAIN_HEADER) :].decode("ascii", "replace").strip()
    return ""


def chain_named(raw: bytes) -> tuple[int, str] | None:
    """The link (number, head) a sent mail names in `X-Nomic-Chain`, or None."""
    number, _, head = _chain_header_text(raw).partition(" ")
    if not number.isdigit() or not re.fullmatch(r"[0-9a-f]{64}", head.strip()):
        return None
    return int(number), head.strip()


def _dated(raw: bytes) -> datetime | None:
    """When a sent mail says it was written: its Date header (the referee's own, to the second)."""
    value = BytesHeaderParser(policy=compat32).parsebytes(raw).get("Date")
    try:
        at = parsedate_to_datetime(str(value)) if value else None
    except (TypeError, ValueError, IndexError):
        return None
    return at if at is None or at.tzinfo else at.replace(tzinfo=UTC)


def _second(at: datetime) -> datetime:
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).replace(microsecond=0)


def _after_record(replayed: _Replayed) -> Callable[[bytes], bool]:
    """Whether a sent mail the replay does not make belongs after the record's last link:
    it names a later link and is dated no earlier than that link (the Date is to the second)."""
    last, end = (replayed.links[-1][0], replayed.links[-1][2]) if replayed.links else (0, None)

    def after(raw: bytes) -> bool:
        named, dated = chain_named(raw), _dated(raw)
        if named is None or dated is None or named[0] <= last:
            return False
        return end is None or dated >= _second(end)

    return after


def _answers_withheld(raw: bytes, replayed: _Replayed) -> int | None:
    """The number of the withheld mail's link a sent mail answers, or None: the mail names
    that link in `X-Nomic-Chain` (its number and the head its stand-in made) and its Date is
    the time the stand-in took effect, to the second. Any other mail the rules do not make
    still fails."""
    named, dated = chain_named(raw), _dated(raw)
    if named is None or dated is None:
        return None
    for seq, kind, at, given, text, head in replayed.links:
        if (seq, head) != named:
            continue
        stand_in = kind == "mail" and given is not None
        stand_in = stand_in and _json(text).get("raw") != chain.mail_digest(given or b"")
        return seq if stand_in and dated == _second(at) else None
    return None


def _names_a_reached_link(raw: bytes, replayed: _Replayed) -> bool:
    """A sent mail's `X-Nomic-Chain` names a link (number and head) the replay reached; a mail
    without a readable one (made before the header existed) is judged by its bytes alone."""
    named = chain_named(raw)
    return named is None or any((seq, head) == named for seq, *_, head in replayed.links)


def _comparable(raw: bytes, keep: frozenset[bytes] | None = None) -> bytes:
    """A mail's bytes as an mbox holds them, without any DKIM signature (checked apart); with
    `keep` (the lower-case names of the header fields the referee wrote in that mail), without
    any other header field either: those mail systems and clients add on the way and in the
    mailbox (`Received`, `Return-Path`, `Delivered-To`, `Status`, `X-Mozilla-Status`, ...), not
    the referee's words. Every field of a name the referee wrote is kept, a second one too."""
    lines = raw.replace(b"\r\n", b"\n").split(b"\n")
    out: list[bytes] = []
    skipping = False
    in_head = True
    for line in lines:
        if in_head and line == b"":
            in_head = False
        if in_head and skipping and line[:1] in (b" ", b"\t"):
            continue
        skipping = in_head and _set_aside(line, keep)
        if skipping:
            continue
        out.append(b">" + line if line.startswith(b"From ") and not in_head else line)
    return b"\n".join(out).rstrip(b"\n")


def _set_aside(line: bytes, keep: frozenset[bytes] | None) -> bool:
    """Whether a header line starts a field `_comparable` leaves out."""
    name = line.partition(b":")[0].strip().lower()
    if name == b"dkim-signature":
        return True
    return keep is not None and line[:1] not in (b" ", b"\t") and name not in keep


def _field_names(raw: bytes) -> frozenset[bytes]:
    """The lower-case names of a mail's header fields."""
    head = raw.replace(b"\r\n", b"\n").partition(b"\n\n")[0]
    return frozenset(
        line.partition(b":")[0].strip().lower()
        for line in head.split(b"\n")
        if line[:1] not in (b" ", b"\t") and b":" in line
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
    rows = {key: (who, status, _utc(at)) for key, who, status, at, _ in stored}
    for key, sender, status, at, _commands in made:
        row = rows.pop(key, None)
        expected = (sender, status, _utc(at))
        if row != expected:
            return Divergence(
                f"inbound mail from {sender} at {_utc(at).isoformat()}",
                "the database does not record this mail"
                if row is None
                else "the database records this mail otherwise than the replay",
                "" if row is None else f"{row[0]} {row[1]} {row[2].isoformat()}",
                f"{sender} {status} {_utc(at).isoformat()}",
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


def _utc(at: datetime) -> datetime:
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def _addressed(raw: bytes) -> set[str]:
    """The addresses a mail names in To and Cc, lower-case."""
    head = BytesHeaderParser(policy=compat32).parsebytes(raw)
    fields = [str(v) for name in ("To", "Cc") for v in head.get_all(name, [])]
    return {address.lower() for _, address in getaddresses(fields) if address}


def _subject(raw: bytes) -> str:
    for line in raw.replace(b"\r\n", b"\n").split(b"\n"):
        if not line:
            break
        if line.lower().startswith(b"subject:"):
            return line.decode("utf-8", "replace")
    return ""


def _first_difference(published: bytes, expected: bytes) -> tuple[str, str]:
    """The first line that differs, as published and as the rules give it."""
    left = published.replace(b"\r\n", b"\n").split(b"\n")
    right = expected.replace(b"\r\n", b"\n").split(b"\n")
    for number, (a, b) in enumerate(zip(left, right, strict=False), start=1):
        if a != b:
            return (
                f"line {number}: {a.decode('utf-8', 'replace')[:200]}",
                f"line {number}: {b.decode('utf-8', 'replace')[:200]}",
            )
    return f"{len(left)} lines", f"{len(right)} lines"


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


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
