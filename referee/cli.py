"""The command line, `nomic-referee`: init, run, status, replay, import, export (INTERFACE.md 1).

It only parses arguments and calls the service. Every error is one line on stderr and a
non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from referee import rulebook
from referee.config import ConfigError, Settings, load_settings
from referee.core import view
from referee.service import Referee
from referee.store.store import Store, StoreError

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


def settings_from(path: Path) -> Settings:
    try:
        return load_settings(path)
    except ConfigError as exc:
        fail(str(exc))


def _print_state(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    turn = data["turn"]
    lines = [
        f"{data['game']} at {data['now']}",
        f"round {data['round']}, phase {turn['phase']}, turn of {turn['player'] or '-'}"
        + (f", proposal {turn['proposal']}" if turn["proposal"] else "")
        + (f", until {turn['deadline']}" if turn["deadline"] else ""),
        f"King {data['king'] or '-'}; adoption by {data['adoption']}"
        + (f"; WINNER {data['winner']}" if data["winner"] else ""),
    ]
    lines += [
        f"  {p['score']:>5}  {p['name']} <{p['email']}>"
        + (" (King)" if p["king"] else "")
        + ("" if p["active"] else " (left)")
        for p in data["players"]
    ]
    lines.append(f"{len(data['rules'])} rules in force; {len(data['proposals'])} proposals")
    if "mail" in data:
        mail = data["mail"]
        lines.append(
            f"outbox: {mail.get('pending', 0)} waiting, {mail.get('sent', 0)} sent, "
            f"{mail.get('failed', 0)} undeliverable; {mail.get('quarantined', 0)} mail(s) "
            "in quarantine"
        )
    typer.echo("\n".join(lines))


@app.command()
def init(config: ConfigArg) -> None:
    """Create the game's store from the config: initial ruleset, players, King."""
    settings = settings_from(config)
    store = Store(settings.database_url)
    try:
        store.create_schema()
        if store.game_id(settings.game.name) is not None:
            fail(f"the game {settings.game.name!r} is already initialised in this database")
        started = settings.game.start or datetime.now(UTC)
        referee = Referee.create(store, settings, started)
        settings.maildir.mkdir(parents=True, exist_ok=True)
        typer.echo(
            f"initialised {settings.game.name!r}: {len(referee.state.players)} players, "
            f"{len(referee.state.rules)} rules, first turn: {referee.state.turn_player}"
        )
    except (StoreError, rulebook.RulesetError, OSError) as exc:
        fail(str(exc))
    finally:
        store.close()


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
    import asyncio

    from sqlalchemy.exc import SQLAlchemyError

    from referee.runner import Service, Worker, database_down

    logging.getLogger().setLevel(logging.INFO if verbose or not once else logging.WARNING)
    every = [settings_from(path) for path in config]
    moment = parse_time(now, "--now")
    if moment is not None and not once:
        fail("--now goes with --once")
    stores: dict[str, Store] = {}
    try:
        services = []
        for settings in every:
            store = stores.setdefault(settings.database_url, Store(settings.database_url))
            if store.has_schema():  # a database made by an older version gets the new tables
                store.create_schema()
            services.append(Service(settings, store))
        if once:
            failed = 0
            for service in services:
                done = service.run_once(moment)
                typer.echo(
                    (f"{service.name}: " if len(services) > 1 else "")
                    + f"processed {done.processed} mail(s), {done.failed} set aside; "
                    f"{done.deadlines} deadline(s); sent {done.sent}, deferred {done.deferred}, "
                    f"undeliverable {done.undeliverable}"
                )
                failed += done.failed
            if failed:
                raise typer.Exit(1)
        else:
            asyncio.run(Worker(services).run())
    except (StoreError, OSError) as exc:
        fail(str(exc))
    except SQLAlchemyError as exc:  # unreachable, read-only: one line, not the driver's story
        fail(str(database_down(exc)))
    except typer.Exit:
        raise
    except Exception as exc:  # never a traceback: the log has the detail
        logging.getLogger("referee").debug("run failed", exc_info=True)
        fail(f"{exc.__class__.__name__}: {exc}")
    finally:
        for store in stores.values():
            store.close()


@app.command()
def status(
    config: ConfigArg,
    as_json: Annotated[bool, typer.Option("--json", help="print the state as JSON")] = False,
) -> None:
    """The game as it stands."""
    settings = settings_from(config)
    store = Store(settings.database_url)
    try:
        referee = Referee.open(store, settings)
        data = view.public_state(referee.state, datetime.now(UTC))
        data["mail"] = store.counts(referee.game_id)  # outbox by status, and quarantined mail
        _print_state(data, as_json)
    except (StoreError, OSError) as exc:
        fail(str(exc))
    except Exception as exc:  # a database that cannot be read: say so in one line
        fail(f"cannot read the game's store: {exc.__class__.__name__}: {exc}")
    finally:
        store.close()


@app.command()
def archive(
    config: ConfigArg,
    folder: Annotated[
        Path | None, typer.Argument(help="where to write (default: [game] archive)")
    ] = None,
) -> None:
    """Write the rule archive: one file per rule with its history, the ruleset, the scores."""
    from referee.archive import write_archive

    settings = settings_from(config)
    target = folder or settings.game.archive
    if target is None:
        fail("give a folder, or set [game] archive in the config")
    store = Store(settings.database_url)
    try:
        referee = Referee.open(store, settings)
        changed = write_archive(referee.state, target)
        typer.echo(f"{len(changed)} file(s) written in {target}")
    except (StoreError, OSError) as exc:
        fail(str(exc))
    finally:
        store.close()


@app.command()
def replay(
    config: ConfigArg,
    mbox: Annotated[Path, typer.Argument(help="the archived mail, an mbox file")],
    until: Annotated[str | None, typer.Option(help="stop at this ISO 8601 time")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the state as JSON")] = False,
    out: Annotated[Path | None, typer.Option(help="write every mail it would send here")] = None,
) -> None:
    """Replay archived mail through a fresh game and print the final state (rule 213)."""
    from referee.replay import replay as run_replay

    settings = settings_from(config)
    stop = parse_time(until, "--until")
    try:
        result = run_replay(settings, mbox, stop, out)
    except (OSError, rulebook.RulesetError, StoreError) as exc:
        fail(str(exc))
    _print_state(view.public_state(result.state, result.now), as_json)
    if result.failed:
        typer.echo(f"{len(result.failed)} message(s) could not be processed", err=True)


# --- rule documents: import and export (issue 10) ------------------------------------------------


@app.command("import")
def import_document(
    document: Annotated[Path, typer.Argument(help="the rule document (text or Markdown)")],
    out: Annotated[Path, typer.Option("--out", help="the ruleset folder to write")],
    immutable: Annotated[
        list[str] | None,
        typer.Option("--immutable", help="a rule (label, path or number) to make immutable"),
    ] = None,
    carry: Annotated[
        list[str] | None,
        typer.Option("--carry", help="NAME=RULE: the rule that carries a game parameter"),
    ] = None,
    language: Annotated[str, typer.Option(help="the document's language (it, en, ...)")] = "",
) -> None:
    """Read a rule document into a ruleset folder to review, edit, then `init` (101, 102)."""
    import tempfile

    from referee import importer

    try:
        text = document.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {document}: {exc}")
    pairs = []
    for item in carry or []:
        name, sep, ref = item.partition("=")
        if not sep or not name.strip() or not ref.strip():
            fail(f"--carry {item!r}: write NAME=RULE, e.g. --carry 'winning_score=§ 5.4'")
        pairs.append((name.strip(), ref.strip()))
    doc = importer.read_document(text)
    options = importer.Options(language, tuple(immutable or ()), tuple(pairs))
    try:
        with tempfile.TemporaryDirectory() as scratch:  # the options must name real rules
            importer.write_folder(doc, options, str(document), Path(scratch))
            ruleset = rulebook.load_folder(Path(scratch))
        importer.write_folder(doc, options, str(document), out)
    except (OSError, rulebook.RulesetError) as exc:
        fail(str(exc))
    typer.echo("\n".join(importer.summary(doc)))
    mutable = sum(1 for r in ruleset.rules if r.mutable)
    typer.echo(
        f"wrote {len(ruleset.rules)} rule(s) to {out} ({mutable} mutable); review them, "
        "then point [game] ruleset at the folder and run init"
    )


@app.command()
def export(
    folder: Annotated[Path, typer.Argument(help="a ruleset folder")],
    form: Annotated[str | None, typer.Option("--format", help="md or txt")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="file to write")] = None,
) -> None:
    """Write a ruleset folder back as one document, in the source's own numbering."""
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


def main() -> None:
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # one line per job is noise
    if len(sys.argv) <= 1:
        sys.argv.append("--help")
    try:
        code = app(standalone_mode=False)
    except typer.Exit as exc:
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
