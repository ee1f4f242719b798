"""`verify --sent`: the mail the referee sent, against the mail the replay makes (213).

Each sent mail byte for byte (a `DKIM-Signature` set aside and checked apart), the chain link
each names, the reply to ARCHIVE that carried the record, and the mail no replay can make
again (of links after the record's last, or answering a withheld mail), counted in notes.
"""

from __future__ import annotations

import gzip
import hashlib
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from email.parser import BytesHeaderParser, BytesParser
from email.policy import compat32
from pathlib import Path

from referee.config import Settings, slug
from referee.core import chain
from referee.mail import intake
from referee.record import MAILBOX
from referee.replay import GZIP_MAGIC, Archived
from referee.verify.mail import (
    addressees,
    chain_header_text,
    chain_named,
    comparable,
    date_of,
    field_names,
    first_difference,
    json_object,
    second,
    signed,
    subject,
)
from referee.verify.verdict import Divergence, Replayed, Verdict


def another_game(settings: Settings, sent: list[Archived]) -> str | None:
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


def archive_reply(inbound: Path, sent: list[Archived]) -> tuple[int, datetime] | None:
    """The reply to ARCHIVE among the sent mail that carried the record given (its
    `mail.mbox.gz` attached, or linked on the site by the SHA-256 of its bytes): the link it
    names and its Date, when the request took effect. The record ends just before: a replay of
    it runs its clock to then, firing the deadlines due before the request and none after."""
    if not sent or not inbound.is_file():
        return None
    given = inbound.read_bytes()
    packed = given if given.startswith(GZIP_MAGIC) else None
    for item in sent:
        named, dated = chain_named(item.raw), date_of(item.raw)
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


def check_signatures(settings: Settings, sent: list[Archived], verdict: Verdict) -> None:
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
        if not signed(item.raw):
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
                    subject(item.raw),
                )
            )
            return
        verdict.signatures_checked += 1
    if unsigned and settings.dkim is not None:
        verdict.notes.append(f"{unsigned} sent mail(s) carry no DKIM signature")


def check_sent(sent: list[Archived], replayed: Replayed, verdict: Verdict) -> None:
    """Each sent mail byte for byte against the mail the replay makes. A mail the replay does
    not make fails, unless it belongs to a link after the record's last (its `X-Nomic-Chain`
    names a later link and its Date is not before the record's end: the reply to ARCHIVE
    itself, and any mail sent since), or answers a withheld mail (it names the stand-in's link,
    number and head, and is dated when the stand-in took effect: the note to a player whose
    address a stranger forged, the King's notice of a stranger's request): those are counted
    and named in a note, not checked (213)."""
    made = {mid: comparable(raw) for mid, raw in replayed.outbox.items()}
    names = {mid: field_names(raw) for mid, raw in replayed.outbox.items()}
    delivered = 0  # mails given with header fields added on delivery, set aside
    seen = set()
    after = _after_record(replayed)
    for item in sent:
        mid, _, _ = intake.identify(item.raw)
        fields = names.get(mid)
        published = comparable(item.raw, fields)
        if fields is not None and published != comparable(item.raw):
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
        if expected is None and answers_withheld(item.raw, replayed) is not None:
            verdict.sent_checked -= 1
            verdict.sent_answers_withheld += 1
            continue
        if expected is None:
            verdict.fail(
                Divergence(f"sent mail {mid}", "the rules never make this mail", subject(item.raw))
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
                    chain_header_text(item.raw),
                    f"{named[0]} {reached[named[0]]}" if same and named is not None else "",
                    ("the mail names", "the replay's link"),
                )
            )
            return
        if published != expected:
            first, second = first_difference(published, expected)
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
        verdict.notes.append(withheld_answers_note(verdict.sent_answers_withheld, "sent"))


def _note_missing_to_holder(
    sent: list[Archived], replayed: Replayed, missing: set[str], verdict: Verdict
) -> None:
    """The mail the rules make to the address the sent mail given is mostly to (the player
    whose mailbox it is) that it does not hold, named in a note: a notice the referee never
    sent them shows here (or one they deleted); mail to the other players is only counted."""
    addressed = Counter(a for item in sent for a in addressees(item.raw))
    if not addressed or not missing:
        return
    holder, _ = addressed.most_common(1)[0]
    theirs = sorted(m for m in missing if holder in addressees(replayed.outbox[m]))
    if theirs:
        subjects = "; ".join(subject(replayed.outbox[m]) or m for m in theirs[:5])
        verdict.notes.append(
            f"{len(theirs)} mail(s) the rules make to {holder} (whose mailbox this looks like) "
            f"are not in the mail given, deleted or never sent: {subjects}"
            + (" ..." if len(theirs) > 5 else "")
        )


def withheld_answers_note(count: int, where: str) -> str:
    return (
        f"{count} {where} mail(s) answer withheld mail (each names a stand-in's link and is "
        "dated when it took effect): a stand-in cannot make them again, so they are not checked"
    )


def _after_record(replayed: Replayed) -> Callable[[bytes], bool]:
    """Whether a sent mail the replay does not make belongs after the record's last link:
    it names a later link and is dated no earlier than that link (the Date is to the second)."""
    last, end = (replayed.links[-1][0], replayed.links[-1][2]) if replayed.links else (0, None)

    def after(raw: bytes) -> bool:
        named, dated = chain_named(raw), date_of(raw)
        if named is None or dated is None or named[0] <= last:
            return False
        return end is None or dated >= second(end)

    return after


def answers_withheld(raw: bytes, replayed: Replayed) -> int | None:
    """The number of the withheld mail's link a sent mail answers, or None: the mail names
    that link in `X-Nomic-Chain` (its number and the head its stand-in made) and its Date is
    the time the stand-in took effect, to the second. Any other mail the rules do not make
    still fails."""
    named, dated = chain_named(raw), date_of(raw)
    if named is None or dated is None:
        return None
    for seq, kind, at, given, text, head in replayed.links:
        if (seq, head) != named:
            continue
        stand_in = kind == "mail" and given is not None
        stand_in = stand_in and json_object(text).get("raw") != chain.mail_digest(given or b"")
        return seq if stand_in and dated == second(at) else None
    return None


def _names_a_reached_link(raw: bytes, replayed: Replayed) -> bool:
    """A sent mail's `X-Nomic-Chain` names a link (number and head) the replay reached; a mail
    without a readable one (made before the header existed) is judged by its bytes alone."""
    named = chain_named(raw)
    return named is None or any((seq, head) == named for seq, *_, head in replayed.links)
