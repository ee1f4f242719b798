"""The first run: a starter config with comments, and `init` that leaves all or nothing (105, 111).

`starter_config` writes the TOML an operator edits before a real game (and the one `demo`
plays); `initialise` makes the inbox and sent Maildirs, then the store and the game. A failure
at any step leaves nothing in the database, so a second `init` starts clean.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from referee import rulebook
from referee.config import Settings, slug
from referee.mail.maildir import make_maildir
from referee.mail.sentbox import open_sent
from referee.private import private_database
from referee.service import Referee
from referee.store.store import Store, StoreError


def _q(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Seat:
    """A player as the starter config lists them."""

    name: str
    email: str
    king: bool = False


SAMPLE_PLAYERS = (
    Seat("Ada Lovelace", "ada@example.org", king=True),
    Seat("Bob Rossi", "bob@example.org"),
    Seat("Carla De Santis", "carla@example.org"),
)


def starter_config(
    name: str = "Nomic of the King",
    language: str = "en",
    players: Sequence[Seat] = SAMPLE_PLAYERS,
    start: datetime | None = None,
    headline: str = "A starter config for nomic-referee: edit the players, then run",
    game_extra: str = "",
) -> str:
    """A complete, commented config; every other key is in deploy/config.example.toml."""
    seats = ""
    for p in players:
        seats += f"[[players]]\nname = {_q(p.name)}\nemail = {_q(p.email)}\n"
        if p.name.count(" ") > 1:  # a two-word surname must be given
            seats += f"surname = {_q(p.name.split(' ', 1)[1])}\n"
        if p.king:
            seats += "king = true  # exactly one King (105, 214)\n"
        seats += "\n"
    when = (
        f'start = "{start.isoformat()}"  # the game starts then (default: at init)\n'
        if start is not None
        else '# start = "2026-12-01T09:00:00+00:00"  # default: the moment of init\n'
    )
    return f"""# {headline}
#   nomic-referee init game.toml && nomic-referee run game.toml
# Every key and its default: deploy/config.example.toml in the source, or the README.

[game]
name = {_q(name)}  # shown in every mail; may be corrected later
id = {_q(slug(name))}  # the game's key in the database and its Message-IDs: never change it
address = "referee@nomic.example"  # players write here; the referee sends from here
language = "{language}"  # "it" or "en": replies, notices and the built-in ruleset
timezone = "Europe/Rome"  # deadlines are shown in it; stored in UTC
{when}{game_extra}
# One table per player, in any order; turns go by surname (rule 201).
{seats}[database]
url = "sqlite:///nomic.db"  # beside this file; or postgresql+psycopg://user@host/db

[maildir]
path = "maildir"  # the inbox: drop mail in maildir/new/ (or deliver there)
sent = "sent"  # without [smtp], the referee's mail is written here

# To read mail from a server and send it, add [imap] and [smtp] sections:
# [imap]
# host = "imap.example.org"
# username = "referee"
# password_env = "NOMIC_IMAP_PASSWORD"
# [smtp]
# host = "smtp.example.org"
# username = "referee"
# password_env = "NOMIC_SMTP_PASSWORD"
#
# Or let your MTA hand the mail over directly (LMTP; docs/operations.md has Postfix's lines):
# [lmtp]
# address = "127.0.0.1"
# port = 8024
#
# Sign the referee's mail with DKIM, so a player can prove a result came from it (213):
# `nomic-referee dkim-key game.toml` makes the key and prints the DNS record to publish.
# [dkim]
# selector = "nomic"
# key_file = "dkim.pem"  # beside this file; keep it private
#
# With [imap] or [lmtp], every player's mail must prove its sender (DKIM, or the verdict of your own
# receiving server), or it is refused. `nomic-referee doctor game.toml` reads the latest mail
# in the inbox and prints the [auth] lines that fit your server; see docs/operations.md.
# [auth]
# trusted_authserv_id = ["mx.example.org"]  # your receiving server's Authentication-Results
# verify_dkim = true  # also check DKIM signatures here
# required = true  # false only for a test game: anyone could write as a player
"""


EXAMPLE_DOMAINS = ("example.org", "example.com", "example.net", "nomic.example")


def _is_example(address: str) -> bool:
    domain = address.rpartition("@")[2]
    return any(domain == d or domain.endswith("." + d) for d in EXAMPLE_DOMAINS)


def example_addresses(settings: Settings) -> list[str]:
    """A warning when addresses are left from the starter config: mail to them reaches no one."""
    found = [settings.game.address] if _is_example(settings.game.address) else []
    found += [p.email for p in settings.players if _is_example(p.email)]
    if not found:
        return []
    shown = ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
    return [
        f"example addresses left from the starter config ({shown}): mail to them reaches "
        "no one; put in the real ones before the first run"
    ]


@dataclass(frozen=True)
class Initialised:
    players: int
    rules: int
    first_turn: str


def initialise(settings: Settings, started: datetime, strict: bool = False) -> Initialised:
    """Folders first (they can fail without a trace), then the game in the store, or nothing.

    A value the ruleset's rules set plainly is carried by its rule, any other stays prose on
    its house value (111, 211); `strict` refuses, with the fix, a ruleset whose rules state a
    value the group has neither carried nor dismissed."""
    if strict:
        rulebook.load(
            settings.game.ruleset,
            settings.game.language,
            settings.folder,
            dict(settings.parameters),
            strict=True,
        )
    make_maildir(settings.maildir)
    if settings.smtp is None:
        open_sent(settings.sent)
    private_database(settings.database_url)
    store = Store(settings.database_url)
    try:
        store.create_schema()
        if store.game_id(settings.game.key) is not None:
            raise StoreError(
                f"the game {settings.game.name!r} (id {settings.game.key!r}) is already "
                "initialised in this database"
            )
        referee = Referee.create(store, settings, settings.game.start or started)
        state = referee.state
        first = next(
            (f"{p.name} <{p.email}>" for p in state.players if p.email == state.turn_player), "-"
        )
        return Initialised(len(state.players), len(state.rules), first)
    finally:
        store.close()
