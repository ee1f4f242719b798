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

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from referee.config import Settings, slug
from referee.core import chain
from referee.mail.auth import Authentication
from referee.replay import Archived, read_mail, replay, undated
from referee.verify.database import (
    absent_database,
    check_database,
    recorded_verdicts,
    started,
    until_of,
)
from referee.verify.mail import chain_named
from referee.verify.sent import another_game, archive_reply, check_sent, check_signatures
from referee.verify.verdict import UNCHECKED, UNREAD_KINDS, Divergence, Replayed, Verdict

__all__ = [
    "UNCHECKED",
    "UNREAD_KINDS",
    "Divergence",
    "Verdict",
    "chain_named",
    "verify",
]


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
    absent = absent_database(settings) if database else None
    if absent is not None:  # connecting would make an empty file: verify writes nothing
        database = False
        verdict.notes.append(
            f"no database at {absent}: only the mail was checked (as with --no-database)"
        )
    began = started(settings) if database else None
    recorded = recorded_verdicts(settings) if database else {}
    mails = read_mail(sent) if sent is not None else []
    other = another_game(settings, mails)
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
    replay_from = _Given(inbound, messages, mails, began, recorded)
    replayed = _replayed(settings, replay_from, database, progress, verdict)
    if database:
        check_database(settings, replayed, verdict)
    if sent is not None and verdict.ok:
        check_sent(mails, replayed, verdict)
        if verdict.ok:
            check_signatures(settings, mails, verdict)
    if not database and sent is None:
        verdict.notes.append(UNCHECKED)
    return verdict


@dataclass(frozen=True)
class _Given:
    """What a replay for `verify` starts from: the mail given, received and sent, and what
    the database says of the game's start and of its senders (213)."""

    inbound: Path
    messages: list[Archived]
    mails: list[Archived]
    began: datetime | None
    recorded: dict[str, Authentication]


def _replayed(
    settings: Settings, given: _Given, database: bool, progress: bool, verdict: Verdict
) -> Replayed:
    """The replay of the mail given, run as far as the record goes, its notes in `verdict`:
    the mail withheld, a stand-in it cannot follow, the senders judged as intake recorded,
    and where the record given by a reply to ARCHIVE should end."""
    replayed = Replayed()
    messages, mails, recorded = given.messages, given.mails, given.recorded
    until = until_of(settings, messages, mails, database)
    asked = archive_reply(given.inbound, mails) if not database else None
    if asked is not None:  # the record ends where the request for it took effect
        until = max([asked[1], *(m.at for m in messages if m.at is not None)])
    result = replay(
        settings,
        messages,
        until=until,
        render=True,
        inspect=replayed.keep,
        start=given.began,
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
    return replayed
