"""Every mail as a player sees it, in both languages: the gallery's mails, checked (107, 205).

The mails come from the gallery script (scripts/gallery.py), which replays the README's
example games and a scripted game through the real service. For each kind of mail, in English
and Italian: the HTML shows no raw Markdown, the plain part has no Markdown syntax and no line
over 72 columns (but for a single unbreakable word), the Italian mail holds no English UI word,
and plurals agree with their numbers. A proposal's text cannot become markup. The last test
runs the gallery with Debian's headless Chromium and checks the screenshots it takes.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import tomllib
from functools import cache
from itertools import pairwise
from pathlib import Path
from types import ModuleType

import pytest

from referee.core.changes import RuleChangeKind, ScoreCause
from referee.core.events import Notice, NoticeKind
from referee.core.model import AppealKind, Phase, ProposalKind, ProposalStatus
from referee.mail.markup import WIDTH
from referee.mail.render import Renderer, templates_folder
from referee.mail.worddiff import word_diff

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("en", "it")
MARKDOWN_IN_HTML = ("**", "##", "|---", "`", "~~~")
MARKDOWN_IN_TEXT = ("**", "`", "~~~", "|---", "##", "__")
CHROMIUM = "/usr/bin/chromium"


@cache
def _gallery() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gallery", ROOT / "scripts" / "gallery.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gallery"] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@cache
def mails(language: str) -> dict[str, tuple[str, str, str]]:
    """(subject, plain, html) of the first mail of every kind the games send."""
    gallery = _gallery()
    chosen = gallery.pick(gallery.play(language))
    return {kind: gallery.parts(mail.raw) for kind, mail in chosen.items()}


def visible(page: str) -> str:
    """The text a reader sees in an HTML part."""
    body = re.sub(r"(?s)<head>.*?</head>", "", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_games_send_every_kind_of_mail(language: str) -> None:
    kinds = set(mails(language))
    assert {k.value for k in NoticeKind} <= kinds
    assert set(_gallery().REPLY_KINDS) <= kinds
    assert set(_gallery().OPERATOR_KINDS) == {"bounced"} <= kinds  # the notice of a bounce
    assert {"unreadable", "unreadable_note", "game_started-attached"} <= kinds  # issue 15, 205


@pytest.mark.parametrize("language", LANGUAGES)
def test_html_shows_no_raw_markdown_and_styles_inline(language: str) -> None:
    for kind, (_, _, page) in mails(language).items():
        text = visible(page)
        for mark in MARKDOWN_IN_HTML:
            assert mark not in text, (language, kind, mark)
        assert "<style" not in page and "<link" not in page and "class=" not in page, kind
        assert 'style="max-width:640px' in page and 'name="viewport"' in page, kind
        assert f'<html lang="{language}">' in page


@pytest.mark.parametrize("language", LANGUAGES)
def test_tables_and_rule_headings_are_real_html(language: str) -> None:
    box = mails(language)
    for kind in ("reply-scores", "reply-rules", "winner", "vote_result", "ruleset"):
        assert "<table" in box[kind][2] and "<th" in box[kind][2], kind
    rules = box["reply-rules"][2]
    word = "Rule" if language == "en" else "Regola"
    heading = re.search(rf"<h3[^>]*>{word} 101( — [^<]+)?</h3>\s*<p", rules)
    assert heading is not None, "the rule's number and title are a heading of their own"
    assert "<h2" in rules
    done = "Done." if language == "en" else "Fatto."
    assert re.search(rf"<strong[^>]*>{done}</strong>\s*</p>\s*<h2", rules), "Done. then a heading"


@pytest.mark.parametrize("language", LANGUAGES)
def test_plain_parts_read_as_plain_text(language: str) -> None:
    for kind, (_, text, _) in mails(language).items():
        for mark in MARKDOWN_IN_TEXT:
            assert mark not in text, (language, kind, mark)
        for line in text.splitlines():
            assert not line.startswith("|"), (language, kind, line)
            if len(line) > WIDTH:
                words = line.strip().removeprefix("> ").removeprefix("- ").split()
                assert len(words) == 1, (language, kind, line)


@pytest.mark.parametrize("language", LANGUAGES)
def test_plain_tables_are_aligned_columns(language: str) -> None:
    text = mails(language)["reply-scores"][1]
    rows = [line for line in text.splitlines() if line.startswith(("Carla", "Ada", "Bob"))]
    assert len(rows) == 3
    ends = {len(line.split("  ")[0].rstrip()) for line in rows}
    numbers = {re.search(r"\d+", line).end() for line in rows}  # type: ignore[union-attr]
    assert len(numbers) == 1 and len(ends) > 1, "the points line up on the right"


def _template_words(language: str) -> set[str]:
    """The words a language's templates and name tables write (not the values they print)."""
    folder = templates_folder() / language
    words: set[str] = set()
    for path in folder.rglob("*.j2"):
        source = path.read_text(encoding="utf-8")
        source = re.sub(r"(?s)\{#.*?#\}", " ", source)
        # Names the templates compare values with, or look up, are the game's keys, not words.
        source = re.sub(r"(word|get)\(\s*[\"'][^\"']*[\"']\s*\)", " ", source)
        source = re.sub(r"cite\([^)]*\)", " ", source)  # the mechanics a mail cites
        source = re.sub(r"(==|!=)\s*\"[^\"]*\"|\bin \([^)]*\)", " ", source)
        literal = " ".join(
            re.findall(
                r"[\"']([^\"'{}]*)[\"']", " ".join(re.findall(r"(?s)\{[{%].*?[%}]\}", source))
            )
        )
        outside = re.sub(r"(?s)\{[{%].*?[%}]\}", " ", source)
        outside = re.sub(r"^Subject:", " ", outside, flags=re.M)
        words |= set(re.findall(r"[A-Za-zÀ-ÿ]+", outside + " " + literal))
    with (folder / "words.toml").open("rb") as handle:
        for table, names in tomllib.load(handle).items():
            if table != "format":
                for value in names.values():
                    words |= set(re.findall(r"[A-Za-zÀ-ÿ]+", value))
    return words


@cache
def english_ui_words() -> frozenset[str]:
    """Words of the English templates that the Italian templates never write."""
    english = {w.lower() for w in _template_words("en") if len(w) > 2}
    italian = {w.lower() for w in _template_words("it")}
    return frozenset(english - italian)


def test_the_english_word_list_is_a_real_list() -> None:
    words = english_ui_words()
    assert {"proposal", "rule", "vote", "debate", "king", "points", "scores"} <= words
    assert len(words) > 200


def _player_and_rule_words(language: str) -> set[str]:
    """Words players wrote (their mails' bodies, their names) and rules say: a check of the
    UI's words leaves them aside."""
    import mailbox

    ruleset = (ROOT / "ruleset" / language).rglob("*")
    texts = [p.read_text(encoding="utf-8") for p in ruleset if p.is_file()]
    box = mailbox.mbox(str(ROOT / "examples" / f"game-{language}.mbox"), create=False)
    for message in box:
        payload = message.get_payload(decode=True)
        texts.append(payload.decode("utf-8") if isinstance(payload, bytes) else "")
        texts.append(str(message["From"]))
    box.close()
    texts += [step.body.get(language, "") for step in _gallery().SCRIPT]
    return {w.lower() for text in texts for w in re.findall(r"[A-Za-zÀ-ÿ]+", text)}


def test_italian_mail_is_entirely_italian() -> None:
    english = english_ui_words()
    theirs = _player_and_rule_words("it")
    for kind, (subject, text, page) in mails("it").items():
        if kind.startswith(("reply", "stranger")):
            subject = ""  # "Re: " and the player's own subject
        for part in (subject, text, visible(page)):
            part = re.sub(r"\S+@\S+", " ", part)  # addresses are names, not words
            words = {w.lower() for w in re.findall(r"[A-Za-zÀ-ÿ]+", part)}
            leaked = sorted((words & english) - theirs)
            assert not leaked, (kind, leaked)


def test_english_mail_is_entirely_english() -> None:
    italian = {w.lower() for w in _template_words("it") if len(w) > 3}
    italian -= {w.lower() for w in _template_words("en")}
    theirs = _player_and_rule_words("en")
    for kind, (subject, text, page) in mails("en").items():
        if kind.startswith(("reply", "stranger")):
            subject = ""
        for part in (subject, text, visible(page)):
            words = {w.lower() for w in re.findall(r"[A-Za-zÀ-ÿ]+", part)}
            assert not sorted((words & italian) - theirs), kind


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_value_of_the_game_is_named_in_each_language(language: str) -> None:
    with (templates_folder() / language / "words.toml").open("rb") as handle:
        words = tomllib.load(handle)
    assert {p.value for p in Phase} <= set(words["phase"])
    assert {s.value for s in ProposalStatus} <= set(words["status"])
    assert {k.value for k in ProposalKind} <= set(words["kind"])
    assert {k.value for k in AppealKind} <= set(words["appeal"])
    assert {"yes", "no", "abstain"} <= set(words["vote"])
    assert {k.value for k in RuleChangeKind} <= set(words["change"])
    assert {c.value for c in ScoreCause} <= set(words["cause"])


def test_dates_are_written_in_the_mails_language() -> None:
    from datetime import UTC, datetime

    moment = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    it = Renderer("it", "Europe/Rome", "N", "r@x.example").when(moment)
    en = Renderer("en", "Europe/Rome", "N", "r@x.example").when(moment)
    assert it == "martedì 1 dicembre 2026, 10:00 CET"
    assert en == "Tuesday 1 December 2026, 10:00 CET"
    july = Renderer("it", "Europe/Rome", "N", "r@x.example").when(moment.replace(month=7))
    assert july == "mercoledì 1 luglio 2026, 11:00 CEST"
    text = mails("it")["proposal_circulated"][1]
    assert "dicembre" in text and not re.search(r"December|Tuesday|\d{4}-\d\d-\d\d", text)


@pytest.mark.parametrize(
    ("language", "count", "expected"),
    [
        ("en", 1, "1 vote cast before is void"),
        ("en", 2, "2 votes cast before are void"),
        ("it", 1, "il voto già dato decade"),
        ("it", 2, "i 2 voti già dati decadono"),
    ],
)
def test_plurals_agree_with_their_number(language: str, count: int, expected: str) -> None:
    renderer = Renderer(language, "Europe/Rome", "N", "r@x.example")
    items = [{"line": "", "ok": True, "code": "revision_accepted", "data": {"number": 301}}]
    items[0]["data"]["voided"] = count  # type: ignore[index]
    out = renderer.render("reply", {"items": items, "subject": "x", "name": "Bob"})
    assert expected in " ".join(out.text.split())


@pytest.mark.parametrize("language", LANGUAGES)
def test_rule_references_in_help_agree_in_number(language: str) -> None:
    text = " ".join(mails(language)["reply-help"][1].split())
    one, many = ("rule", "rules") if language == "en" else ("regola", "regole")
    assert re.search(rf"\({one} \d+\)", text) and re.search(rf"\({many} \d+, \d+\)", text)
    assert not re.search(rf"\({many} \d+\)", text) and not re.search(rf"\({one} \d+, ", text)


@pytest.mark.parametrize("language", LANGUAGES)
def test_proposals_revisions_and_amendments_show_a_word_diff(language: str) -> None:
    box = mails(language)
    for kind in ("proposal_circulated", "proposal_revised"):
        _, text, page = box[kind]
        assert "<del style=" in page and "<ins style=" in page, kind
        assert "line-through" in page and "underline" in page  # marked without colour too
        assert "[-" in text and "{+" in text, kind
        text = " ".join(text.split())
        legend = "[-deleted-] {+added+}" if language == "en" else "[-tolto-] {+aggiunto+}"
        assert legend in text


def test_word_diff_marks_changed_phrases() -> None:
    diff = word_diff("The first player to reach 100 points wins.", "The first to reach 25 wins.")
    assert str(diff).replace(" ", "") == "Thefirst[-player-]toreach[-100points-]{+25+}wins."
    assert (diff.deleted, diff.inserted) == (2, 1)
    phrase = word_diff("All players must obey the rules.", "Every player must obey every rule.")
    assert str(phrase) == "[-All players-]{+Every player+} must obey [-the rules-]{+every rule+}."
    assert not word_diff("same words", "same words").changed


def test_a_proposal_cannot_inject_markup_or_style() -> None:
    from referee.core.events import Propose
    from tests.helpers import CARLA, Game

    attack = (
        '<span style="position:fixed;top:0">X</span> <style>*{display:none}</style> '
        '" style="color:red" zq0qz zd0dz **bold** | a |\n|---|\n<img src=x onerror=alert(1)>'
        " [link](javascript:alert(1)) <a href=http://evil>e</a>"
    )
    game = Game()
    game.do(Propose(CARLA, ProposalKind.ENACT, text=attack))
    effect = next(
        e for e in game.log if isinstance(e, Notice) and e.kind is NoticeKind.PROPOSAL_CIRCULATED
    )
    for language in LANGUAGES:
        out = Renderer(language, "Europe/Rome", "N", "r@x.example").render(
            "notices/proposal_circulated", effect.data
        )
        body = out.html.split("<body", 1)[1]
        for bad in ("<span", "<style", "<img", "<a ", 'href="javascript', "<table><", "<p>|"):
            assert bad not in body, bad
        assert not re.search(r"<[a-z]+[^>]*(position:|color:red)", body)
        assert "&lt;style&gt;" in body and "zq0qz" in body  # shown as written, not interpreted
        assert "onerror=alert(1)" in out.text  # the plain part keeps what was written


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_gallery_renders_and_photographs_every_mail(tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI: tests/run.sh installs it")
        pytest.skip("Debian's chromium is not installed")
    out = tmp_path / "gallery"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gallery.py"), "--out", str(out), "--screenshots"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    for language in LANGUAGES:
        for kind in ("proposal_revised", "vote_result", "winner", "stranger", "reply-refused"):
            assert (out / language / f"{kind}.txt").read_text(encoding="utf-8").strip()
            phone = _png_size(out / language / f"{kind}-412.png")
            desktop = _png_size(out / language / f"{kind}-1280.png")
            assert phone[0] == 412 and desktop[0] == 1280
            assert phone[1] >= desktop[1] >= 300, "the phone's narrow column runs longer"
    shutil.rmtree(out)


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_line_of_the_plain_part_reads_as_a_command(language: str) -> None:
    """A reply that quotes a mail without '>' marks must not seem to give the commands the
    mail only mentions: wrapping never starts a line with a command word (the lines a
    template begins are the sender checks' business: a line of the referee's own mail)."""
    from referee.mail.commands import match

    for kind, (_, text, _) in mails(language).items():
        lines = text.splitlines()
        for before, line in pairwise(lines):
            wrapped = before.strip() and before.strip("=- ") and not line.startswith(("> ", "- "))
            if wrapped:  # a line the wrapping began, inside a paragraph or a list item
                assert match(line.strip()) is None, (language, kind, line)
