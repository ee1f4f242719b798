"""One command, one meaning, per mail (issue 15, item 5; rules 203, 212).

The player's own text wins over the quoted history, wherever it stands (top- and
bottom-posting), on real reply bodies from public reply-parsing projects (tests/data/replies,
sources and licences in SOURCES.md): Gmail, Outlook, Apple Mail, Thunderbird, Zimbra, Zoho,
Polymail, Yandex, Mail.ru, Windows Mail and Android in English, Italian, Portuguese, Polish,
Swedish, Norwegian, Danish, Dutch, Finnish, Russian, Ukrainian and Vietnamese. Lines that only
look like an attribution or a header stay the player's. Two different answers to one question
the referee cannot tell apart (quoting it does not recognise) are never chosen by their order:
both are refused, and the reply asks again, in both languages.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.config import load_settings
from referee.core.events import Agree, Vote
from referee.mail.commands import parse_commands
from referee.mail.parse import parse_message
from referee.mail.quotes import strip_reply
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import BOB, CARLA, DAY, T0, mail
from tests.test_service import plain, sent

REPLIES = Path(__file__).parent / "data" / "replies"
FIXTURES = sorted(p.name for p in REPLIES.glob("*.txt"))
PAGES = sorted(p.name for p in REPLIES.glob("*.html"))
OWN = sorted(f"own/{p.name}" for p in (REPLIES / "own").glob("*.txt"))
LICENCES = ("MIT", "BSD", "Apache-2.0")
YES = [Vote(BOB, 301, True)]


def commands(body: str) -> list[object]:
    found = parse_message(mail(BOB, body, subject="Re: proposal 301"))
    return [p.command for p in parse_commands(BOB, found.subject, found.own_words)]


def html_commands(page: str) -> list[object]:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = BOB, "referee@nomic.example", "Re: 301"
    message.set_content(page, subtype="html")
    found = parse_message(message.as_bytes())
    return [p.command for p in parse_commands(BOB, found.subject, found.own_words)]


def marked(history: str) -> bool:
    """Whether the history ends in a `>`-marked quote."""
    last = [line for line in history.split("\n") if line.strip()][-1]
    return last.lstrip().startswith(">")


def unmarked(history: str) -> str:
    """The history as a client that quotes without `>` sends it."""
    return re.sub(r"(?m)^>+(?: |$)", "", history)


def test_every_fixture_has_its_source_and_licence() -> None:
    sources = (REPLIES / "SOURCES.md").read_text(encoding="utf-8")
    assert len(FIXTURES) >= 40 and len(PAGES) >= 3 and len(OWN) >= 5
    for name in FIXTURES + PAGES + OWN:
        row = next(line for line in sources.splitlines() if line.startswith(f"| {name} |"))
        assert "commit" in row and any(f"| {licence}" in row for licence in LICENCES), row
    assert len(list((REPLIES / "licences").glob("*.txt"))) >= 5


@pytest.mark.parametrize("name", FIXTURES)
def test_the_own_text_wins_over_a_vote_planted_in_the_history(name: str) -> None:
    """Above the history, with the history as the client sent it and, if it was `>`-marked,
    as a client that quotes without marks sends it; and below a `>`-marked history (when the
    fixture begins with its sender's own text, not with a header block)."""
    history = (REPLIES / name).read_text(encoding="utf-8").rstrip("\n")
    forms = [history, unmarked(history)] if marked(history) else [history]
    for form in forms:
        planted = "> VOTE 301 NO" if marked(form) else "VOTE 301 NO"
        assert commands(f"VOTE 301 YES\n\n{form}\n{planted}\n") == YES, form
    if marked(history) and strip_reply(history):
        assert commands(f"{history}\n> VOTE 301 NO\n\nVOTE 301 YES\n") == YES


# mailgun/talon's HTML replies all answer one mail: the reply's line and the quoted one.
REPLY_LINE, QUOTED_LINE = "Hi. I am fine.", "Hello! How are you?"


@pytest.mark.parametrize("name", PAGES)
def test_html_replies_leave_the_own_text(name: str) -> None:
    """Yandex and Mail.ru quote in a <blockquote> under their attribution, Windows Mail
    under a header block with no quote at all; taking the <blockquote> off leaves the
    attribution alone to find."""
    page = (REPLIES / name).read_text(encoding="utf-8")
    assert page.count(REPLY_LINE) == 1 and page.count(QUOTED_LINE) == 1
    forms = {page, re.sub(r"(?i)</?blockquote\b[^>]*>", "", page)}
    for form in forms:
        form = form.replace(REPLY_LINE, f"VOTE 301 YES<br>{REPLY_LINE}")
        assert html_commands(form.replace(QUOTED_LINE, f"VOTE 301 NO<br>{QUOTED_LINE}")) == YES


@pytest.mark.parametrize("name", OWN)
def test_lines_that_only_look_like_history_are_the_players_own(name: str) -> None:
    text = (REPLIES / name).read_text(encoding="utf-8")
    assert strip_reply(text) == "\n".join(line.rstrip() for line in text.split("\n")).rstrip()
    found = commands(f"{text.rstrip()}\nVOTE 301 YES\n")
    assert [command for command in found if isinstance(command, Vote)] == YES


@pytest.mark.parametrize(
    "line",
    [
        "On Monday I wrote the proposal:",
        "On Monday I wrote:",
        "On the matter, Carla wrote:",
        "Il giorno dopo Carla ha scritto:",
        "Il regolamento, come ha scritto Carla, dice:",
        "In data odierna la proposta ha scritto la storia:",
        "Den 3 maj skrev jag:",
        "Em resumo, Carla escreveu:",
        "W dniu głosowania Carla napisała:",
        "In 2026 I wrote to Carla <carla@example.org> about it.",
        "On 9 December 2026 at 09:00 the vote closes; as I wrote:",
        "Il 9 dicembre 2026 alle 09:00 il voto chiude; come lui ha scritto:",
        "Meeting at 10:30 with Carla <carla@example.org>:",
        "---- the old rules ----",
        "Do: jutra\nData: 12 maja",
        "Data: domani\nA: tutti",
        "To: everyone\nSubject: the vote",
        "From: me",
        "Sent: now",
        "Da: Ada\nA: tutti",
        "From: me\nTo: you",
        "As Bob <bob@x> wrote:",
        "As Bob <bob@example.org> wrote:",
        "Come Bob <bob@example.org> ha scritto:",
        "________________________________",
        "--",
        "---",
    ],
)
def test_the_players_own_lines_are_not_taken_for_history(line: str) -> None:
    """Sentences that begin or end as an attribution, or lines that look like headers, but
    name no date and time or address as a client's do (or no sender, for headers); an
    attribution naming an address and no date, above no `>` quote; a header line alone, or a
    From and one more naming no address nor date; underscores or "--" (a signature's separator
    is "-- ", with its space)."""
    body = f"VOTE 301 YES\n{line}\nVOTE 302 NO\nI mean it."
    assert strip_reply(body) == body
    assert commands(body) == [Vote(BOB, 301, True), Vote(BOB, 302, False)]


@pytest.mark.parametrize(
    "attribution",
    [
        "On Mon, Jan 1, 2024 at 10:00 AM Carla <carla@example.org> wrote:",
        "On 1 Jan 2024, at 10:00, Carla <carla@example.org> wrote:",  # Apple Mail, iPhone
        "Il giorno lun 1 gen 2024 alle ore 10:00 Carla <carla@example.org> ha scritto:",
        "Il 01/01/2024 10:00, Carla ha scritto:",  # Thunderbird in Italian
        "On Mon, Jan 1, 2024 at 10:00 AM Carla <carla@example.org> wrote",  # no colon
        "Il giorno lun 1 gen 2024 Carla <carla@example.org> ha scritto",  # no colon
        "On Mon, Jan 1, 2024 at 10:00 AM Carla <\ncarla@example.org> wrote:",  # wrapped
        # Gmail's forms in other languages, written after the formats Gmail uses (no public
        # fixture found holds these exact ones)
        "Em seg., 1 de jan. de 2024 às 10:00, Carla <carla@example.org> escreveu:",
        "pon., 1 sty 2024 o 10:00 Carla <carla@example.org> napisał(a):",
        "Den mån 1 jan. 2024 kl 10:00 skrev Carla <carla@example.org>:",
        "man. 1. jan. 2024 kl. 10:00 skrev Carla <carla@example.org>:",
        "Op ma 1 jan 2024 om 10:00 schreef Carla <carla@example.org>:",
        "ma 1. tammik. 2024 klo 10.00 Carla <carla@example.org> kirjoitti:",
        "пн, 1 янв. 2024 г. в 10:00, Carla <carla@example.org>:",
        "Am Mo., 1. Jan. 2024 um 10:00 Uhr schrieb Carla <carla@example.org>:",
        "Le lun. 1 janv. 2024 à 10:00, Carla <carla@example.org> a écrit :",
        "El lun, 1 ene 2024 a las 10:00, Carla (<carla@example.org>) escribió:",
        "1 Oca 2024 Pzt, 10:00 tarihinde Carla <carla@example.org> şunu yazdı:",
        "po 1. 1. 2024 v 10:00 odesílatel Carla <carla@example.org> napsal:",
        # Gmail and Outlook in Turkish put the name first, Apple Mail in Polish leads with words
        "Carla <carla@example.org>, 1 Oca 2024 Pzt, 10:00 tarihinde şunu yazdı:",
        "Carla Rossi <carla@example.org>, 1 Oca 2024 Pzt, 10:00 tarihinde şunu\nyazdı:",
        '"Carla Rossi" <carla@example.org>, 1 Oca 2024 Pzt 10:00 tarihinde şunu yazdı:',
        "Wiadomość napisana przez Carla <carla@example.org> w dniu 01.01.2024, o godz. 10:00:",
        "Wiadomość napisana przez Carla <carla@example.org> w dniu 1 sty\n2024, o godz. 10:00:",
        # attacker review: Gmail in Korean, Chinese, Greek and Indonesian
        "2024년 1월 1일 (월) 오전 10:00, Carla <carla@example.org>님이 작성:",
        "Carla <carla@example.org> 于2024年1月1日周一 10:00写道：",
        "Στις Δευ 1 Ιαν 2024 στις 10:00 π.μ., ο/η Carla <carla@example.org> έγραψε:",
        "Pada tanggal Sen, 1 Jan 2024 pukul 10.00 Carla <carla@example.org> menulis:",
    ],
)
def test_bottom_posted_and_unmarked_history_leave_the_own_text(attribution: str) -> None:
    bottom = f"{attribution}\n> VOTE 301 NO\n> Carla's proposal\n\nVOTE 301 YES\n"
    assert commands(bottom) == YES
    unmarked = f"VOTE 301 YES\n\n{attribution}\n\nVOTE 301 NO\n"
    assert commands(unmarked) == YES


@pytest.mark.parametrize(
    "block",
    [
        "From: Carla <carla@example.org>\nSent: Monday, January 1, 2024 10:00 AM\n"
        "To: Nomic <referee@nomic.example>\nSubject: proposal 301",  # Outlook desktop and web
        "Da: Carla <carla@example.org>\nInviato: lunedì 1 gennaio 2024 10:00\n"
        "A: Nomic <referee@nomic.example>\nOggetto: proposta 301",
        "---------- Forwarded message ---------\nFrom: Carla <carla@example.org>",
        "-------- Messaggio inoltrato --------\nOggetto: proposta 301",
        "Date: Mon, 1 Jan 2024 10:00:00 +0100\nTo: Nomic <referee@nomic.example>",
        "От: Carla\nОтправлено: 1 января 2024 г. 10:00\nКому: Nomic",  # Windows Mail, Outlook
        "Od: Carla <carla@example.org>\nWysłano: poniedziałek, 1 stycznia 2024 10:00",
        "Lähettäjä: Carla <carla@example.org>\nLähetetty: maanantai 1. tammikuuta 2024 10.00",
        "________________________________\nFrom: Carla <carla@example.org>",
        "Da: Carla\nA: Nomic\nOggetto: proposta 301",
        # Outlook's separator alone, in each language it is written in
        "-----Original Message-----",
        "-----Messaggio originale-----",
        "-----Mensagem original-----",
        "-----Wiadomość oryginalna-----",
        "-----Исходное сообщение-----",
        "-----Ursprüngliche Nachricht-----",
        "-----Message d'origine-----",
        "-----Mensaje original-----",
        "-----Oorspronkelijk bericht-----",
        "-----Ursprungligt meddelande-----",
        "-----Alkuperäinen viesti-----",
        "-----Özgün İleti-----",
        "-----Původní zpráva-----",
        "-----Oprindelig meddelelse-----",
        "-----Opprinnelig melding-----",
        "-----Оригінальне повідомлення-----",
        "---------- Mensagem encaminhada ---------",
        "---------- Wiadomość przekazana dalej ---------",
        "---------- Пересылаемое сообщение ---------",
        # attacker review: Outlook's header block in Japanese, Hungarian, Romanian and Greek
        "差出人: Carla <carla@example.org>\n送信日時: 2024年1月1日 10:00\n件名: 301",
        "Feladó: Carla <carla@example.org>\nElküldve: 2024. január 1. 10:00\nTárgy: 301",
        "De la: Carla <carla@example.org>\nTrimis: luni, 1 ianuarie 2024 10:00\nSubiect: 301",
        "Από: Carla <carla@example.org>\nΣτάλθηκε: Δευτέρα, 1 Ιανουαρίου 2024 10:00 πμ",
    ],
)
def test_outlook_and_forwarded_blocks_end_the_own_text(block: str) -> None:
    assert commands(f"VOTE 301 YES\n\n{block}\n\nVOTE 301 NO\n") == YES


def test_two_answers_in_ones_own_text_are_found() -> None:
    from referee.mail.commands import torn

    found = parse_commands(BOB, "", "VOTE 301 YES\nVOTE 302 NO\nagree A1\nVOTE 301 NO\nAGREE A1")
    assert torn(found) == {0: "VOTE 301 NO", 3: "VOTE 301 YES"}
    assert [p.command for p in found][2:5:2] == [Agree(BOB, "A1", True), Agree(BOB, "A1", True)]
    assert torn(parse_commands(BOB, "", "AGREE A1\nDISAGREE A1")) == {
        0: "DISAGREE A1",
        1: "AGREE A1",
    }


@pytest.mark.parametrize("language", ["en", "it"])
def test_two_votes_the_referee_cannot_tell_apart_are_both_refused(
    tmp_path: Path, language: str
) -> None:
    """Unrecognised quoting ("Carla's note:"): never the later vote, never the first."""
    settings = load_settings(write_config(tmp_path, language))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        referee.receive(mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
        body = "VOTE 301 YES\n\nCarla's note of Monday:\n\nVOTE 301 NO\nThanks!\n"
        referee.receive(mail(BOB, body), T0 + DAY)
        proposal = referee.state.proposal(301)
        assert proposal is not None and proposal.votes == ()
        text = plain(sent(referee, "reply")[-1])
        asked = "Neither is done" if language == "en" else "Nessuna delle due è eseguita"
        assert text.count(asked) == 2, text
        assert "VOTE 301 NO" in text and "VOTE 301 YES" in text
        referee.receive(mail(BOB, "VOTE 301 NO\n\nVOTE 301 NO"), T0 + DAY)  # one meaning
        proposal = referee.state.proposal(301)
        assert proposal is not None and proposal.votes == ((BOB, False),)
    finally:
        store.close()
