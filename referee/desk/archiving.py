"""ARCHIVE's attachments: the mail received so far and the game's config (213).

The mail as a gzipped mbox (the players' whole, every other a stand-in: `record.archive_mbox`),
and the game's config without secrets. Past `[limits] archive_bytes`, the two are written on
the game's site under the SHA-256 of the mbox (`record.publish_archive`) and the reply links
them; without a site, the refusal sends the player to the operator's `export-mail`. The reply
names the record's last link and its head, the one `verify` must reach (the request's own
link comes after it).
"""

from __future__ import annotations

from pathlib import Path

from referee import record
from referee.config import Settings
from referee.core import outcomes
from referee.core.events import Outcome
from referee.core.model import GameState
from referee.mail import outgoing
from referee.store.store import UnitOfWork


def archive(
    settings: Settings, work: UnitOfWork, state: GameState, site: Path | None, link: int, head: str
) -> tuple[Outcome, tuple[outgoing.Attachment, ...]]:
    """ARCHIVE's answer and the files the reply carries (none when the site links them)."""
    shared = record.shared_mail(work, state)
    made = record.archive_mbox(work.mail_links(), shared, settings.game.language)
    size = record.shown_size(len(made.packed))
    config = record.public_config(settings, state.started_at)
    limit = settings.limits.archive_bytes
    if len(made.packed) > limit:
        url = settings.game.site_url.rstrip("/")
        if site is None or not url:
            most = record.shown_size(limit)
            return Outcome(outcomes.ArchiveTooLarge(size=size, limit=most)), ()
        folder = record.publish_archive(site, made, config)
        linked = outcomes.ArchiveLinked(
            messages=made.shared,
            withheld=made.withheld,
            size=size,
            mailbox=f"{url}/{folder}/{record.MAILBOX}",
            config=f"{url}/{folder}/{record.CONFIG}",
            link=link,
            head=head,
        )
        return Outcome(linked), ()
    files = (
        outgoing.Attachment(record.MAILBOX, "application/gzip", made.packed),
        outgoing.Attachment(record.CONFIG, 'text/plain; charset="utf-8"', config.encode()),
    )
    sent = outcomes.ArchiveSent(
        messages=made.shared, size=size, withheld=made.withheld, link=link, head=head
    )
    return Outcome(sent), files
