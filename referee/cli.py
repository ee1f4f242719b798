"""The command line, `nomic-referee`: init, run, status, outbox, replay, demo, import, export.

The commands of INTERFACE.md section 1. It only parses arguments and calls the service.
Every error is one line on stderr and a non-zero exit, never a traceback: a bad config, an
unreadable file, an unreachable database or IMAP server (named, with its answer), bad
arguments.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn
from zoneinfo import ZoneInfo

import typer
import typer.core

from referee import __version__
from referee.counts import counted

if TYPE_CHECKING:
    from referee.config import Settings
    from referee.service import Referee
    from referee.store.store import Store

# Each command imports what it needs (the database, the mail stack, the engine) when it runs:
# `--help`, `--version`, `import` and `export` start without them (bench/startup_bench.py).

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Referees the game Nomic by email.",
)

ConfigArg = Annotated[Path, typer.Argument(help="the game's TOML config file")]


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"nomic-referee: error: {message}", err=True)
    raise typer.Exit(code)


def parse_time(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        fail(f"{option}: {text!r} is not an ISO 8601 time (2026-12-01T09:00:00+00:00)")
    if value.tzinfo is None:
        fail(f"{option}: {text!r} has no UTC offset")
    return value


def settings_from(path: Path, secrets: bool = True) -> Settings:
    """The config, or one line naming the file; `secrets=False` for commands that never log
    in to a mail server, which then never ask for the passwords' environment variables."""
    from referee.config import ConfigError, load_settings

    try:
        return load_settings(path, secrets)
    except ConfigError as exc:
        if not path.exists():
            fail(
                f"{exc}; to start from a commented starter config: "
                f"nomic-referee init --write-config {path}"
            )
        fail(str(exc))


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


def _database_name(url: str) -> str:
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # a URL sqlalchemy cannot parse: show it without its password part
        return url.split("@")[-1]


@contextmanager
def answers(settings: Settings | None, what: str) -> Iterator[None]:
    """Turn every failure into one line naming what failed: the store, the server, the file.

    `settings` names the database and the IMAP server in the message; None (several games at
    once) keeps to the error's own words.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from referee import rulebook
    from referee.config import ConfigError
    from referee.mail import servers
    from referee.resources import ResourceError
    from referee.store.store import DatabaseDown, StoreError

    database = _database_name(settings.database_url) if settings is not None else ""
    imap = settings.imap if settings is not None else None
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except BrokenPipeError:  # a closed pipe (`outbox | head`) ends the command quietly
        _quiet_pipe()
    except KeyboardInterrupt:  # Ctrl-C: every transaction is whole, so say so and stop
        fail(f"{what}: interrupted", 130)
    except DatabaseDown as exc:  # the service found the database gone mid-run
        fail(f"database {database}: {exc}" if database else str(exc))
    except (ConfigError, StoreError, rulebook.RulesetError, ResourceError) as exc:
        fail(str(exc))
    except SQLAlchemyError as exc:  # the database server, or the SQLite file, cannot be used
        fail(f"database {database}: {_first_line(exc)}" if database else _first_line(exc))
    except (ConnectionError, TimeoutError) as exc:  # ImapError is a ConnectionError
        if _first_line(exc).startswith(("IMAP server", "SMTP server")):
            fail(_first_line(exc))  # it names the server already, with the fix
        if imap is not None:
            fail(servers.problem("IMAP", imap.host, imap.port, exc, imap.ca_file))
        fail(f"{what}: {_first_line(exc)}")
    except OSError as exc:
        fail(f"{what}: {exc}")
    except Exception as exc:  # never a traceback: the log (-v) has the detail
        logging.getLogger("referee").debug("%s failed", what, exc_info=True)
        fail(f"{what}: {exc.__class__.__name__}: {_first_line(exc)}")


def existing_store(settings: Settings) -> Store:
    """The game's store for a command that only reads it: never creates a database.

    A SQLite file that is not there yet would be made, empty, by merely connecting: say
    instead that the game has not been initialised.
    """
    from sqlalchemy.engine import make_url

    from referee.store.store import Store

    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        path = Path(str(url.database))
        if not path.exists():
            fail(
                f"no database at {path}: the game is not initialised; "
                f"run nomic-referee init on its config"
            )
    store = Store(settings.database_url)
    return store


def _local(value: str | None, zone: ZoneInfo) -> str:
    """An ISO time from the state, as the players read it: the game's time zone."""
    if not value:
        return "-"
    return datetime.fromisoformat(value).astimezone(zone).strftime("%a %d %b %Y %H:%M %Z")


def _delivery(settings: Settings) -> str:
    if settings.smtp is not None:
        return f"sent by SMTP through {settings.smtp.host}:{settings.smtp.port}"
    return f"no [smtp]: written to the Maildir {settings.sent} (open it with a mail client)"


def _print_state(data: dict[str, Any], as_json: bool, timezone: str = "UTC") -> None:
    """The state in a few lines: names rather than addresses, times in the game's zone."""
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    zone = ZoneInfo(timezone)
    names: dict[str, str] = {str(p["email"]): str(p["name"]) for p in data["players"]}

    def who(email: str | None) -> str:
        return names.get(email or "", email or "-")

    turn = data["turn"]
    deadline = ""
    if turn["deadline"]:
        due = turn["deadline"] <= data["now"]
        deadline = f", until {_local(turn['deadline'], zone)}" + (
            " (past: the next run fires it)" if due else ""
        )
    lines = [
        f"{data['game']} at {_local(data['now'], zone)} ({timezone})",
        f"round {data['round']}, phase {turn['phase']}, turn of {who(turn['player'])}"
        + (f", proposal {turn['proposal']}" if turn["proposal"] else "")
        + deadline,
        f"King {who(data['king'])}; adoption by {data['adoption']}"
        + (f"; WINNER {who(data['winner'])}" if data["winner"] else ""),
    ]
    lines += [
        f"  {p['score']:>5}  {p['name']} <{p['email']}>"
        + (" (King)" if p["king"] else "")
        + ("" if p["active"] else " (left)")
        for p in data["players"]
    ]
    lines.append(
        f"{counted(len(data['rules']), 'rule')} in force; "
        f"{counted(len(data['proposals']), 'proposal')}"
    )
    lines += _appeal_lines(data, who, zone)
    if "mail" in data:
        mail = data["mail"]
        waiting = mail.get("pending", 0) + mail.get("sending", 0)  # being sent: not gone yet
        lines.append(
            f"outbox: {waiting} waiting, {mail.get('sent', 0)} sent, "
            f"{mail.get('failed', 0)} undeliverable; {counted(mail.get('quarantined', 0), 'mail')} "
            "in quarantine"
        )
        if "delivery" in mail:
            lines.append(f"mail: {mail['delivery']}")
    for difference in data.get("roster", []):
        lines.append(f"roster: {difference} (the game's players count; see 'players')")
    if "chain" in data:
        lines.append(f"record: link {data['chain']['link']}, head {data['chain']['head']}")
    typer.echo("\n".join(lines))


def _appeal_lines(
    data: dict[str, Any], who: Callable[[str | None], str], zone: ZoneInfo
) -> list[str]:
    """The appeals and accusations open (212, 213), whom each waits for, how many are settled,
    and those waiting for a day of their appellant's daily limit, when each opens."""
    appeals = data.get("appeals", [])
    settled = sum(1 for a in appeals if a["status"] == "settled")
    opened = [a for a in appeals if a["status"] != "settled"]
    waiting = data.get("pending", {}).get("appeals", [])
    if not appeals and not waiting:
        return []
    lines = [
        f"appeals: {len(opened)} open, {settled} settled, {len(waiting)} waiting for a new day"
    ]
    for a in opened:
        if a["ruling"] is None:
            stands = (
                f"waits for the ruling of {who(a['judge'])}"
                if a["judge"]
                else ("waits for the King to name a Champion")
            )
        else:
            stands = f"ruled; {a['agree']} agree, {a['disagree']} disagree"
        lines.append(f"  {a['id']}  {a['kind']} by {who(a['appellant'])}: {stands}")
    for w in waiting:
        lines.append(
            f"  waiting  {w['kind']} by {who(w['appellant'])}, sent {_local(w['asked'], zone)}, "
            f"opens {_local(w['opens'], zone)}"
        )
    return lines


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nomic-referee {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="print the version"),
    ] = False,
) -> None:
    """Referees the game Nomic by email."""


@app.command()
def init(
    config: ConfigArg,
    write_config: Annotated[
        bool,
        typer.Option(
            "--write-config", help="write a commented starter config to CONFIG, then stop"
        ),
    ] = False,
    strict: Annotated[
        bool, typer.Option(help="refuse while a value the rules state is not carried or dismissed")
    ] = False,
) -> None:
    """Create the game's store from the config: initial ruleset, players, King, Maildirs."""
    from referee.config import ruleset_language
    from referee.starter import example_addresses, initialise, starter_config

    if write_config:
        if config.exists():
            fail(f"{config} exists already; give another name, or init it without --write-config")
        try:
            config.write_text(starter_config(), encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {config}: {exc.strerror or exc}")
        typer.echo(
            f"wrote a starter config to {config}: put in your game's name, address and players, "
            f"then run: nomic-referee init {config}"
        )
        return
    settings = settings_from(config, secrets=False)  # init never logs in to a server
    with answers(settings, "init"):
        done = initialise(settings, datetime.now(UTC), strict)
        for warning in example_addresses(settings):
            typer.echo(f"nomic-referee: warning: {config}: {warning}", err=True)
        written = ruleset_language(settings.game.ruleset, settings.folder)
        if written and written != settings.game.language:
            typer.echo(
                f"nomic-referee: warning: {config}: the ruleset is written in {written!r} but "
                f"[game] language = {settings.game.language!r}: mail and site speak "
                f"{settings.game.language!r}; set language = {written!r} (or leave it out) "
                "to speak the ruleset's",
                err=True,
            )
        typer.echo(
            f"initialised {settings.game.name!r}: {done.players} players, "
            f"{done.rules} rules, first turn: {done.first_turn}"
        )
        typer.echo(
            f"inbox: drop mail in {settings.maildir / 'new'}"
            if settings.imap is None
            else f"inbox: IMAP {settings.imap.host}"
        )
        typer.echo(f"mail out: {_delivery(settings)}")


@app.command()
def run(
    config: Annotated[
        list[Path], typer.Argument(help="the game's TOML config file (several: one per game)")
    ],
    once: Annotated[
        bool, typer.Option("--once", help="process the inbox, deadlines and outbox, then exit")
    ] = False,
    now: Annotated[
        str | None, typer.Option(help="the time to act at (ISO 8601; with --once)")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="log every mail")] = False,
) -> None:
    """The service: watch the inbox, fire deadlines, send mail, until stopped.

    Any number of these may run on one database: each game is worked by one at a time, and
    another takes it over within seconds when that one stops.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from referee import stopping
    from referee.runner import database_down

    stopping.defer()  # SIGTERM from here on: a clean stop after the mail in hand (exit 0)
    from referee.logs import configure

    every = run_settings(config)
    configure(every[0].log, verbose, once)
    _token_warnings(every)
    moment = parse_time(now, "--now")
    if moment is not None and not once:
        fail("--now goes with --once")
    stores: dict[str, Store] = {}
    try:
        with answers(every[0], "run"):
            try:
                _run_games(every, stores, once, moment)
            except SQLAlchemyError as exc:  # unreachable, read-only: one line, not the driver's
                where = _database_name(every[0].database_url)
                fail(f"database {where}: {_first_line(database_down(exc))}")
    finally:
        for store in stores.values():
            store.close()


def run_settings(paths: list[Path]) -> list[Settings]:
    """`run`'s configs; one it cannot use exits EXIT_CONFIG, on which systemd does not restart."""
    from referee.config import EXIT_CONFIG

    try:
        return [settings_from(path) for path in paths]
    except typer.Exit as exc:  # settings_from has said what is wrong, on one line
        raise typer.Exit(EXIT_CONFIG) from exc


def _token_warnings(every: list[Settings]) -> None:
    """At start, in the log: an OAuth2 token file missing, or a refresh token near its end."""
    from referee.mail import oauth as flow

    log = logging.getLogger("referee.oauth")
    for found in {s.oauth2.token_file: s.oauth2 for s in every if s.oauth2}.values():
        try:
            warning = flow.expiry_warning(found, flow.load(found.token_file), datetime.now(UTC))
        except flow.TokenError as exc:
            warning = str(exc)
        if warning:
            log.warning("%s", warning)


def _run_games(
    every: list[Settings], stores: dict[str, Store], once: bool, moment: datetime | None
) -> None:
    """`run`'s work: one service per game, once (cron, tests) or until stopped."""
    import asyncio

    from referee import stopping
    from referee.runner import Service, Worker
    from referee.service import roster_difference
    from referee.store.store import Store

    services = []
    for settings in every:
        store = stores.setdefault(settings.database_url, Store(settings.database_url))
        if store.has_schema():  # a database made by an older version gets the new tables
            store.create_schema()
        service = Service(settings, store)
        stopping.listen(service.halt)
        services.append(service)
        for difference in roster_difference(settings, service.referee.state):
            typer.echo(
                f"{settings.game.name}: roster: {difference}; the game's players count "
                "(nomic-referee players CONFIG list)",
                err=True,
            )
    if once:
        import logging

        from referee.mail.auth import warning

        for service in services:  # logged as the long-running `run` does at start: stderr
            unguarded = warning(service.settings)
            if unguarded:
                named = f"{service.name}: " if len(services) > 1 else ""
                logging.getLogger("referee.run").warning("%s%s", named, unguarded)
        failed = 0
        for service in services:
            if stopping.asked():  # the games not begun wait for the next run
                break
            done = service.run_once(moment)
            where = "written to sent/" if service.settings.smtp is None else "sent"
            unread = f" ({done.unreadable} unreadable)" if done.unreadable else ""
            typer.echo(
                (f"{service.name}: " if len(services) > 1 else "")
                + f"processed {counted(done.processed, 'mail')}, {done.failed} set aside{unread}; "
                f"{counted(done.deadlines, 'deadline')}; {where} {done.sent}, "
                f"deferred {done.deferred}, undeliverable {done.undeliverable}"
            )
            # A mail set aside unread was handled (kept, its sender told, logged, counted):
            # exit 1 only for a failure the operator must look into (docs/operations.md).
            failed += done.failed - done.unreadable
        if failed:
            raise typer.Exit(1)
    else:
        try:
            asyncio.run(Worker(services).run())
        finally:
            stopping.defer()  # the loop's end puts the default back: a late SIGTERM still waits


@app.command()
def status(
    config: ConfigArg,
    as_json: Annotated[bool, typer.Option("--json", help="print the state as JSON")] = False,
    now: Annotated[str | None, typer.Option(help="show the game as at this ISO 8601 time")] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="exit 1, one line per problem, when the outbox is stuck, mail is quarantined "
            "or undeliverable, or no process has read the inbox for too long",
        ),
    ] = False,
    stuck_minutes: Annotated[
        int, typer.Option(help="--check: the oldest waiting mail may be this old")
    ] = 60,
    unread_minutes: Annotated[
        int, typer.Option(help="--check: the game may be without a run process this long")
    ] = 15,
    quarantine_days: Annotated[
        float,
        typer.Option(
            help="--check: mail set aside in quarantine fails the check this many days, then "
            "counts as seen (0: as long as any is there)"
        ),
    ] = 1,
) -> None:
    """The game as it stands: turn, deadline (in the game's time zone), scores, mail."""
    from referee.core import view
    from referee.service import Referee, roster_difference

    settings = settings_from(config, secrets=False)
    moment = parse_time(now, "--now") or datetime.now(UTC)
    store = existing_store(settings)
    try:
        with answers(settings, "cannot read the game's store"):
            referee = Referee.open(store, settings)
            if check:
                _check_health(
                    store, referee.game_id, moment, stuck_minutes, unread_minutes, quarantine_days
                )
                return
            data = view.public_state(referee.state, moment)
            data["mail"] = store.counts(referee.game_id)  # outbox by status, and quarantined
            data["mail"]["delivery"] = _delivery(settings)
            data["roster"] = roster_difference(settings, referee.state)
            data["chain"] = {"link": referee.link, "head": referee.head}  # 213: the record
            _print_state(data, as_json, settings.game.timezone)
    finally:
        store.close()


@app.command()
def players(
    config: ConfigArg,
    action: Annotated[
        str, typer.Argument(help="list | add NAME EMAIL | remove WHO | address WHO NEW")
    ] = "list",
    words: Annotated[list[str] | None, typer.Argument(help="the action's arguments")] = None,
    surname: Annotated[
        str, typer.Option(help="with add: the surname that places them in the turn order")
    ] = "",
    now: Annotated[str | None, typer.Option(help="act at this ISO 8601 time")] = None,
) -> None:
    """The game's players (after init the game's database is the roster, not the config).

    add: a player from the next round, with 0 points, announced to the table; remove: the
    player QUITs (rule 114); address: a player's mail goes to a new address. Each is an event
    of the game's log, and its mail is sent at once.
    """
    from referee.core.events import Enrol, MoveAddress, Quit
    from referee.core.step import find_player
    from referee.runner import Service
    from referee.service import Referee
    from referee.store.store import Store

    settings = settings_from(config, secrets=action != "list")  # the others send mail at once
    args = list(words or [])
    expected = {"list": 0, "add": 2, "remove": 1, "address": 2}
    if action not in expected:
        fail(f"players: unknown action {action!r} (list, add, remove, address)")
    if len(args) != expected[action]:
        usage = {"list": "list", "add": "add 'Full Name' EMAIL", "remove": "remove WHO"}
        fail(f"players: usage: players CONFIG {usage.get(action, 'address WHO NEW-EMAIL')}")
    moment = parse_time(now, "--now")
    store = Store(settings.database_url)
    try:
        with answers(settings, "players"):
            if action == "list":
                referee = Referee.open(store, settings)
                _print_players(referee, settings)
                return
            service = Service(settings, store)
            state = service.referee.state
            event: Enrol | Quit | MoveAddress
            if action == "add":
                name, email = args
                event = Enrol(_address_arg(email), name, surname)
            else:
                who = find_player(state, args[0])
                if who is None:
                    fail(f"players: no player {args[0]!r} in the game")
                if action == "remove":
                    event = Quit(who.email)
                else:
                    event = MoveAddress(who.email, _address_arg(args[1]))
            outcome = service.operate(event, moment)
            if not outcome.ok:
                fail(f"players {action}: refused: {outcome.code} {outcome.data}", 1)
            typer.echo(f"players {action}: done ({outcome.code}); the table is told")
    finally:
        store.close()


@app.command()
def doctor(
    config: ConfigArg,
    create_folders: Annotated[
        bool,
        typer.Option("--create-folders", help="create the IMAP folders the referee needs"),
    ] = False,
) -> None:
    """Check that the game can run: config, database, clock, IMAP, SMTP, sender authentication.

    One line per check, OK, WARN or FAIL with the fix; exits 1 when anything failed.
    """
    from referee.doctor import examine

    settings = settings_from(config)
    with answers(settings, "doctor"):
        checks = examine(config, settings, create_folders)
        for check in checks:
            for line in check.lines():
                typer.echo(line)
    failures = sum(1 for c in checks if c.status == "FAIL")
    if failures:
        typer.echo(f"{counted(failures, 'check')} failed", err=True)
        raise typer.Exit(1)


@app.command()
def oauth(config: ConfigArg) -> None:
    """Sign the mailbox in with OAuth2 (device code, RFC 8628): no browser needed here.

    Prints a web address and a code to enter there from any device; once the account's owner
    approves, the refresh token is saved to [oauth2] token_file (mode 0600), and `run` and
    `doctor` log in with XOAUTH2 from then on. Run it again when the token is revoked or
    expires.
    """
    from referee.config import ConfigError, load_oauth2
    from referee.mail import oauth as flow

    settings_from(config, secrets=False)  # the whole config sound; no mail server's password
    try:
        oauth2 = load_oauth2(config)  # but the app's client secret, when it has one
    except ConfigError as exc:
        fail(str(exc))
    if oauth2 is None:
        fail(
            f"{config}: no [oauth2] section; add one (token_url, device_url, client_id, "
            'scope, token_file) and auth = "oauth2" under [imap] and [smtp]; '
            "docs/operations.md has them for Gmail and Microsoft 365"
        )
    try:
        code = flow.start_device_flow(oauth2)
        typer.echo(f"To let the referee use the mailbox, open {code.verification_uri}")
        typer.echo(f"and enter the code {code.user_code}")
        if code.verification_uri_complete:
            typer.echo(f"(or open {code.verification_uri_complete})")
        minutes = max(1, code.expires_in // 60)
        typer.echo(f"waiting for the approval (the code is good for {minutes} min)...")
        tokens = flow.finish_device_flow(oauth2, code)
    except flow.TokenError as exc:
        fail(str(exc), 1)
    typer.echo(f"signed in; the refresh token is saved in {oauth2.token_file}")
    warning = flow.expiry_warning(oauth2, tokens, datetime.now(UTC))
    if warning:
        typer.echo(f"warning: {warning}", err=True)
    typer.echo("next: nomic-referee doctor CONFIG")


@app.command("dkim-key")
def dkim_key(config: ConfigArg) -> None:
    """Make the [dkim] key when it is missing, and print the DNS record to publish (213)."""
    from referee.mail.signing import Signer, SigningError, new_key

    settings = settings_from(config, secrets=False)
    dkim = settings.dkim
    if dkim is None:
        fail(
            f"{config}: no [dkim] section; add one, for example\n"
            '  [dkim]\n  selector = "nomic"\n  key_file = "dkim.pem"'
        )
    domain = settings.game.address.rpartition("@")[2]
    if not dkim.key_file.exists():
        new_key(dkim.key_file)
        typer.echo(f"wrote a new 2048-bit RSA key to {dkim.key_file} (mode 0600)")
    try:
        signer = Signer.load(dkim, domain)
    except SigningError as exc:
        fail(str(exc))
    typer.echo(f"publish this TXT record in the DNS of {signer.domain}:")
    typer.echo(f'{signer.record_name}. IN TXT "{signer.record}"')
    typer.echo("then run nomic-referee doctor on the config to check it is published")


@app.command()
def migrate(config: ConfigArg) -> None:
    """Bring the database to this version's schema (after an upgrade; `run` does it too)."""
    settings = settings_from(config, secrets=False)
    store = existing_store(settings)
    try:
        with answers(settings, "migrate"):
            pending = store.pending_migrations() if store.has_schema() else []
            if not store.has_schema():
                fail("the database has no tables: run nomic-referee init on the config")
            store.create_schema()
            typer.echo(
                f"applied {counted(len(pending), 'migration')}"
                + (f" ({', '.join(pending)})" if pending else ": the database was up to date")
            )
    finally:
        store.close()


def _address_arg(text: str) -> str:
    from referee.config import ConfigError, email_address

    try:
        return email_address(text, "players")
    except ConfigError as exc:
        fail(str(exc))


def _print_players(referee: Referee, settings: Settings) -> None:
    from referee.core.order import turn_order
    from referee.service import roster_difference

    state = referee.state

    ordered = [*turn_order(state), *(p for p in state.players if not p.active)]
    for p in ordered:
        notes = []
        if p.email == state.king:
            notes.append("King")
        if not p.active:
            notes.append("left")
        elif p.first_round > state.rounds_completed:
            notes.append(f"turns from round {p.first_round + 1}")
        if p.first_proposal > 0 and p.active:
            notes.append(f"votes from proposal {p.first_proposal}")
        extra = f" ({', '.join(notes)})" if notes else ""
        typer.echo(f"{p.score:>5}  {p.name} <{p.email}>{extra}")
    for request in state.requests:
        if request.status.value == "pending":
            typer.echo(
                f"request {request.number}: {request.name} <{request.email}> waits for the King"
            )
    for difference in roster_difference(settings, state):
        typer.echo(f"roster: {difference}")


@app.command()
def backup(
    config: ConfigArg,
    file: Annotated[Path, typer.Argument(help="the backup to write (a new SQLite file)")],
) -> None:
    """Back up the game's database into one file, while the service runs (SQLite or PostgreSQL)."""
    from referee.store.backup import backup as take_backup

    settings = settings_from(config, secrets=False)
    existing_store(settings).close()  # never creates a database
    with answers(settings, "backup"):
        copied = take_backup(settings.database_url, file)
        typer.echo(
            f"backed up {counted(copied.games, 'game')} ({counted(copied.rows, 'row')}) to {file}"
        )


@app.command()
def prune(
    config: ConfigArg,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="list what would be deleted; delete nothing")
    ] = False,
    now: Annotated[str | None, typer.Option(help="prune as at this ISO 8601 time")] = None,
) -> None:
    """Delete Processed mail and old backups as [retention] says (default: mail older than 90
    days, all backups but the newest 14); quarantined mail is never deleted."""
    from referee.operations.pruning import prune as run_prune

    moment = parse_time(now, "--now") or datetime.now(UTC)
    settings = settings_from(config, secrets=False)
    if settings.imap is not None and settings.retention.processed_days:
        settings = settings_from(config)  # the IMAP Processed folder: the password is needed
    with answers(settings, "prune"):
        pruned = run_prune(settings, moment, dry_run)
    verb = "would delete" if dry_run else "deleted"
    if pruned.where:
        typer.echo(f"{verb} {counted(pruned.processed, 'mail')} from {pruned.where}")
    for path in pruned.backups:
        typer.echo(f"{verb} backup {path}")
    typer.echo(f"{verb} {counted(len(pruned.backups), 'backup')}")


@app.command()
def restore(
    config: ConfigArg,
    file: Annotated[Path, typer.Argument(help="a file written by nomic-referee backup")],
) -> None:
    """Restore a backup into the config's database, which must hold no game."""
    from referee.store.backup import restore as put_back

    settings = settings_from(config, secrets=False)
    with answers(settings, "restore"):
        copied = put_back(file, settings.database_url)
        typer.echo(
            f"restored {counted(copied.games, 'game')} ({counted(copied.rows, 'row')}) from "
            f"{file}; the next run reads the inbox again (mail already applied is only moved) "
            "and sends what was waiting"
        )


def _check_health(
    store: Store, game_id: int, now: datetime, stuck: int, unread: int, quarantine: float
) -> None:
    from datetime import timedelta

    from referee.health import check

    if quarantine < 0:
        fail("--quarantine-days: give 0 or more days")
    window = timedelta(days=quarantine) if quarantine else None
    health = check(store, game_id, now, timedelta(minutes=stuck), timedelta(minutes=unread), window)
    for problem in health.problems:
        typer.echo(f"FAIL {problem}")
    if health.problems:
        raise typer.Exit(1)
    seen = (
        f" ({health.reported} older mail(s) in quarantine, reported already)"
        if health.reported
        else ""
    )
    typer.echo(
        "OK   outbox moving, nothing newly quarantined or undeliverable, the inbox is read" + seen
    )


def _replaceable(path: Path) -> bool:
    """An export overwrites an earlier export (an mbox, or empty), never another file."""
    from referee.operations.replaying import replaceable

    return replaceable(path)


_STATUS = {"waiting": "pending", "sent": "sent", "undeliverable": "failed"}


@app.command()
def outbox(
    config: ConfigArg,
    export: Annotated[
        Path | None, typer.Option(help="also write the listed mail to this mbox file")
    ] = None,
    show: Annotated[
        str, typer.Option("--status", help="waiting, sent, undeliverable or all")
    ] = "all",
) -> None:
    """List the mail the referee has decided to send (waiting, sent, undeliverable); export it."""
    from referee.mail.sentbox import subject_of
    from referee.replay import write_mbox
    from referee.service import Referee

    if show != "all" and show not in _STATUS:
        fail(f"--status: {show!r} is not one of waiting, sent, undeliverable, all")
    settings = settings_from(config, secrets=False)
    if export is not None and export.exists() and not _replaceable(export):
        fail(f"--export: {export} exists and is not an mbox; choose another file")
    zone = ZoneInfo(settings.game.timezone)
    label = {v: k for k, v in _STATUS.items()}
    store = existing_store(settings)
    try:
        with answers(settings, "outbox"):
            referee = Referee.open(store, settings)
            rows = store.outbox(referee.game_id, None if show == "all" else _STATUS[show])
            for row in rows:
                at = row.sent_at or row.created_at
                stamp = (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(zone)
                typer.echo(
                    f"{row.id:>6}  {label.get(row.status, row.status):<13} "
                    f"{stamp:%Y-%m-%d %H:%M}  {row.recipient:<28} {subject_of(row.raw)}"
                )
            typer.echo(f"{counted(len(rows), 'mail')}; {_delivery(settings)}")
            if export is not None:
                write_mbox(export, [(r.raw, r.created_at) for r in rows], settings.game.address)
                typer.echo(f"{counted(len(rows), 'mail')} written to {export}")
    finally:
        store.close()


@app.command("export-mail")
def export_mail(
    config: ConfigArg,
    out: Annotated[Path, typer.Option(help="the mbox file to write what the referee received")],
    sent: Annotated[
        bool,
        typer.Option(
            "--sent",
            help="also write what it sent, to OUT with .sent before the suffix "
            "(record.mbox -> record.sent.mbox)",
        ),
    ] = False,
    players_only: Annotated[
        bool,
        typer.Option(
            "--players-only",
            help="the players' mail only, as ARCHIVE gives it: a stand-in (times and SHA-256) "
            "for each mail of someone not playing",
        ),
    ] = False,
) -> None:
    """Write the game's record as mbox: every mail the referee received, in the order it took
    effect, each From_ line dated then; with --sent also every mail it sent (rule 213).
    `nomic-referee verify CONFIG OUT --sent OUT.sent` checks them. It holds strangers' mail too:
    it is the operator's copy (players get theirs with ARCHIVE); with --players-only each of
    those is a stand-in, and `verify` still reaches the same chain head."""
    from referee.record import export_mail as write_export
    from referee.record import sent_path

    settings = settings_from(config, secrets=False)
    if sent and players_only:
        fail("--sent holds the mail to strangers too: export it without --players-only")
    for target in (out, sent_path(out)) if sent else (out,):
        if target.exists() and not _replaceable(target):
            fail(f"{target} exists and is not an mbox; choose another file")
    store = existing_store(settings)
    try:
        with answers(settings, "export-mail"):
            done = write_export(store, settings, out, sent, players_only)
    finally:
        store.close()
    withheld = f" ({done.withheld} of them stand-ins)" if players_only else ""
    typer.echo(f"{counted(done.received, 'mail')} received written to {out}{withheld}")
    if done.sent_path is not None:
        typer.echo(f"{counted(done.sent, 'mail')} sent written to {done.sent_path}")


# ----- the archive and the website (issue 9) --------------------------------------------------


class _ArchiveGroup(typer.core.TyperGroup):
    """`archive CONFIG [FOLDER]` writes the archive; `archive check|diff ...` are subcommands."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["write", *args]
        return super().resolve_command(ctx, args)


archive_app = typer.Typer(
    cls=_ArchiveGroup,
    no_args_is_help=True,
    help="The rule archive: write it (archive CONFIG [FOLDER]), check it, diff two dates.",
)
app.add_typer(archive_app, name="archive")


def _keeper(settings: Settings, store: Store) -> Any:
    from referee.archive import Keeper
    from referee.service import missing_game

    game_id = store.game_id(settings.game.key)
    if game_id is None:
        fail(missing_game(store, settings))
    return Keeper(settings, store, game_id)


@archive_app.command("write")
def archive_write(
    config: ConfigArg,
    folder: Annotated[
        Path | None, typer.Argument(help="where to write (default: [game] archive)")
    ] = None,
) -> None:
    """Write the rule archive from the event log, with one git commit per change."""
    settings = settings_from(config, secrets=False)
    target = folder or settings.game.archive
    if target is None:
        fail("give a folder, or set [game] archive in the config")
    store = existing_store(settings)
    try:
        with answers(settings, "archive"):
            written = _keeper(settings, store).write_archive(target, progress=True)
            typer.echo(
                f"{counted(written.files, 'file')} written, "
                f"{counted(written.commits, 'commit')} in {target}"
            )
    finally:
        store.close()


@archive_app.command("check")
def archive_check(
    folder: Annotated[Path, typer.Argument(help="an archive folder, or its rules/ folder")],
) -> None:
    """Check an archive (perhaps edited by hand): exit 1 naming every entry at fault."""
    from referee.archive.check import check_archive

    if not folder.is_dir():
        fail(f"not a folder: {folder}")
    problems = check_archive(folder)
    for problem in problems:
        typer.echo(str(problem))
    if problems:
        typer.echo(f"{counted(len(problems), 'problem')} in {folder}", err=True)
        raise typer.Exit(1)
    typer.echo(f"{folder}: the archive is consistent")


@archive_app.command("diff")
def archive_diff(
    config: ConfigArg,
    start: Annotated[str, typer.Option("--from", help="ISO 8601 date or time")],
    end: Annotated[str | None, typer.Option("--to", help="ISO 8601 date or time (now)")] = None,
) -> None:
    """Print what changed in the rules between two dates."""
    from referee.archive.diff import rules_diff

    settings = settings_from(config, secrets=False)
    since = _day_or_time(start, "--from")
    until = _day_or_time(end, "--to") if end else datetime.now(UTC)
    store = existing_store(settings)
    try:
        with answers(settings, "archive diff"):
            typer.echo(rules_diff(_keeper(settings, store).history(), since, until), nl=False)
    finally:
        store.close()


def _day_or_time(text: str, option: str) -> datetime:
    """`2026-12-08` (the end of that day, UTC) or a full ISO 8601 time with its offset."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        fail(f"{option}: {text!r} is not an ISO 8601 date or time (2026-12-08)")
    if value.tzinfo is None:
        if len(text) == 10:
            return value.replace(hour=23, minute=59, second=59, tzinfo=UTC)
        fail(f"{option}: {text!r} has no UTC offset")
    return value


@app.command()
def site(
    config: ConfigArg,
    out: Annotated[Path | None, typer.Option(help="the folder (default: [game] site)")] = None,
) -> None:
    """Write the game's static website (works from file:// and any static host)."""
    settings = settings_from(config, secrets=False)
    target = out or settings.game.site
    if target is None:
        fail("give --out DIR, or set [game] site in the config")
    store = existing_store(settings)
    try:
        with answers(settings, "site"):
            pages = _keeper(settings, store).write_site(target, progress=True)
            typer.echo(
                f"{counted(pages, 'file')} written in {target}; open {target / 'index.html'}"
            )
    finally:
        store.close()


@app.command()
def replay(
    config: ConfigArg,
    mbox: Annotated[
        Path, typer.Argument(help="the archived mail: an mbox file, or a Maildir folder")
    ],
    until: Annotated[str | None, typer.Option(help="stop at this ISO 8601 time")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the state as JSON")] = False,
    out: Annotated[Path | None, typer.Option(help="write every mail it would send here")] = None,
    site: Annotated[
        Path | None, typer.Option(help="write the replayed game's website in this folder")
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="refuse mail with no delivery time (never use its sender's Date)"
        ),
    ] = False,
) -> None:
    """Replay archived mail through a fresh game and print the final state (rule 213)."""
    from referee.operations.replaying import ReplayRefused, read_record, replay_record

    settings = settings_from(config, secrets=False)  # a throw-away game: no mail server
    stop = parse_time(until, "--until")
    mbox = _mail_source(mbox, "replay")
    try:
        messages = read_record(mbox, out, strict)
    except ReplayRefused as exc:
        fail(str(exc))
    with answers(settings, "replay"):
        report = replay_record(settings, mbox, messages, stop, out, site)
    _print_state(report.state, as_json, settings.game.timezone)
    for line in report.notes():
        typer.echo(line, err=True)


@app.command()
def verify(
    config: ConfigArg,
    inbound: Annotated[
        Path,
        typer.Argument(
            help="the mail the referee received: an mbox, a Maildir folder, or its cur/ or new/"
        ),
    ],
    sent: Annotated[
        Path | None,
        typer.Option(help="the mail the referee sent (mbox or Maildir), checked byte for byte"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the verdict as JSON")] = False,
    no_database: Annotated[
        bool, typer.Option("--no-database", help="check the mail only, not the game's database")
    ] = False,
) -> None:
    """Replay the mail and check every decision, chain link and sent mail (rule 213); exit 1
    naming the first divergence."""
    from referee.verify import verify as run_verify

    settings = settings_from(config, secrets=False)  # reads mail and the database, sends none
    inbound = _mail_source(inbound, "verify")
    if sent is not None:
        sent = _mail_source(sent, "verify --sent")
    with answers(settings, "verify"):
        verdict = run_verify(settings, inbound, sent, database=not no_database, progress=True)
    if as_json:
        typer.echo(verdict.as_json())
    else:
        typer.echo(
            f"{counted(verdict.messages, 'message')} replayed: {counted(verdict.links, 'link')}, "
            f"head {verdict.head}"
        )
        if verdict.last_link and verdict.ok:  # on a failure the mail given is not the record
            typer.echo(
                f"the record ends at link {verdict.last_link}, head {verdict.head}: the "
                f"referee's mail of that link names the same in its X-Nomic-Chain header "
                f"('X-Nomic-Chain: {verdict.last_link} {verdict.head}'); look for it in the mail "
                "you hold"
            )
        if verdict.database_links:
            typer.echo(f"database: {counted(verdict.database_links, 'link')} checked")
        if sent is not None:
            typer.echo(
                f"sent mail: {counted(verdict.sent_checked, 'mail')} checked byte for byte"
                + (
                    f", {verdict.sent_missing} made by the rules not in {sent}"
                    if verdict.ok
                    else ""
                )
            )
            if verdict.sent_after_record:
                typer.echo(
                    f"after the record: {counted(verdict.sent_after_record, 'mail')} not checked "
                    "(sent after its last link, the reply to ARCHIVE among them)"
                )
            if verdict.sent_answers_withheld:
                typer.echo(
                    f"answers to withheld mail: {counted(verdict.sent_answers_withheld, 'mail')} "
                    "not checked (a stand-in cannot make them again)"
                )
            if verdict.signatures_checked:
                typer.echo(
                    f"signatures: {counted(verdict.signatures_checked, 'DKIM signature')} good"
                )
        for note in verdict.notes:
            typer.echo(f"note: {note}")
        if verdict.divergence is not None:
            found = verdict.divergence
            typer.echo(f"FAIL at {found.where}: {found.what}")
            published, rules_give = found.labels
            if found.published:
                typer.echo(f"  {published}: {found.published}")
            if found.rules_give:
                typer.echo(f"  {rules_give}: {found.rules_give}")
        else:
            typer.echo("PASS: every decision, link and mail checked follows from the mail given")
    if not verdict.ok:
        raise typer.Exit(1)


def _maildir(path: Path) -> bool:
    """A Maildir folder: the `cur` and `new` folders an MTA delivers into."""
    return path.is_dir() and (path / "cur").is_dir() and (path / "new").is_dir()


def _mail_source(path: Path, what: str) -> Path:
    """The mbox file or Maildir folder `path` names, checked: a Maildir's `cur/`, `new/` or
    `tmp/` folder stands for the Maildir itself (all its mail is read, said on stderr); a
    folder that is no Maildir, or a file that is no mbox, is said plainly (new-user review:
    `verify maildir/cur` printed a raw error)."""
    if _maildir(path):
        return path
    if path.is_dir() and path.name in ("cur", "new", "tmp") and _maildir(path.parent):
        typer.echo(
            f"{what}: {path} is a folder of the Maildir {path.parent}: reading the whole Maildir "
            "(its cur/ and new/)",
            err=True,
        )
        return path.parent
    _check_mbox(path, what)
    return path


def _check_mbox(path: Path, what: str) -> None:
    """An mbox is a file that starts with a `From ` line; anything else is said plainly, with
    the command (or option) it was given to. A gzip-compressed one is read to its end here,
    so one cut short is said before any replay."""
    if path.is_dir():
        fail(
            f"{path} is a folder but not a Maildir (no cur/ and new/ in it): give an mbox file, "
            "a Maildir folder, or its cur/ or new/ folder"
        )
    import gzip
    import zlib

    from referee.replay import GZIP_MAGIC

    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
        if head.startswith(GZIP_MAGIC):  # ARCHIVE's mail.mbox.gz as saved: read uncompressed
            with gzip.open(path, "rb") as packed:
                head = packed.read(4096)
                while packed.read(1 << 20):
                    pass
    except FileNotFoundError:
        fail(f"{what}: mbox not found: {path}")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        fail(f"{what}: {path} is a damaged gzip file (cut short, or not whole): {exc}")
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror or exc}")
    if not head.strip():
        fail(f"0 messages read from {path}: the file is empty")
    if not head.lstrip(b"\r\n").startswith(b"From "):
        fail(
            f"{path} is not an mbox file (an mbox, or a gzip-compressed one, starts with a "
            "'From ' line)"
        )


@app.command()
def demo(
    folder: Annotated[
        Path, typer.Argument(help="where to write the demo game (default: ./nomic-demo)")
    ] = Path("nomic-demo"),
    language: Annotated[str, typer.Option(help="en or it")] = "en",
) -> None:
    """Play a short game on embedded defaults (SQLite, Maildir), start to winner, in seconds."""
    from referee.demo import DemoError, play

    if language not in ("en", "it"):
        fail(f"--language: {language!r} is not 'en' or 'it'")
    try:
        play(folder, language, typer.echo)
    except KeyboardInterrupt:
        fail(f"interrupted; {folder} is half-written: run 'nomic-referee demo' again", 130)
    except DemoError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"demo: {exc}")


# --- rule documents: import and export (issue 10) ------------------------------------------------


@app.command("import")
def import_document(
    document: Annotated[Path, typer.Argument(help="the rule document (text or Markdown)")],
    out: Annotated[Path, typer.Option("--out", help="the ruleset folder to write")],
    immutable: Annotated[
        list[str] | None,
        typer.Option("--immutable", help="a rule (label, path or number) to make immutable"),
    ] = None,
    immutable_under: Annotated[
        list[str] | None,
        typer.Option("--immutable-under", help="a heading: every rule under it is immutable"),
    ] = None,
    immutable_power: Annotated[
        float | None,
        typer.Option("--immutable-power", help="rules whose header gives this power or more"),
    ] = None,
    carry: Annotated[
        list[str] | None,
        typer.Option("--carry", help="NAME=RULE: the rule that carries a game parameter"),
    ] = None,
    dismiss: Annotated[
        list[str] | None,
        typer.Option("--dismiss", help="a parameter whose value stated in a rule is set aside"),
    ] = None,
    language: Annotated[
        str, typer.Option(help="the document's language (it, en, ...); default: detected")
    ] = "",
    strict: Annotated[
        bool, typer.Option("--strict", help="exit non-zero when the result looks wrong")
    ] = False,
) -> None:
    """Read a rule document into a ruleset folder to review, edit, then `init` (101, 102)."""
    from referee.operations.importing import ImportChoices, ImportRefused, import_rules

    choices = ImportChoices(
        tuple(immutable or ()),
        tuple(immutable_under or ()),
        immutable_power,
        tuple(carry or ()),
        tuple(dismiss or ()),
        language,
    )
    try:
        report = import_rules(document, out, choices)
    except ImportRefused as exc:
        fail(str(exc))
    for line in report.lines():
        typer.echo(line)
    if strict and report.warnings:
        raise typer.Exit(1)


@app.command()
def export(
    folder: Annotated[Path, typer.Argument(help="a ruleset folder")],
    form: Annotated[str | None, typer.Option("--format", help="md or txt")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="file to write")] = None,
) -> None:
    """Write a ruleset folder back as one document, in the source's own numbering."""
    from referee import rulebook
    from referee.exporter import export as write_document

    if not folder.is_dir():
        fail(f"not a ruleset folder: {folder}")
    try:
        document = write_document(folder, form)
        if output is not None:
            output.write_text(document, encoding="utf-8")
    except (OSError, rulebook.RulesetError) as exc:
        fail(str(exc))
    if output is None:
        sys.stdout.write(document)


def _quiet_pipe() -> NoReturn:
    """The reader of our output went away (`outbox | head`): stop at once, quietly, exit 0.

    Python's own advice: point stdout at /dev/null so the flush at exit cannot fail again.
    """
    import os

    with_devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(with_devnull, sys.stdout.fileno())
    sys.exit(0)


def main() -> None:
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from referee.logs import quiet_libraries

    quiet_libraries()  # libraries' INFO lines are noise
    if len(sys.argv) <= 1:
        sys.argv.append("--help")
    try:
        code = app(standalone_mode=False)
        sys.stdout.flush()  # a pipe closed early fails here, not in the interpreter's exit
    except BrokenPipeError:
        _quiet_pipe()
    except SystemExit as exc:  # click's own answer to a closed pipe is exit 1: make it quiet
        if exc.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            sys.exit(0)
        raise
    except typer.Exit as exc:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_pipe()
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("nomic-referee: aborted", err=True)
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: one line, exit 2
        format_message = getattr(exc, "format_message", None)
        message = format_message() if callable(format_message) else str(exc)
        typer.echo(f"nomic-referee: error: {message}", err=True)
        sys.exit(int(getattr(exc, "exit_code", 2)))
    if isinstance(code, int):
        sys.exit(code)
