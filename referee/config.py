"""The operator's TOML config, loaded once and validated at start (rules 105, 201 for players).

Every key is documented in `deploy/config.example.toml`; an unknown key, a missing one, or a
value of the wrong kind is a `ConfigError` with a one-line message naming the key.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from referee.core import params

# `run`'s exit status for a config it cannot use (sysexits' EX_CONFIG): the systemd unit's
# RestartPreventExitStatus= names it, since restarting every few seconds cannot mend a file.
EXIT_CONFIG = 78


class ConfigError(ValueError):
    """The config file cannot be used; the message says which key and why."""


@dataclass(frozen=True)
class PlayerConfig:
    name: str
    email: str
    surname: str
    king: bool


@dataclass(frozen=True)
class GameConfig:
    name: str
    address: str
    language: str = "it"
    ruleset: str = "builtin"
    timezone: str = "Europe/Rome"
    start: datetime | None = None
    max_mail_bytes: int = 5_000_000
    archive: Path | None = None
    site: Path | None = None  # the static website `run` keeps up to date
    site_url: str = ""  # where the website is published: debate mail links its page there
    id: str = ""  # the game's key in the database and its Message-IDs; see `key`
    # Seconds a deadline waits after its time, for the mail server's push of mail delivered
    # just before it; the inbox is read before it fires either way (203, 213).
    deadline_grace: int = 2
    # Other addresses of the same mailbox (a domain alias, an old address): mail written to
    # any of them is written to this game (issue 15), and mail from them is the game's own.
    aliases: tuple[str, ...] = ()

    @property
    def addresses(self) -> tuple[str, ...]:
        """The game's address, then its aliases, lower-case."""
        return (self.address, *self.aliases)

    @property
    def key(self) -> str:
        """The game's stable identity: `[game] id`, else the name made a slug.

        The display name may change (a typo fixed); the key never does, so the database row,
        the Message-IDs and the threads stay the game's own.
        """
        return self.id or slug(self.name)


def slug(text: str) -> str:
    """`Nomic of the King` -> `nomic-of-the-king`: lower-case letters, digits and hyphens."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return cleaned or "game"


@dataclass(frozen=True)
class OAuth2Config:
    """[oauth2]: the provider's endpoints and the app registered there; the refresh token is
    kept in `token_file` (mode 0600, rewritten whenever the provider rotates it), never here."""

    token_url: str
    device_url: str
    client_id: str
    token_file: Path
    scope: str = ""
    client_secret: str = field(default="", repr=False)  # from client_secret_env, if any
    ca_file: str = ""  # the endpoints' CA, when not the system's
    warn_days: int = 14  # a refresh token expiring sooner than this is warned of


@dataclass(frozen=True)
class ImapConfig:
    host: str
    port: int = 993
    username: str = ""
    password: str = field(default="", repr=False)
    security: str = "tls"
    folder: str = "INBOX"
    processed: str = "Processed"
    quarantine: str = "Quarantine"
    poll_seconds: int = 60
    idle_seconds: int = 300
    ca_file: str = ""
    auth: str = "password"  # "password" (LOGIN) or "oauth2" (XOAUTH2 with [oauth2])
    oauth2: OAuth2Config | None = None


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int = 587
    username: str = ""
    password: str = field(default="", repr=False)
    security: str = "starttls"
    ca_file: str = ""
    concurrency: int = 4
    timeout: float = 30.0
    auth: str = "password"  # "password" (AUTH PLAIN/LOGIN) or "oauth2" (XOAUTH2 with [oauth2])
    oauth2: OAuth2Config | None = None


@dataclass(frozen=True)
class AuthConfig:
    """Sender authentication (see referee/mail/auth.py and docs/operations.md)."""

    required: bool = False  # the loaded default: true once [imap] is configured
    trusted_authserv_id: tuple[str, ...] = ()  # receiving servers whose results are believed
    verify_dkim: bool = True  # also verify DKIM signatures here


@dataclass(frozen=True)
class LogConfig:
    """How `run` logs: the level, and text lines or JSON lines (one object a line)."""

    level: str = "info"  # debug | info | warning | error
    format: str = "text"  # text | json


@dataclass(frozen=True)
class MetricsConfig:
    """Prometheus metrics of `run` on http://address:port/metrics; port 0: none."""

    port: int = 0
    address: str = "127.0.0.1"


@dataclass(frozen=True)
class DkimConfig:
    """DKIM signing of the referee's mail (213): the key file (PEM, RSA), its selector, and
    the signing domain (empty: the domain of the game's address)."""

    selector: str
    key_file: Path
    domain: str = ""


@dataclass(frozen=True)
class RetentionConfig:
    """[retention]: what `nomic-referee prune` deletes. Mail in the Processed folder older than
    `processed_days` (0: kept forever); of the backups in `backups_folder` (None: none), all
    but the newest `backups`. Quarantined mail is never pruned: an operator must look at it."""

    processed_days: int = 90
    backups_folder: Path | None = None
    backups: int = 14


@dataclass(frozen=True)
class LmtpConfig:
    """Direct delivery: `run` takes mail from the MTA over LMTP on address:port."""

    address: str = "127.0.0.1"
    port: int = 8024


@dataclass(frozen=True)
class LimitsConfig:
    """What one mail, and one sender in one day (UTC), may ask of the referee."""

    max_body_chars: int = 200_000  # a longer body is refused whole, never cut
    max_header_chars: int = 4_000  # Subject, From, Sender, To, Cc, Date: longer, refused whole
    commands_per_mail: int = 50
    appeals_per_mail: int = 3  # APPEAL and ACCUSE opened by one mail
    appeals_per_day: int = 5  # and by one player in one day (UTC); more wait for the next day
    appeals_waiting: int = 10  # how many of one player's may wait (0: none; more are refused)
    answer_chars: int = 300_000  # answers to questions in one reply; past it, ask again
    mails_per_mail: int = 300  # mails one inbound mail may cause to be queued
    mails_per_day: int = 100  # per sender; beyond it one note, then silence until tomorrow
    commands_per_day: int = 300  # per sender
    empty_replies_per_day: int = 3  # "no command found" answers per sender (stops loops)
    stranger_notes_per_day: int = 20  # notes to unknown senders, all of them together
    joins_per_day: int = 10  # requests to join (confirmation mails) from strangers, all together
    debate_chars: int = 8_000  # 112: the longest words relayed to the table in one message
    debates_per_day: int = 20  # 112: messages of debate relayed per author and day (UTC)
    archive_bytes: int = 5_000_000  # ARCHIVE (213): the largest record attached (compressed)
    ruleset_chars: int = 100_000  # 205: a longer ruleset mail goes whole as an attachment


@dataclass(frozen=True)
class Settings:
    game: GameConfig
    players: tuple[PlayerConfig, ...]
    database_url: str
    maildir: Path
    imap: ImapConfig | None
    smtp: SmtpConfig | None
    auth: AuthConfig
    parameters: tuple[tuple[str, str], ...]
    folder: Path
    limits: LimitsConfig = LimitsConfig()
    sent: Path = Path("sent")  # without [smtp]: the Maildir the referee's mail is written to
    log: LogConfig = LogConfig()
    metrics: MetricsConfig = MetricsConfig()
    dkim: DkimConfig | None = None
    lmtp: LmtpConfig | None = None  # None: no LMTP listener
    operator: str = ""  # told when a player's mail bounces; "" for the King
    oauth2: OAuth2Config | None = None  # [oauth2], for [imap]/[smtp] auth = "oauth2"
    retention: RetentionConfig = RetentionConfig()  # [retention], for `prune`

    @property
    def king(self) -> PlayerConfig:
        return next(p for p in self.players if p.king)


_SECTIONS = {
    "game",
    "players",
    "database",
    "imap",
    "smtp",
    "parameters",
    "maildir",
    "auth",
    "limits",
    "log",
    "metrics",
    "dkim",
    "lmtp",
    "oauth2",
    "retention",
}


def _table(data: dict[str, Any], name: str, allowed: set[str], where: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"[{where}] must be a table")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ConfigError(f"[{where}]: unknown key {unknown[0]!r}")
    return value


def _str(table: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = table.get(key, default)
    if value is None:
        raise ConfigError(f"[{where}] {key} is required")
    if not isinstance(value, str):
        raise ConfigError(f"[{where}] {key} must be text")
    return value


def _int(table: dict[str, Any], key: str, where: str, default: int) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"[{where}] {key} must be a whole number")
    return value


def _secret(table: dict[str, Any], where: str, needed: bool = True) -> str:
    if "password" in table and "password_env" in table:
        raise ConfigError(f"[{where}] give password or password_env, not both")
    if "password_env" in table:
        name = _str(table, "password_env", where)
        value = os.environ.get(name)
        if value is None and needed:
            raise ConfigError(f"[{where}] password_env: environment variable {name} is not set")
        return value or ""
    return _str(table, "password", where, "")


def _security(table: dict[str, Any], where: str, default: str) -> str:
    value = _str(table, "security", where, default)
    if value not in ("tls", "starttls", "none"):
        raise ConfigError(f"[{where}] security must be 'tls', 'starttls' or 'none'")
    return value


def _email(value: str, where: str) -> str:
    address = value.strip().lower()
    local, _, domain = address.partition("@")
    if not local or "." not in domain or " " in address or not address.isascii():
        raise ConfigError(f"{where}: {value!r} is not an email address")
    return address


def email_address(value: str, where: str) -> str:
    """An address as the referee keeps it (lower case), or ConfigError naming `where`."""
    return _email(value, where)


def load_settings(path: Path, secrets: bool = True) -> Settings:
    """The config at `path`; every error names the file.

    `secrets=False` is for the commands that never log in to a mail server (status, outbox,
    site, archive): a `password_env` whose variable is unset then reads as no password.
    """
    try:
        return _load(path, secrets)
    except ConfigError as exc:
        text = str(exc)
        if str(path) in text:
            raise
        raise ConfigError(f"{path}: {text}") from exc


def load_oauth2(path: Path) -> OAuth2Config | None:
    """[oauth2] alone, with its client secret read: for `oauth`, which talks to the provider
    and never to the mail servers (their passwords are not asked for)."""
    try:
        return _oauth2(_read(path), path.resolve().parent, True)
    except ConfigError as exc:
        text = str(exc)
        raise ConfigError(text if str(path) in text else f"{path}: {text}") from exc


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


DATA_VARIABLE = "NOMIC_REFEREE_DATA"


def data_folder(config_folder: Path) -> Path:
    """Where the relative paths of what the referee writes lead: the SQLite database, the
    Maildirs, the archive, the site, the DKIM key, the OAuth token. The config's own folder,
    unless NOMIC_REFEREE_DATA names another: the container's /config is read-only, its /data
    is not. What the referee only reads (a ruleset folder) stays beside the config."""
    named = os.environ.get(DATA_VARIABLE, "").strip()
    if not named:
        return config_folder
    folder = Path(named).expanduser()
    if not folder.is_absolute():
        raise ConfigError(f"{DATA_VARIABLE} must be an absolute path, not {named!r}")
    return folder


def _load(path: Path, secrets: bool) -> Settings:
    data = _read(path)
    unknown = sorted(set(data) - _SECTIONS)
    if unknown:
        raise ConfigError(f"unknown section or key {unknown[0]!r}")
    folder = path.resolve().parent
    written = data_folder(folder)
    oauth2 = _oauth2(data, written, secrets)
    imap = _imap(data, secrets, oauth2)
    lmtp = _lmtp(data)
    return Settings(
        game=_game(data, folder, written),
        players=_players(data),
        database_url=_database(data, written),
        maildir=_maildir(data, written),
        imap=imap,
        smtp=_smtp(data, secrets, oauth2),
        auth=_auth(data, imap is not None or lmtp is not None),
        parameters=_parameters(data),
        folder=folder,
        limits=_limits(data),
        sent=_maildir(data, written, "sent"),
        log=_log(data),
        metrics=_metrics(data),
        dkim=_dkim(data, written),
        lmtp=lmtp,
        operator=_operator(data),
        oauth2=oauth2,
        retention=_retention(data, written),
    )


def _retention(data: dict[str, Any], folder: Path) -> RetentionConfig:
    t = _table(data, "retention", {"processed_days", "backups_folder", "backups"}, "retention")
    days = _int(t, "processed_days", "retention", 90)
    kept = _int(t, "backups", "retention", 14)
    if days < 0 or kept < 1:
        raise ConfigError("[retention] processed_days must be 0 or more, backups 1 or more")
    backups = _str(t, "backups_folder", "retention", "")
    return RetentionConfig(days, _archive(backups, folder), kept)


_SELECTOR = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})*")


def _dkim(data: dict[str, Any], folder: Path) -> DkimConfig | None:
    if "dkim" not in data:
        return None
    t = _table(data, "dkim", {"selector", "key_file", "domain"}, "dkim")
    selector = _str(t, "selector", "dkim")
    if not _SELECTOR.fullmatch(selector):
        raise ConfigError(f"[dkim] selector {selector!r}: letters, digits, '-' and '.' only")
    domain = _str(t, "domain", "dkim", "").strip().lower()
    if domain and not _SELECTOR.fullmatch(domain):
        raise ConfigError(f"[dkim] domain {domain!r} is not a domain name")
    key_file = Path(_str(t, "key_file", "dkim")).expanduser()
    return DkimConfig(selector, key_file if key_file.is_absolute() else folder / key_file, domain)


def _lmtp(data: dict[str, Any]) -> LmtpConfig | None:
    """[lmtp]: the address and port `run` listens on for mail from the MTA."""
    if "lmtp" not in data:
        return None
    t = _table(data, "lmtp", {"address", "port"}, "lmtp")
    port = _int(t, "port", "lmtp", 8024)
    if not 1 <= port <= 65535:
        raise ConfigError("[lmtp] port must be between 1 and 65535")
    address = _str(t, "address", "lmtp", "127.0.0.1").strip()
    if not address:
        raise ConfigError('[lmtp] address must name an interface, e.g. "127.0.0.1"')
    return LmtpConfig(address, port)


def _operator(data: dict[str, Any]) -> str:
    """[game] operator: who is told of bounced mail to players (default: the King)."""
    game = data.get("game")
    value = game.get("operator", "") if isinstance(game, dict) else ""
    if not isinstance(value, str):
        raise ConfigError("[game] operator must be text")
    return _email(value, "[game] operator") if value.strip() else ""


def _metrics(data: dict[str, Any]) -> MetricsConfig:
    t = _table(data, "metrics", {"port", "address"}, "metrics")
    port = _int(t, "port", "metrics", 0)
    if not 0 <= port <= 65535:
        raise ConfigError("[metrics] port must be between 1 and 65535 (0: no metrics)")
    return MetricsConfig(port, _str(t, "address", "metrics", "127.0.0.1"))


def _log(data: dict[str, Any]) -> LogConfig:
    t = _table(data, "log", {"level", "format"}, "log")
    level = _str(t, "level", "log", "info").lower()
    if level not in ("debug", "info", "warning", "error"):
        raise ConfigError("[log] level must be 'debug', 'info', 'warning' or 'error'")
    form = _str(t, "format", "log", "text").lower()
    if form not in ("text", "json"):
        raise ConfigError("[log] format must be 'text' or 'json'")
    return LogConfig(level, form)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _name(value: str, where: str) -> str:
    """A name that goes into mail headers: no control characters (a newline is a new header)."""
    found = _CONTROL.search(value)
    if found:
        raise ConfigError(f"{where}: contains a control character ({found.group(0)!r})")
    return value


def ruleset_language(spec: str, folder: Path) -> str:
    """The language a ruleset says it is written in ("it", "en"; "" when it does not say):
    `language` in an imported folder's ruleset.toml or an archive's archive.toml, or, for a
    document named directly, the language its words are plainly in. A game whose config
    does not set [game] language speaks its ruleset's."""
    if spec == "builtin":
        return ""
    path = Path(spec) if Path(spec).is_absolute() else folder / spec
    try:
        if path.is_dir():
            index = path / "ruleset.toml"
            if not index.is_file():
                index = path.parent / "archive.toml"
            data = tomllib.loads(index.read_text(encoding="utf-8")) if index.is_file() else {}
            found = data.get("language", "")
        elif path.is_file():
            from referee.importer import detect_language

            found = detect_language(path.read_text(encoding="utf-8"))
        else:
            return ""
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""  # the ruleset's own loader says what is wrong with it
    return found if found in ("it", "en") else ""


def _game(data: dict[str, Any], folder: Path, written: Path) -> GameConfig:
    keys = {
        "name",
        "address",
        "language",
        "ruleset",
        "timezone",
        "start",
        "max_mail_bytes",
        "archive",
        "site",
        "id",
        "site_url",
        "operator",
        "deadline_grace",
        "aliases",
    }
    if "game" not in data:
        raise ConfigError("[game] is required")
    t = _table(data, "game", keys, "game")
    ruleset = _str(t, "ruleset", "game", "builtin")
    language = _str(t, "language", "game", ruleset_language(ruleset, folder) or "it")
    if language not in ("it", "en"):
        raise ConfigError("[game] language must be 'it' or 'en'")
    timezone = _str(t, "timezone", "game", "Europe/Rome")
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"[game] timezone: unknown time zone {timezone!r}") from exc
    start = t.get("start")
    if start is not None:
        if isinstance(start, str):
            try:
                start = datetime.fromisoformat(start)
            except ValueError as exc:
                raise ConfigError("[game] start must be an ISO 8601 time with offset") from exc
        if not isinstance(start, datetime) or start.tzinfo is None:
            raise ConfigError("[game] start must be an ISO 8601 time with offset")
    address = _email(_str(t, "address", "game"), "[game] address")
    return GameConfig(
        name=_name(_str(t, "name", "game"), "[game] name"),
        address=address,
        language=language,
        ruleset=ruleset,
        timezone=timezone,
        start=start,
        max_mail_bytes=_int(t, "max_mail_bytes", "game", 5_000_000),
        archive=_archive(_str(t, "archive", "game", ""), written),
        site=_archive(_str(t, "site", "game", ""), written),
        id=_game_id(_str(t, "id", "game", "")),
        site_url=_site_url(_str(t, "site_url", "game", "")),
        deadline_grace=_grace(_int(t, "deadline_grace", "game", 2)),
        aliases=_aliases(t.get("aliases", []), address),
    )


def _aliases(value: Any, address: str) -> tuple[str, ...]:
    """[game] aliases: other addresses of the game's mailbox, each an address, none twice."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError('[game] aliases must be a list of addresses, e.g. ["nomic@example.org"]')
    found: list[str] = []
    for item in value:
        alias = _email(item, "[game] aliases")
        if alias != address and alias not in found:
            found.append(alias)
    return tuple(found)


def _grace(seconds: int) -> int:
    if not 0 <= seconds <= 300:
        raise ConfigError("[game] deadline_grace must be between 0 and 300 seconds")
    return seconds


def _game_id(value: str) -> str:
    if value and not re.fullmatch(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?", value):
        raise ConfigError(
            f"[game] id: {value!r} must be lower-case letters, digits and inner hyphens "
            '(at most 64), e.g. "nomic-of-the-king"'
        )
    return value


def _site_url(value: str) -> str:
    if value and not re.fullmatch(r"https?://[\x21-\x3b\x3d\x3f-\x7e]+", value):
        raise ConfigError("[game] site_url must be an http(s) URL without spaces")
    return value.rstrip("/")


def _archive(value: str, folder: Path) -> Path | None:
    if not value:
        return None
    path = Path(value)
    return path if path.is_absolute() else folder / path


def _players(data: dict[str, Any]) -> tuple[PlayerConfig, ...]:
    rows = data.get("players")
    if not isinstance(rows, list) or not rows:
        raise ConfigError("[[players]]: at least one player is required")
    players: list[PlayerConfig] = []
    for index, row in enumerate(rows, start=1):
        where = f"players #{index}"
        if not isinstance(row, dict):
            raise ConfigError(f"[[players]] #{index} must be a table")
        unknown = sorted(set(row) - {"name", "email", "surname", "king"})
        if unknown:
            raise ConfigError(f"[{where}]: unknown key {unknown[0]!r}")
        name = _name(_str(row, "name", where), f"[{where}] name").strip()
        if not name:
            raise ConfigError(f"[{where}] name is empty")
        surname = _name(_str(row, "surname", where, name.split()[-1]), f"[{where}] surname")
        surname = surname.strip()
        king = row.get("king", False)
        if not isinstance(king, bool):
            raise ConfigError(f"[{where}] king must be true or false")
        players.append(PlayerConfig(name, _email(_str(row, "email", where), where), surname, king))
    emails = [p.email for p in players]
    if len(set(emails)) != len(emails):
        raise ConfigError("[[players]]: the same email is listed twice")
    kings = [p for p in players if p.king]
    if len(kings) != 1:  # 105, 214: exactly one King
        raise ConfigError(f"[[players]]: exactly one player must have king = true ({len(kings)})")
    return tuple(players)


def _database(data: dict[str, Any], folder: Path) -> str:
    t = _table(data, "database", {"url", "password_env"}, "database")
    url = _str(t, "url", "database", "sqlite:///nomic.db")
    if url.startswith("sqlite:///") and not url.startswith("sqlite:////"):
        relative = url.removeprefix("sqlite:///")
        if relative and relative != ":memory:":
            url = "sqlite:///" + str(folder / relative)
    if not url.startswith(("sqlite:", "postgresql")):
        raise ConfigError("[database] url must be sqlite:///... or postgresql+psycopg://...")
    return _database_password(t, url) if "password_env" in t else url


def _database_password(table: dict[str, Any], url: str) -> str:
    """The url with the password of [database] password_env: every command opens the database,
    so the variable is always needed (the password then never sits in the config)."""
    name = _str(table, "password_env", "database")
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigError(f"[database] url is not a database URL: {exc}") from exc
    if not url.startswith("postgresql"):
        raise ConfigError("[database] password_env is for PostgreSQL: SQLite has no password")
    if parsed.password is not None:
        raise ConfigError("[database] give the password in url or password_env, not both")
    value = os.environ.get(name)
    if value is None:
        raise ConfigError(f"[database] password_env: environment variable {name} is not set")
    return parsed.set(password=value).render_as_string(hide_password=False)


def _maildir(data: dict[str, Any], folder: Path, key: str = "path") -> Path:
    """[maildir] path: the inbox; [maildir] sent: where mail goes when there is no [smtp]."""
    t = _table(data, "maildir", {"path", "sent"}, "maildir")
    path = Path(_str(t, key, "maildir", "maildir" if key == "path" else "sent"))
    return path if path.is_absolute() else folder / path


_SERVER_KEYS = {
    "host",
    "port",
    "username",
    "password",
    "password_env",
    "security",
    "ca_file",
    "auth",
}


def _server(
    data: dict[str, Any],
    where: str,
    port: int,
    security: str,
    more: set[str],
    secrets: bool,
    oauth2: OAuth2Config | None,
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The connection keys [imap] and [smtp] share, and the section's table for the rest."""
    if where not in data:
        return None
    t = _table(data, where, _SERVER_KEYS | more, where)
    auth = _str(t, "auth", where, "password")
    if auth not in ("password", "oauth2"):
        raise ConfigError(f"[{where}] auth must be 'password' or 'oauth2'")
    if auth == "oauth2":
        if oauth2 is None:
            raise ConfigError(
                f"[{where}] auth = 'oauth2' needs an [oauth2] section (token_url, device_url, "
                "client_id, token_file)"
            )
        if "password" in t or "password_env" in t:
            raise ConfigError(f"[{where}] auth = 'oauth2' takes no password: remove it")
        if not _str(t, "username", where, "").strip():
            raise ConfigError(f"[{where}] auth = 'oauth2' needs the account's username")
    common = {
        "host": _str(t, "host", where),
        "port": _int(t, "port", where, port),
        "username": _str(t, "username", where, ""),
        "password": _secret(t, where, secrets) if auth == "password" else "",
        "security": _security(t, where, security),
        "ca_file": _str(t, "ca_file", where, ""),
        "auth": auth,
        "oauth2": oauth2 if auth == "oauth2" else None,
    }
    return common, t


_OAUTH2_KEYS = {
    "token_url",
    "device_url",
    "client_id",
    "client_secret_env",
    "scope",
    "token_file",
    "ca_file",
    "warn_days",
}


def _oauth2(data: dict[str, Any], folder: Path, secrets: bool) -> OAuth2Config | None:
    """[oauth2]: where tokens come from. The client secret (some providers have none for a
    device-flow app) is read from the environment variable `client_secret_env` names, and
    only by the commands that log in (`secrets`)."""
    if "oauth2" not in data:
        return None
    t = _table(data, "oauth2", _OAUTH2_KEYS, "oauth2")
    urls = {}
    for key in ("token_url", "device_url"):
        url = _str(t, key, "oauth2").strip()
        found = re.fullmatch(r"(https?)://(\[[^]/]+\]|[^/:?#]+)[\x21-\x7e]*", url)
        if found is None or (found.group(1) == "http" and not _loopback(found.group(2))):
            raise ConfigError(
                f"[oauth2] {key} must be an https URL (plain http only on a loopback address)"
            )
        urls[key] = url
    client_id = _str(t, "client_id", "oauth2").strip()
    if not client_id:
        raise ConfigError("[oauth2] client_id is empty: the app's id at the provider")
    secret = ""
    if "client_secret_env" in t:
        name = _str(t, "client_secret_env", "oauth2")
        value = os.environ.get(name)
        if value is None and secrets:
            raise ConfigError(f"[oauth2] client_secret_env: environment variable {name} is not set")
        secret = value or ""
    token_file = Path(_str(t, "token_file", "oauth2")).expanduser()
    warn_days = _int(t, "warn_days", "oauth2", 14)
    if warn_days < 0:
        raise ConfigError("[oauth2] warn_days must be 0 or more")
    return OAuth2Config(
        token_url=urls["token_url"],
        device_url=urls["device_url"],
        client_id=client_id,
        token_file=token_file if token_file.is_absolute() else folder / token_file,
        scope=" ".join(_str(t, "scope", "oauth2", "").split()),
        client_secret=secret,
        ca_file=_str(t, "ca_file", "oauth2", ""),
        warn_days=warn_days,
    )


def _loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _imap(
    data: dict[str, Any], secrets: bool = True, oauth2: OAuth2Config | None = None
) -> ImapConfig | None:
    more = {"folder", "processed", "quarantine", "poll_seconds", "idle_seconds"}
    found = _server(data, "imap", 993, "tls", more, secrets, oauth2)
    if found is None:
        return None
    common, t = found
    return ImapConfig(
        **common,
        folder=_str(t, "folder", "imap", "INBOX"),
        processed=_str(t, "processed", "imap", "Processed"),
        quarantine=_str(t, "quarantine", "imap", "Quarantine"),
        poll_seconds=_int(t, "poll_seconds", "imap", 60),
        idle_seconds=_int(t, "idle_seconds", "imap", 300),
    )


def _smtp(
    data: dict[str, Any], secrets: bool = True, oauth2: OAuth2Config | None = None
) -> SmtpConfig | None:
    found = _server(data, "smtp", 587, "starttls", {"concurrency", "timeout"}, secrets, oauth2)
    if found is None:
        return None
    common, t = found
    timeout = t.get("timeout", 30.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ConfigError("[smtp] timeout must be a positive number of seconds")
    return SmtpConfig(
        **common,
        concurrency=_int(t, "concurrency", "smtp", 4),
        timeout=float(timeout),
    )


def _auth(data: dict[str, Any], from_server: bool) -> AuthConfig:
    keys = {"required", "require_dkim", "trusted_authserv_id", "verify_dkim"}
    t = _table(data, "auth", keys, "auth")
    if "required" in t and "require_dkim" in t:
        raise ConfigError("[auth] give required or its old name require_dkim, not both")
    key = "require_dkim" if "require_dkim" in t else "required"
    ids = t.get("trusted_authserv_id", [])
    ids = [ids] if isinstance(ids, str) else ids
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ConfigError("[auth] trusted_authserv_id must be a host name or a list of them")
    cleaned = tuple(i.strip().lower() for i in ids if i.strip())
    for item in cleaned:
        if not re.fullmatch(r"(\*\.)?[a-z0-9.-]+", item):
            raise ConfigError(f"[auth] trusted_authserv_id: {item!r} is not a host name")
    # On by default once mail comes from a real server, or once a trusted receiving server is
    # named: naming one and enforcing nothing would be a silent trap. Off only when written.
    required = t.get(key, from_server or bool(cleaned))
    if not isinstance(required, bool):
        raise ConfigError(f"[auth] {key} must be true or false")
    verify = t.get("verify_dkim", True)
    if not isinstance(verify, bool):
        raise ConfigError("[auth] verify_dkim must be true or false")
    if required and not verify and not cleaned:
        raise ConfigError("[auth] verify_dkim = false needs a trusted_authserv_id")
    return AuthConfig(required, cleaned, verify)


_MAY_BE_ZERO = frozenset({"appeals_waiting"})  # 0: an appeal past the day's is refused


def _limits(data: dict[str, Any]) -> LimitsConfig:
    defaults = LimitsConfig()
    names = list(defaults.__dataclass_fields__)
    t = _table(data, "limits", set(names), "limits")
    values: dict[str, int] = {}
    for name in names:
        value = _int(t, name, "limits", getattr(defaults, name))
        least = 0 if name in _MAY_BE_ZERO else 1
        if value < least:
            raise ConfigError(f"[limits] {name} must be at least {least}")
        values[name] = value
    return LimitsConfig(**values)


def _parameters(data: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    t = _table(data, "parameters", {s.name for s in params.SPECS}, "parameters")
    sets = tuple((k, str(v)) for k, v in t.items())
    for key, value in t.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"[parameters] {key} must be a whole number")
    problem = params.check_sets(sets, {s.name: s.default for s in params.SPECS})
    if problem is not None:
        raise ConfigError(f"[parameters] {problem.name} = {problem.value}: {problem.detail}")
    return sets
