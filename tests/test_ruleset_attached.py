"""The ruleset rule 205 requires is never cut: a long one goes whole as attached files (205).

A game whose ruleset is long (many long rules, written with accents and signs beyond ASCII)
is played through the live service, the mail read from the Maildir by `run --once`. Every mail
that carries the whole ruleset (the opening, and the ruleset and scores after a change) keeps
what changed and the scores in its body, with a note naming the files, and carries the whole
mail as it would have read in full, byte for byte, as `ruleset.txt` (UTF-8) and
`ruleset.html`: the same game played with no such limit mails exactly those words in its body.
A short ruleset stays in the body. `replay` makes the same mail, attachments and all.
"""

from __future__ import annotations

import random
import shutil
from datetime import datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from examples.make_examples import START, build
from referee.config import Settings, load_settings
from referee.replay import replay, write_mbox
from referee.rulebook import builtin_folder
from referee.store.store import Store
from tests.helpers import CARLA, DAY, mail
from tests.sink import game_config, play_by_maildir

# A rule's words, beyond ASCII too: accents, signs, a letter outside the BMP.
WORDS = ["player", "vote", "rule", "points", "turn", "King", "città", "perché", "naïve", "€5"]
WORDS += ["—", "«quoted»", "déjà-vu", "judge", "appeal", "𝔑omic", "½", "même", "straße", "più"]
CARRIERS = ("game_started", "ruleset")  # the notices of this play that carry the whole ruleset
NAMES = {"en": "ruleset", "it": "regolamento"}


def long_ruleset(folder: Path, language: str, rules: int = 40) -> Path:
    """The built-in ruleset and `rules` long immutable rules more (about 3,500 characters
    each, in three paragraphs), made from a fixed seed."""
    shutil.copytree(builtin_folder(language), folder)
    chance = random.Random(205)
    for number in range(150, 150 + rules):
        paragraphs = [
            " ".join(chance.choice(WORDS) for _ in range(200)).capitalize() + "." for _ in range(3)
        ]
        text = "\n\n".join(paragraphs)
        front = f'+++\nnumber = {number}\nmutable = false\ntitle = "Long rule {number}"\n+++\n'
        (folder / f"{number}.md").write_text(front + text + "\n", encoding="utf-8")
    return folder


def config(folder: Path, language: str, ruleset: Path, extra: str = "") -> Settings:
    path = game_config(folder, f"sqlite:///{folder / 'g.db'}")
    text = path.read_text(encoding="utf-8").replace('language = "en"', f'language = "{language}"')
    text = text.replace("[game]\n", f'[game]\nruleset = "{ruleset}"\n', 1)
    path.write_text(text + extra, encoding="utf-8")  # `extra` joins the last table, [limits]
    return load_settings(path)


def played(settings: Settings, mails: list[tuple[bytes, datetime, str]]) -> list[bytes]:
    """The game played live on these mails: the raw mail the referee sent, in order."""
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        return [row.raw for row in store.outbox(game_id) if row.kind in CARRIERS]
    finally:
        store.close()


def parsed(raw: bytes) -> EmailMessage:
    message = message_from_bytes(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def files_of(message: EmailMessage) -> dict[str, bytes]:
    out = {}
    for part in message.iter_attachments():
        assert isinstance(part, EmailMessage)
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes) and part.get_filename()
        out[str(part.get_filename())] = payload
    return out


def plain(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return str(body.get_content()).replace("\r\n", "\n")


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_long_ruleset_is_attached_whole_byte_for_byte(tmp_path: Path, language: str) -> None:
    ruleset = long_ruleset(tmp_path / "rules", language)
    _, mails = build(language)
    mails = mails[:7]  # proposal 301 is adopted: a ruleset and scores mail (205)
    limited = played(config(tmp_path / "limited", language, ruleset), mails)
    unlimited = config(tmp_path / "whole", language, ruleset, "ruleset_chars = 10000000\n")
    whole = played(unlimited, mails)
    kinds = [str(parsed(raw)["Subject"]) for raw in limited]
    assert len(limited) == len(whole) and len(limited) >= 3 * 2, kinds  # 3 players, 2 notices
    rule_texts = [
        (ruleset / f"{n}.md").read_text(encoding="utf-8").split("+++\n")[2].strip()
        for n in range(150, 190)
    ]
    name = NAMES[language]
    for short, full in zip(limited, whole, strict=True):
        mail, inline = parsed(short), parsed(full)
        files = files_of(mail)
        assert sorted(files) == [f"{name}.html", f"{name}.txt"]
        assert files_of(inline) == {}
        # the text file is the whole mail as it reads with the ruleset in its body
        expected = f"{inline['Subject']}\n\n{plain(inline)}"
        assert files[f"{name}.txt"] == expected.encode("utf-8")
        attached = files[f"{name}.txt"].decode("utf-8")
        for text in rule_texts:  # every rule, every word, none cut
            assert " ".join(text.split()) in " ".join(attached.split())
        assert "𝔑omic" in attached and "€5" in attached
        page = files[f"{name}.html"].decode("utf-8")
        assert "Long rule 189" in page and page.startswith("<!DOCTYPE html>")
        # the body: what changed, the scores and a note, not the rules
        body = plain(mail)
        assert len(body) < 100_000 < len(plain(inline))
        assert "Long rule" not in body and f"{name}.txt" in body and f"{name}.html" in body
        scores, note = ("The scores", "Nothing is left out.")
        if language == "it":
            scores, note = ("I punteggi", "Non manca nulla.")
        assert scores in body and "Carla De Santis" in body and note in body
        assert mail["Subject"] == inline["Subject"] and mail["To"] == inline["To"]
    changed = [parsed(raw) for raw in limited if "301" in str(parsed(raw)["Subject"])]
    assert changed, kinds  # the 205 mail after proposal 301 opens with what changed
    assert ("What changed" if language == "en" else "Che cosa è cambiato") in plain(changed[0])


def test_a_short_ruleset_stays_in_the_body(tmp_path: Path) -> None:
    _, mails = build("en")
    settings = load_settings(game_config(tmp_path, f"sqlite:///{tmp_path / 'g.db'}"))
    sent = played(settings, mails[:7])
    assert sent
    for raw in sent:
        mail = parsed(raw)
        assert files_of(mail) == {}
        assert "Rule 101" in plain(mail) and "ruleset.txt" not in plain(mail)


def test_replay_makes_the_attached_ruleset_byte_for_byte(tmp_path: Path) -> None:
    ruleset = long_ruleset(tmp_path / "rules", "it")
    _, mails = build("it")
    mails = mails[:7]
    settings = config(tmp_path, "it", ruleset)
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        live = [(row.raw, row.created_at) for row in store.outbox(game_id)]
    finally:
        store.close()
    assert any(b"regolamento.txt" in raw for raw, _ in live)
    write_mbox(tmp_path / "inbound.mbox", [(raw, at) for raw, at, _ in mails], "p@example.org")
    replay(settings, tmp_path / "inbound.mbox", until=mails[-1][1], out=tmp_path / "replayed.mbox")
    write_mbox(tmp_path / "live.mbox", live, settings.game.address)
    assert (tmp_path / "replayed.mbox").read_bytes() == (tmp_path / "live.mbox").read_bytes()


@pytest.mark.parametrize("language", ["en", "it"])
def test_rules_asked_for_a_long_ruleset_come_attached(tmp_path: Path, language: str) -> None:
    """RULES (205 on demand) answers as the ruleset mail does: past the limit, attached."""
    ruleset = long_ruleset(tmp_path / "rules", language)
    settings = config(tmp_path, language, ruleset)
    asked = mail(CARLA, "RULES" if language == "en" else "REGOLE", subject="rules")
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, [(asked, START + DAY, CARLA)])
        (reply,) = [r for r in store.outbox(game_id) if r.kind == "reply"]
    finally:
        store.close()
    answer = parsed(reply.raw)
    name = NAMES[language]
    files = files_of(answer)
    assert sorted(files) == [f"{name}.html", f"{name}.txt"]
    text = files[f"{name}.txt"].decode("utf-8")
    title = "The ruleset and the scores" if language == "en" else "Il regolamento e i punteggi"
    assert text.startswith(f"[Test Nomic] {title}\n\n")
    for number in (101, 209, 150, 189):
        rule = (ruleset / f"{number}.md").read_text(encoding="utf-8").split("+++\n")[2]
        assert " ".join(rule.split()) in " ".join(text.split())
    body = plain(answer)
    assert len(body) < 10_000 and f"{name}.txt" in body and "Long rule" not in body
    assert ("Done." if language == "en" else "Fatto.") in body
