"""The hash chain (213): one link per mail and deadline, its head in every mail and in `status`.

The chain a live game stores is rebuilt link by link from its records (each names the head
before it, each head is the digest of its record), every mail carries the head of the link it
belongs to, and `status` shows the last head.
"""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
import tomllib
from email import message_from_bytes
from pathlib import Path

from examples.make_examples import START, build
from referee.config import load_settings
from referee.core import chain
from referee.service import Referee
from referee.store.store import Store
from tests.sink import game_config, play_by_maildir

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]


def test_every_mail_and_status_carry_the_head_of_a_chain_that_links(tmp_path: Path) -> None:
    extra = f'archive = "{tmp_path / "archive"}"\nsite = "{tmp_path / "site"}"'
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}", game_extra=extra)
    settings = load_settings(config)
    _, mails = build("en")
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails[:8])
        links = store.chain(game_id)
        outbox = store.outbox(game_id)
    finally:
        store.close()

    previous = chain.GENESIS
    for number, link in enumerate(links, start=1):
        record = json.loads(link.record)
        assert link.seq == record["seq"] == number
        assert record["prev"] == previous
        assert link.head == chain.head_of(link.record)
        if link.kind == "mail":
            assert link.raw is not None and record["raw"] == chain.mail_digest(link.raw)
        previous = link.head
    kinds = {link.kind for link in links}
    assert kinds == {"start", "mail", "tick"} and sum(k.kind == "mail" for k in links) == 8
    raws = [link.raw for link in links if link.kind == "mail"]
    assert raws == [raw for raw, _, _ in mails[:8]]  # every inbound message, as received

    heads = {link.head: link.seq for link in links}
    for row in outbox:
        shown = str(message_from_bytes(row.raw)["X-Nomic-Chain"])
        seq, head = shown.split()
        assert heads[head] == int(seq)

    done = subprocess.run([*CLI, "status", str(config), "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["chain"] == {"link": links[-1].seq, "head": links[-1].head}
    done = subprocess.run([*CLI, "status", str(config)], capture_output=True, text=True)
    assert f"record: link {links[-1].seq}, head {links[-1].head}" in done.stdout
    # the archive and the site name the same head as the last mail and `status`
    archive = tomllib.loads((tmp_path / "archive" / "chain.toml").read_text(encoding="utf-8"))
    assert archive == {"link": links[-1].seq, "head": links[-1].head}
    front = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert f"link {links[-1].seq}, head <code>{links[-1].head}</code>" in front


def test_the_state_digest_hashes_exactly_the_states_repr(tmp_path: Path) -> None:
    """The digest reuses the text of unchanged parts; it must hash `repr(state)` itself, state
    after state through a whole example game (rules amended, proposals, appeals, scores)."""
    config = game_config(tmp_path, "sqlite://")
    settings = load_settings(config)
    _, mails = build("it")
    store = Store(settings.database_url)
    digester = chain.StateDigest()
    try:
        referee = Referee.create(store, settings, START)
        checked = 0
        for raw, at, _sender in mails:
            referee.receive(raw, at)
            state = referee.state
            assert digester.text(state) == repr(state)
            assert digester(state) == chain.digest(repr(state).encode("utf-8"))
            checked += 1
        assert checked == len(mails) > 30 and len(referee.state.proposals) > 3
    finally:
        store.close()


@dataclasses.dataclass(frozen=True)
class _Item:
    name: str
    n: int = 0


@dataclasses.dataclass(frozen=True)
class _Shape:
    label: str
    first: tuple[_Item, ...] = ()
    count: int = 0
    second: tuple[_Item, ...] = ()
    hidden: str = dataclasses.field(default="", repr=False)
    last: tuple[tuple[str, int], ...] = ()


def test_the_state_digest_follows_every_kind_of_change_in_any_order() -> None:
    """Members replaced, appended, inserted, removed and moved, new tuples of the same members,
    fields changed before and after a changed one, tuples of none, one and two members: the
    digest resumes from the hash before the first change and always equals the `repr`'s."""
    chooser = random.Random(213)
    pool = [_Item(f"ità {k}", k) for k in range(12)]
    shape = _Shape("start")
    digester = chain.StateDigest()
    for step in range(600):
        which = chooser.choice(["first", "second", "last", "label", "count", "hidden", "same"])
        if which in ("first", "second"):
            items = list(getattr(shape, which))
            move = chooser.choice(["append", "replace", "insert", "remove", "swap", "copy"])
            if move == "append" or not items:
                items.append(chooser.choice(pool))
            elif move == "replace":
                items[chooser.randrange(len(items))] = _Item(f"new {step}", step)
            elif move == "insert":
                items.insert(chooser.randrange(len(items)), chooser.choice(pool))
            elif move == "remove":
                items.pop(chooser.randrange(len(items)))
            elif move == "swap" and len(items) > 1:
                items[0], items[-1] = items[-1], items[0]
            kept = tuple(items[:4])
            if which == "first":
                shape = dataclasses.replace(shape, first=kept)
            else:
                shape = dataclasses.replace(shape, second=kept)
        elif which == "last":
            shape = dataclasses.replace(shape, last=(*shape.last[-1:], ("x", step)))
        elif which == "label":
            shape = dataclasses.replace(shape, label=f"label {step % 3}")
        elif which == "count":
            shape = dataclasses.replace(shape, count=step % 2)
        elif which == "hidden":
            shape = dataclasses.replace(shape, hidden=str(step))
        else:
            shape = dataclasses.replace(shape, first=tuple(list(shape.first)))
        if step % 5 == 0:
            assert digester.text(shape) == repr(shape)
        assert digester(shape) == chain.digest(repr(shape).encode("utf-8")), step
