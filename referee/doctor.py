"""`nomic-referee doctor CONFIG`: is this game ready to run? One line per check (205, 213).

Each check prints `OK`, `WARN` or `FAIL`, what it found, and for a failure the fix: the config
and its files; the database (reachable, migrated, the game present); the clock; the IMAP
server (login over the configured security, the folders, IDLE, MOVE); the SMTP server (TLS,
login); with [oauth2], the token file (present, private, its token good, not near its end);
with [lmtp], the port `run` listens on; and sender authentication. For that last one it reads
the headers of the latest mail in the inbox, finds in each the `Received` line where the mail
entered the operator's domain, and lists the `Authentication-Results` headers written above
it (so by the receiving side; any below came with the mail and may be forged). It prints the
`[auth]` lines that would accept those mails, for the operator to confirm; it never changes
the config. A game without [imap] (a Maildir) has no such headers to read: its `auth` line says
whether sender authentication is on, and when it is off a WARN says so and what to set.

Nothing is written except, with `--create-folders`, the IMAP folders the referee moves mail to.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import re
import socket
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import parseaddr, parsedate_to_datetime
from pathlib import Path

import aiosmtplib
from sqlalchemy import text
from sqlalchemy.engine import make_url

from referee.config import (
    AuthConfig,
    DkimConfig,
    ImapConfig,
    LmtpConfig,
    OAuth2Config,
    Settings,
    SmtpConfig,
)
from referee.counts import counted
from referee.mail import oauth, servers
from referee.mail.auth import _authserv_id, authenticate, organisational_domain, warning
from referee.mail.imap import ImapInbox
from referee.mail.signing import Signer, SigningError
from referee.mail.smtp import log_in, tls_context
from referee.private import open_to_others
from referee.starter import example_addresses
from referee.store.store import Store

LATEST = 20  # inbox mails whose headers are read for the sender-authentication check
SKEW = timedelta(minutes=2)  # more clock difference than this is a failure


@dataclass(frozen=True)
class Check:
    """One line of the report: OK, WARN or FAIL; what was found; the fix for a failure."""

    name: str
    status: str  # "OK" | "WARN" | "FAIL"
    detail: str
    fix: str = ""
    notes: tuple[str, ...] = field(default=())  # lines printed under it (the [auth] lines)

    def lines(self) -> list[str]:
        head = f"{self.status:<4} {self.name}: {self.detail}"
        if self.fix and self.status != "OK":
            head += f"; fix: {self.fix}"
        return [head, *(f"       {note}" for note in self.notes)]


def ok(name: str, detail: str, notes: Sequence[str] = ()) -> Check:
    return Check(name, "OK", detail, notes=tuple(notes))


def warn(name: str, detail: str, fix: str = "", notes: Sequence[str] = ()) -> Check:
    return Check(name, "WARN", detail, fix, tuple(notes))


def failed(name: str, detail: str, fix: str = "") -> Check:
    return Check(name, "FAIL", detail, fix)


def examine(
    path: Path, settings: Settings, create_folders: bool = False, now: datetime | None = None
) -> list[Check]:
    """Every check, in order; the IMAP and SMTP ones only when those sections are there."""
    moment = now or datetime.now(UTC)
    checks = [*_config(path, settings), *_database(settings, moment)]
    if settings.oauth2 is not None:
        checks.append(_oauth2(settings.oauth2, moment))
    if settings.imap is not None:
        checks += asyncio.run(_imap(settings, settings.imap, create_folders, moment))
    else:
        checks.append(ok("inbox", f"the Maildir {settings.maildir} (no [imap])"))
        checks.append(_auth_off(settings))
    if settings.smtp is not None:
        checks += asyncio.run(_smtp(settings.smtp))
    else:
        checks.append(ok("smtp", f"no [smtp]: mail is written to the Maildir {settings.sent}"))
    if settings.dkim is not None:
        checks.append(_dkim(settings.dkim, settings.game.address.rpartition("@")[2]))
    if settings.lmtp is not None:
        checks.append(_lmtp(settings.lmtp))
    checks.append(_privacy(settings))
    return checks


def _privacy(settings: Settings) -> Check:
    """What holds players' mail and the game's keys is closed to other local users: the
    SQLite database, the Maildirs, the DKIM key, the backups (issue 29, item 5)."""
    database = make_url(settings.database_url)
    paths = [settings.maildir, settings.sent]
    if database.get_backend_name() == "sqlite" and database.database not in (None, "", ":memory:"):
        paths += [Path(str(database.database)), Path(str(database.database)).parent]
    paths += [settings.dkim.key_file] if settings.dkim is not None else []
    backups = settings.retention.backups_folder
    paths += [backups] if backups is not None else []
    found = open_to_others(paths)
    if not found:
        return ok("privacy", "the database, Maildirs, keys and backups are closed to other users")
    named = ", ".join(f"{path} ({mode:04o})" for path, mode in found)
    fixes = "; ".join(f"chmod {'700' if p.is_dir() else '600'} {p}" for p, _ in found)
    return warn("privacy", f"other local users may read the players' mail or keys: {named}", fixes)


def _auth_off(settings: Settings) -> Check:
    """A game without [imap] has no inbox headers to read: say whether mail must show who
    wrote it, and what to set when it need not (verify review: doctor said nothing)."""
    unguarded = warning(settings)
    if unguarded is None:
        trusted = ", ".join(settings.auth.trusted_authserv_id) or "none"
        how = "DKIM checked here" if settings.auth.verify_dkim else "DKIM not checked here"
        return ok("auth", f"sender authentication is on (trusted servers: {trusted}; {how})")
    return warn(
        "auth",
        unguarded.removesuffix(" See docs/operations.md."),
        "set [auth] required = true, with trusted_authserv_id = [your receiving server's "
        "authserv-id] or verify_dkim = true (docs/operations.md)",
    )


def _lmtp(config: LmtpConfig) -> Check:
    """`run` can listen where [lmtp] says: the port is free to bind, or a running referee
    already serves it (its greeting says so); anything else there is a failure."""
    where = f"{config.address}:{config.port}"
    try:
        infos = socket.getaddrinfo(config.address, config.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return failed("lmtp", f"{where}: unknown address ({exc.strerror})", "fix [lmtp] address")
    family, kind, _, _, address = infos[0]
    with socket.socket(family, kind) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as `run` binds it
        try:
            probe.bind(address)
        except OSError as exc:
            busy = exc.errno == errno.EADDRINUSE
            if not busy:
                return failed(
                    "lmtp",
                    f"{where} cannot be bound ({exc.strerror})",
                    "an address of this machine in [lmtp] address, and a port above 1023 "
                    "unless the service may bind low ports",
                )
        else:
            return ok("lmtp", f"{where} is free: run will take mail from the MTA there")
    greeting = _greeting(address, family)
    if "nomic-referee" in greeting:
        return ok("lmtp", f"{where} is served by a running referee ({greeting})")
    return failed(
        "lmtp",
        f"{where} is taken by another program" + (f" ({greeting})" if greeting else ""),
        "choose a free port in [lmtp] port, and the same in Postfix's transport",
    )


def _greeting(address: tuple[object, ...], family: int) -> str:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as client:
            client.settimeout(5)
            client.connect(address)
            return client.recv(512).decode("ascii", "replace").strip().splitlines()[0]
    except (OSError, IndexError):
        return ""


def _oauth2(config: OAuth2Config, now: datetime) -> Check:
    """The token file is private, its refresh token gets an access token, and it is not about
    to expire."""
    sign_in = "nomic-referee oauth CONFIG"
    path = config.token_file
    if not path.exists():
        return failed("oauth2", f"no token file {path}", f"{sign_in} (signs in, saves it)")
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        return failed(
            "oauth2",
            f"{path} is readable by others (mode {mode:04o}): it holds the mailbox's key",
            f"chmod 600 {path}",
        )
    try:
        tokens, warning = oauth.check(config, now)
    except oauth.TokenError as exc:
        return failed("oauth2", str(exc), sign_in)
    if warning:
        return warn("oauth2", warning, sign_in)
    until = f"{tokens.expires_at:%Y-%m-%d %H:%M} UTC" if tokens.expires_at else "its expiry"
    lasts = (
        f"; the refresh token lasts until {tokens.refresh_expires_at:%Y-%m-%d} UTC"
        if tokens.refresh_expires_at
        else ""
    )
    return ok("oauth2", f"{path}: an access token valid until {until}{lasts}")


def _dkim(
    config: DkimConfig, domain: str, lookup: Callable[..., bytes | None] | None = None
) -> Check:
    """The signing key reads and signs, and the DNS publishes its public half (213)."""
    try:
        signer = Signer.load(config, domain)
    except SigningError as exc:
        return failed("dkim", str(exc), "make the key with 'nomic-referee dkim-key CONFIG'")
    published = _published(signer.record_name, lookup)
    wanted = signer.record.replace(" ", "")
    record = f'{signer.record_name}. IN TXT "{signer.record}"'
    if published is None:
        return warn(
            "dkim",
            f"mail is signed as {signer.domain} (selector {signer.selector}); the DNS could "
            "not be asked from here",
            f"make sure this record is published: {record}",
        )
    if published.replace(" ", "") != wanted:
        why = "no record" if not published else "another key"
        return failed(
            "dkim",
            f"{signer.record_name} has {why}: players cannot check the signatures",
            f"publish {record}",
        )
    return ok("dkim", f"mail is signed as {signer.domain}, and {signer.record_name} matches")


def _published(name: str, lookup: Callable[..., bytes | None] | None) -> str | None:
    """The TXT record at `name` as dkimpy reads it ("" when there is none); None when the
    DNS cannot be asked from here (no resolver library, no network)."""
    try:
        if lookup is None:
            from dkim.dnsplug import get_txt

            lookup = get_txt
        answer = lookup(name.encode("ascii"))
    except Exception:  # the resolver's own errors (timeouts, no configuration): say so
        return None
    if not answer:
        return ""
    return answer.decode("ascii", "replace") if isinstance(answer, bytes) else str(answer)


# ----- the config and its files ---------------------------------------------------------------


def _config(path: Path, settings: Settings) -> list[Check]:
    game = settings.game
    found = [
        ok(
            "config",
            f"{path}: game {game.name!r} (id {game.key!r}), {len(settings.players)} players, "
            f"King {settings.king.email}",
        )
    ]
    folders = [("[maildir] path", settings.maildir)]
    if settings.smtp is None:
        folders.append(("[maildir] sent", settings.sent))
    for key, folder in folders:
        if not (folder / "new").is_dir():
            found.append(
                failed("files", f"{key} {folder} is not a Maildir", "nomic-referee init CONFIG")
            )
    for key, target in (("[game] archive", game.archive), ("[game] site", game.site)):
        if target is not None and not _writable(target):
            found.append(failed("files", f"{key} {target} cannot be written", "create it"))
    if game.ruleset != "builtin" and not (settings.folder / game.ruleset).exists():
        found.append(failed("files", f"[game] ruleset {game.ruleset} not found", "fix the path"))
    if len(found) == 1:
        found.append(ok("files", "the Maildirs and folders the config names are in place"))
    for line in example_addresses(settings):  # what `init` and `status` warn of, here too
        found.append(warn("addresses", line, "put the game's and the players' real addresses in"))
    return found


def _writable(folder: Path) -> bool:
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            return False
        probe = probe.parent
    import os

    return probe.is_dir() and os.access(probe, os.W_OK)


# ----- the database and the clock -------------------------------------------------------------


def _database(settings: Settings, now: datetime) -> list[Check]:
    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite" and url.database and not Path(url.database).exists():
        return [
            failed("database", f"{shown}: no such file", f"nomic-referee init {settings.folder}")
        ]
    store = Store(settings.database_url)
    try:
        try:
            has_schema = store.has_schema()
        except Exception as exc:  # the server is down, the credentials are wrong
            first = str(getattr(exc, "orig", None) or exc).strip().splitlines()
            return [
                failed(
                    "database",
                    f"{shown}: cannot connect ({first[0] if first else exc.__class__.__name__})",
                    "check [database] url and that the server runs",
                )
            ]
        if not has_schema:
            return [failed("database", f"{shown}: no tables", "nomic-referee init CONFIG")]
        found = [ok("database", f"{shown}: reachable")]
        pending = store.pending_migrations()
        if pending:
            found.append(
                failed(
                    "migrations",
                    f"{len(pending)} pending ({', '.join(pending)})",
                    "stop the service, nomic-referee backup CONFIG FILE, "
                    "then nomic-referee migrate CONFIG",
                )
            )
            return found
        found.append(ok("migrations", "the database is at this version's schema"))
        game_id = store.game_id(settings.game.key)
        if game_id is None:
            from referee.service import missing_game

            found.append(failed("game", missing_game(store, settings)))
            return found
        found.append(ok("game", f"{settings.game.key!r} is in the database"))
        found.append(_clock(store, game_id, now))
        return found
    finally:
        store.close()


def _clock(store: Store, game_id: int, now: datetime) -> Check:
    """The clock must not stand before the log, nor far from the database server's."""
    latest = store.last_event_at(game_id)
    if latest is not None:
        latest = latest if latest.tzinfo else latest.replace(tzinfo=UTC)
        if latest - now > SKEW:
            return failed(
                "clock",
                f"this machine's clock ({now:%Y-%m-%d %H:%M:%S} UTC) is before the game's last "
                f"event ({latest:%Y-%m-%d %H:%M:%S} UTC)",
                "set the clock right (systemd-timesyncd or chrony)",
            )
    if store.engine.dialect.name == "postgresql":
        with store.engine.connect() as connection:
            theirs = connection.execute(text("SELECT now()")).scalar_one()
        skew = abs(theirs - now)
        if skew > SKEW:
            return failed(
                "clock",
                f"this machine and the database server differ by {skew.total_seconds():.0f} s",
                "run a time service (systemd-timesyncd or chrony) on both",
            )
        return ok("clock", f"in step with the database server ({skew.total_seconds():.1f} s)")
    return ok("clock", f"{now:%Y-%m-%d %H:%M:%S} UTC, not before the game's last event")


# ----- IMAP ---------------------------------------------------------------------------------


async def _imap(settings: Settings, config: ImapConfig, create: bool, now: datetime) -> list[Check]:
    inbox = ImapInbox(config)
    where = servers.where("IMAP", config.host, config.port)
    try:
        await asyncio.wait_for(inbox.connect(create_folders=create), 60)
    except (ConnectionError, OSError, TimeoutError) as exc:
        line = str(exc) or exc.__class__.__name__
        return [failed("imap", line, _imap_fix(line, config))]
    try:
        how = "XOAUTH2, " if config.auth == "oauth2" else ""
        found = [
            ok(
                "imap",
                f"{where}: logged in as {config.username} ({how}{_security(config.security)})",
            )
        ]
        found += await _folders(inbox, config, create)
        found.append(
            ok("idle", "the server pushes new mail (IDLE)")
            if inbox.can_idle
            else warn(
                "idle",
                f"no IDLE: the inbox is polled every {config.poll_seconds} s",
                "lower [imap] poll_seconds for quicker replies",
            )
        )
        found.append(
            ok("move", "handled mail is moved in one step (MOVE)")
            if inbox.can_move
            else warn("move", "no MOVE: handled mail is copied, then expunged", "none needed")
        )
        headers = await _latest_headers(inbox)
        found += sender_authentication(headers, settings.auth, now)
        return found
    finally:
        await inbox.close()


def _security(security: str) -> str:
    return {"tls": "TLS", "starttls": "STARTTLS", "none": "no TLS, loopback"}[security]


def _imap_fix(line: str, config: ImapConfig) -> str:
    if "OAuth2" in line or "XOAUTH2" in line:
        return "check [imap] username (the account the token was made for); nomic-referee oauth"
    if "LOGIN" in line or "AUTHENTICATE" in line:
        return "check [imap] username and its password (password_env)"
    if "[imap]" in line:
        return ""  # the line says which key to change
    return "check [imap] host, port and security"


async def _folders(inbox: ImapInbox, config: ImapConfig, create: bool) -> list[Check]:
    assert inbox.client is not None
    missing = []
    for folder in (config.folder, config.processed, config.quarantine):
        response = await inbox.client.status(_quoted(folder), "(MESSAGES)")
        if response.result != "OK":
            missing.append(folder)
    if missing:
        return [
            failed(
                "folders",
                f"missing: {', '.join(missing)}",
                "nomic-referee doctor --create-folders CONFIG (or create them in a mail client)",
            )
        ]
    made = " (created now)" if create else ""
    return [
        ok("folders", f"{config.folder}, {config.processed} and {config.quarantine} exist{made}")
    ]


def _quoted(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


async def _latest_headers(inbox: ImapInbox) -> list[bytes]:
    uids = await inbox.waiting_uids()
    if not uids:
        return []
    return [raw for _, raw in await inbox.fetch(uids[-LATEST:], "BODY.PEEK[HEADER]")]


# ----- sender authentication, from the latest mail ------------------------------------------

_FROM = re.compile(r"^\s*from\s+(\S+)(?:\s+\(([^)]*)\))?", re.I)
_BY = re.compile(r"\bby\s+([^\s;()]+)", re.I)
_IP = re.compile(r"\[(?:IPv6:)?([0-9A-Fa-f:.]+)\]")


@dataclass(frozen=True)
class Entry:
    """Where one mail entered the operator's domain, and what was written above that."""

    receiver: str  # the host of the entry Received line ("by ...")
    authserv: tuple[str, ...]  # the authserv-ids of the Authentication-Results above it
    below: tuple[str, ...]  # authserv-ids of those below it: came with the mail, not believed
    dkim: tuple[str, ...]  # the d= of each DKIM-Signature


def _local(text: str) -> bool:
    """A hand-over inside the receiving machine: from localhost or a loopback address."""
    head = _FROM.match(text)
    if head is None:
        return True  # a Received line without "from" is a local delivery (Dovecot, procmail)
    words = f"{head.group(1)} {head.group(2) or ''}".lower()
    if "localhost" in words:
        return True
    for found in [*_IP.findall(words), head.group(1).strip("[]")]:
        try:
            if ipaddress.ip_address(found).is_loopback:
                return True
        except ValueError:
            continue
    return bool(re.search(r"\bwith\s+(lmtp|lmtps|local)\b", text, re.I))


def entry_of(headers: Message) -> Entry | None:
    """The Received line where the mail came in from outside, and the verdicts above it.

    Lines are read top-down (newest first). Local hand-overs (LMTP, from localhost) are passed
    by; the first line whose sender is outside the receiving host's organisational domain is
    the entry. Without one, the lowest Received line counts.
    """
    items = [(name.lower(), " ".join(str(value).split())) for name, value in headers.raw_items()]
    received = [(i, value) for i, (name, value) in enumerate(items) if name == "received"]
    if not received:
        return None
    entry_index, receiver = received[-1][0], ""
    for index, value in received:
        by = _BY.search(value)
        host = by.group(1).lower() if by else ""
        receiver = receiver or host
        if _local(value):
            continue
        head = _FROM.match(value)
        sender = head.group(1).lower() if head else ""
        if organisational_domain(sender) != organisational_domain(host) or not host:
            entry_index, receiver = index, host or receiver
            break
    results = [
        (i, _authserv_id(value))
        for i, (name, value) in enumerate(items)
        if name == "authentication-results"
    ]
    signatures = [value for name, value in items if name == "dkim-signature"]
    signers = tuple(m.group(1).lower() for s in signatures if (m := re.search(r"\bd=([^;\s]+)", s)))
    return Entry(
        receiver,
        tuple(dict.fromkeys(a for i, a in results if i < entry_index and a)),
        tuple(dict.fromkeys(a for i, a in results if i > entry_index and a)),
        signers,
    )


def sender_authentication(raws: list[bytes], auth: AuthConfig, now: datetime) -> list[Check]:
    """What the latest mails say about the receiving server, and the [auth] lines to use."""
    if not raws:
        return [
            warn(
                "auth",
                "the inbox is empty: no mail to read the receiving server's headers from",
                "send one mail from a player's account, then run doctor again",
            )
        ]
    parser = BytesHeaderParser(policy=compat32)
    entries = []
    senders = []
    for raw in raws:
        headers = parser.parsebytes(raw)
        entry = entry_of(headers)
        if entry is not None:
            entries.append(entry)
        senders.append(parseaddr(str(headers.get("From", "")))[1].lower())
    ids = Counter(a for e in entries for a in e.authserv)
    receivers = Counter(e.receiver for e in entries if e.receiver)
    forged = sorted({a for e in entries for a in e.below} - set(ids))
    signed = sum(1 for e in entries if e.dkim)
    found = [
        f"{counted(len(raws), 'latest mail')} read; "
        f"received by {', '.join(receivers) or 'an unnamed host'}"
    ]
    if forged:
        found.append(f"ignored (below the entry line, came with the mail): {', '.join(forged)}")
    found.append(f"{signed} of {len(raws)} carry a DKIM signature")
    if not ids:
        detail = "; ".join(found) + "; no Authentication-Results written by the receiving side"
        fix = (
            "have the receiving server check DKIM/DMARC (OpenDKIM, OpenDMARC, rspamd), "
            "or rely on DKIM verified here"
        )
        if not signed:
            return [*_clock_of_mail(raws, now), failed("auth", detail, fix)]
        lines = ["[auth]", "verify_dkim = true  # no Authentication-Results from your server"]
        return [*_clock_of_mail(raws, now), warn("auth", detail, fix, lines)]
    chosen = [name for name, _ in ids.most_common()]
    suggested = AuthConfig(True, tuple(chosen), auth.verify_dkim)
    passing = 0
    for raw, sender in zip(raws, senders, strict=True):
        if sender and authenticate(raw, sender, replace(suggested, verify_dkim=False)).ok:
            passing += 1
    found.append(f"Authentication-Results written by {', '.join(chosen)}")
    found.append(f"{passing} of {len(raws)} pass with these lines")
    lines = [
        "[auth]",
        "trusted_authserv_id = [" + ", ".join(f'"{c}"' for c in chosen) + "]",
        "verify_dkim = true",
    ]
    current = set(auth.trusted_authserv_id)
    same = current == set(chosen)
    return [
        *_clock_of_mail(raws, now),
        Check(
            "auth",
            "OK" if same else "WARN",
            "; ".join(found) + ("" if same else "; confirm, then put these lines in the config"),
            "" if same else "copy the [auth] lines below into the config",
            tuple(lines),
        ),
    ]


def _clock_of_mail(raws: list[bytes], now: datetime) -> list[Check]:
    """The newest Received time must not lie ahead of this machine's clock."""
    parser = BytesHeaderParser(policy=compat32)
    times = []
    for raw in raws:
        top = parser.parsebytes(raw).get("Received")
        if top and ";" in str(top):
            try:
                times.append(parsedate_to_datetime(str(top).rsplit(";", 1)[1].strip()))
            except (TypeError, ValueError):
                continue
    ahead = [t for t in times if t.tzinfo is not None and t - now > SKEW]
    if ahead:
        return [
            failed(
                "mail clock",
                f"the mail server stamps mail {(max(ahead) - now).total_seconds():.0f} s ahead "
                "of this machine",
                "run a time service (systemd-timesyncd or chrony)",
            )
        ]
    return []


# ----- SMTP ---------------------------------------------------------------------------------


async def _smtp(config: SmtpConfig) -> list[Check]:
    where = servers.where("SMTP", config.host, config.port)
    client = aiosmtplib.SMTP(
        hostname=config.host,
        port=config.port,
        use_tls=config.security == "tls",
        start_tls=config.security == "starttls",
        tls_context=tls_context(config.ca_file) if config.security != "none" else None,
        timeout=min(config.timeout, 30.0),
    )
    try:
        await client.connect()
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
        line = servers.problem("SMTP", config.host, config.port, cause, config.ca_file)
        return [failed("smtp", line, "check [smtp] host, port, security and ca_file")]
    try:
        tls = client.get_transport_info("ssl_object")
        version = tls.version() if tls is not None else "no TLS"
        found = [ok("smtp tls", f"{where}: {version}, security = {config.security!r}")]
        if config.username:
            oauth2 = config.auth == "oauth2"
            try:
                await log_in(client, config)
            except (aiosmtplib.SMTPException, oauth.TokenError) as exc:
                fix = (
                    "check [smtp] username (the account the token was made for); "
                    "nomic-referee oauth CONFIG"
                    if oauth2
                    else "check [smtp] username and its password (password_env)"
                )
                found.append(failed("smtp login", f"{where}: {exc}", fix))
                return found
            how = " (XOAUTH2)" if oauth2 else ""
            found.append(ok("smtp login", f"logged in as {config.username}{how}"))
        else:
            found.append(ok("smtp login", "no [smtp] username: sending without logging in"))
        return found
    finally:
        try:
            await client.quit()
        except (aiosmtplib.SMTPException, OSError, TimeoutError):
            client.close()
