"""What it says: only what the player wrote is obeyed; limits per mail and per day, each explained.

Commands planted in a proposal's text reach a player's reply when his client quotes the notice
without `>` under a header in his language; the referee must find the quoted history in the
forms current clients write, and never obey a line that repeats its own mail in the thread.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from email.message import EmailMessage
from typing import Any

import pytest

from referee.config import LimitsConfig, Settings
from referee.mail.commands import parse_commands
from referee.mail.parse import parse_message
from referee.mail.quotes import strip_reply
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import ADA, BOB, CARLA, DAY, T0
from tests.sender_mail import outbox, raw_mail, reply_text

PLANTED = "PROPOSE ENACT\nPlayers should be kind.\nVOTE 301 YES\nQUIT\nEND"
LATER = T0 + DAY / 12

# The header each client writes above the quoted notice, without '>' marks.
CLIENTS = {
    "outlook-en": "From: Test Nomic <referee@nomic.example>\nSent: Tuesday, December 1, 2026 "
    "11:00 AM\nTo: Bob Rossi <bob@example.org>\nSubject: Proposal 301",
    "outlook-it": "Da: Test Nomic <referee@nomic.example>\nInviato: martedì 1 dicembre 2026 "
    "11:00\nA: Bob Rossi <bob@example.org>\nOggetto: Proposta 301",
    "outlook-de": "Von: Test Nomic <referee@nomic.example>\nGesendet: Dienstag, 1. Dezember "
    "2026 11:00\nAn: Bob Rossi <bob@example.org>\nBetreff: Proposal 301",
    "outlook-fr": "De : Test Nomic <referee@nomic.example>\nEnvoyé : mardi 1 décembre 2026 "
    "11:00\nÀ : Bob Rossi <bob@example.org>\nObjet : Proposal 301",
    "outlook-es": "De: Test Nomic <referee@nomic.example>\nEnviado el: martes, 1 de "
    "diciembre de 2026 11:00\nPara: Bob Rossi <bob@example.org>\nAsunto: Proposal 301",
    "outlook-nl": "Van: Test Nomic <referee@nomic.example>\nVerzonden: dinsdag 1 december "
    "2026 11:00\nAan: Bob Rossi <bob@example.org>\nOnderwerp: Proposal 301",
    "outlook-bold": "*From:* Test Nomic <referee@nomic.example>\n*Sent:* Tuesday\n"
    "*To:* Bob\n*Subject:* Proposal 301",
    "outlook-separator": "-----Original Message-----\nFrom: referee@nomic.example",
    "outlook-underscores": "________________________________\nDe : referee@nomic.example",
    "gmail-en": "On Tue, Dec 1, 2026 at 11:00 AM Test Nomic <referee@nomic.example> wrote:",
    "gmail-en-wrapped": "On Tue, Dec 1, 2026 at 11:00 AM Test Nomic <\nreferee@nomic.example> "
    "wrote:",
    "gmail-it": "Il giorno mar 1 dic 2026 alle ore 11:00 Test Nomic <referee@nomic.example> "
    "ha scritto:",
    "gmail-de": "Am Di., 1. Dez. 2026 um 11:00 Uhr schrieb Test Nomic <\nreferee@nomic.example>:",
    "gmail-fr": "Le mar. 1 déc. 2026 à 11:00, Test Nomic <referee@nomic.example> a écrit :",
    "gmail-es": "El mar, 1 dic 2026 a las 11:00, Test Nomic (<referee@nomic.example>) escribió:",
    "gmail-nl": "Op di 1 dec. 2026 om 11:00 schreef Test Nomic <referee@nomic.example>:",
    "gmail-forward": "---------- Forwarded message ---------\nFrom: Test Nomic "
    "<referee@nomic.example>",
    "gmail-forward-it": "---------- Messaggio inoltrato ---------\nDa: Test Nomic",
    "apple-en": "On 1 Dec 2026, at 11:00, Test Nomic <referee@nomic.example> wrote:",
    "apple-forward": "Begin forwarded message:\n\nFrom: Test Nomic <referee@nomic.example>",
    "apple-forward-de": "Anfang der weitergeleiteten Nachricht:",
    "thunderbird-en": "On 01/12/2026 11:00, Test Nomic wrote:",
    "thunderbird-forward-de": "-------- Weitergeleitete Nachricht --------\nBetreff: \t"
    "Proposal 301\nDatum: \tTue, 1 Dec 2026 11:00:00 +0100\nVon: \tTest Nomic "
    "<referee@nomic.example>\nAn: \tbob@example.org",
    "thunderbird-original-en": "-------- Original Message --------\nSubject: Proposal 301",
    "thunderbird-original-it": "-------- Messaggio originale --------\nOggetto: Proposta 301",
    "thunderbird-forward-fr": "-------- Message transféré --------\nSujet : Proposal 301",
    "thunderbird-forward-es": "-------- Mensaje reenviado --------\nAsunto: Proposal 301",
    "thunderbird-forward-nl": "-------- Doorgestuurd bericht --------\nOnderwerp: Proposal 301",
    "library-sv": "Den 1 dec. 2026 kl. 11:00 skrev Test Nomic <referee@nomic.example>:",
    "library-pl": "Od: Test Nomic <referee@nomic.example>\nWysłano: wtorek\n"
    "Do: bob@example.org\nTemat: Proposal 301",
}


def notice_to_bob(referee: Referee) -> EmailMessage:
    return next(
        m for m in outbox(referee, "proposal_circulated") if m["To"].addresses[0].addr_spec == BOB
    )


def notice_text(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return str(body.get_content()).replace("\r\n", "\n")


@pytest.fixture
def planted(referee: Referee) -> Referee:
    """Carla's proposal 301, whose text plants `VOTE 301 YES` and `QUIT` on lines of their own."""
    assert referee.receive(raw_mail(CARLA, PLANTED), T0 + DAY / 24).status == "processed"
    text = notice_text(notice_to_bob(referee))
    assert "\nVOTE 301 YES\nQUIT\n" in text  # the notice carries them, unquoted
    return referee


def bob(referee: Referee) -> tuple[bool | None, bool]:
    proposal, player = referee.state.proposal(301), referee.state.player(BOB)
    assert proposal is not None and player is not None
    return proposal.vote_of(BOB), player.active


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_commands_quoted_without_marks_are_not_obeyed(planted: Referee, client: str) -> None:
    quoted = notice_text(notice_to_bob(planted))
    body = f"VOTE 301 NO\n\n{CLIENTS[client]}\n\n{quoted}"
    mail = raw_mail(BOB, body, subject="Re: Proposal 301")  # no thread headers: a forward
    assert strip_reply(parse_message(mail).body) == "VOTE 301 NO"
    receipt = planted.receive(mail, LATER)
    assert receipt.commands == 1 and receipt.refused == 0
    assert bob(planted) == (False, True)


HTML_CLIENTS = {
    "outlook-html-de": '<div>VOTE 301 NO</div><div id="appendonsend"></div><hr>'
    '<div id="divRplyFwdMsg"><b>Von:</b> Test Nomic<br><b>Gesendet:</b> Dienstag<br>'
    "<b>Betreff:</b> Proposal 301</div><div>{notice}</div>",
    "thunderbird-html-forward": '<p>VOTE 301 NO</p><div class="moz-forward-container">'
    "-------- Original Message --------<table><tr><th>Subject:</th><td>P</td></tr></table>"
    "<pre>{notice}</pre></div>",
    "gmail-html": '<div dir="ltr">VOTE 301 NO</div><div class="gmail_quote">'
    '<div class="gmail_attr">Il giorno mar 1 dic 2026 Test Nomic ha scritto:</div>'
    "<div>{notice}</div></div>",
    # Outlook on the web / new Outlook: the header div, then the history as its siblings.
    "owa-reply": '<html><body><div dir="ltr"><div>VOTE 301 NO</div></div>'
    '<hr style="display:inline-block;width:98%" tabindex="-1"><div id="divRplyFwdMsg" '
    'dir="ltr"><font face="Calibri"><b>From:</b> Test Nomic &lt;referee@nomic.example&gt;'
    "<br><b>Sent:</b> Tuesday, December 1, 2026 11:00 AM<br><b>To:</b> Bob<br>"
    "<b>Subject:</b> Proposal 301</font><div>&nbsp;</div></div>"
    '<div><div class="elementToProof">{notice}</div></div></body></html>',
    "owa-forward": '<div>VOTE 301 NO</div><div><br></div><div id="appendonsend"></div>'
    '<hr><div id="divRplyFwdMsg"><b>From:</b> Test Nomic<br><b>Subject:</b> Proposal 301'
    "</div><div><p>{notice}</p></div><div>After the history, still history.</div>",
    "owa-italian": '<div>VOTE 301 NO</div><hr><div id="divRplyFwdMsg"><b>Da:</b> Test Nomic'
    "<br><b>Inviato:</b> martedì 1 dicembre 2026 11:00<br><b>A:</b> Bob<br>"
    "<b>Oggetto:</b> Proposta 301</div><div>{notice}</div>",
    "owa-without-hr": '<div>VOTE 301 NO</div><div id="divRplyFwdMsg"><b>From:</b> '
    "Test Nomic<br><b>Subject:</b> Proposal 301</div><section><div>{notice}</div></section>",
    "outlook-italian-block": "<div>VOTE 301 NO</div><div><b>Da:</b> Test Nomic<br>"
    "<b>Inviato:</b> martedì<br><b>A:</b> Bob<br><b>Oggetto:</b> Proposta 301</div>"
    "<div>{notice}</div>",
}


@pytest.mark.parametrize("client", sorted(HTML_CLIENTS))
def test_html_only_replies_quote_the_notice_without_effect(planted: Referee, client: str) -> None:
    quoted = notice_text(notice_to_bob(planted)).replace("\n", "<br>")
    body = HTML_CLIENTS[client].format(notice=quoted)
    mail = raw_mail(BOB, body, "Re: Proposal 301", kind="html")
    assert strip_reply(parse_message(mail).body).strip() == "VOTE 301 NO"
    receipt = planted.receive(mail, LATER)
    assert receipt.commands == 1 and bob(planted) == (False, True)


def test_an_empty_plain_part_falls_back_to_an_owa_html_part_cut_at_its_marker(
    planted: Referee,
) -> None:
    quoted = notice_text(notice_to_bob(planted)).replace("\n", "<br>")
    html = HTML_CLIENTS["owa-reply"].format(notice=quoted)
    boundary = "owa-alt"
    body = (
        f"--{boundary}\nContent-Type: text/plain; charset=utf-8\n\n\n"
        f"--{boundary}\nContent-Type: text/html; charset=utf-8\n\n{html}\n--{boundary}--"
    )
    mail = raw_mail(BOB, body, "Re: Proposal 301", kind=f'alternative; boundary="{boundary}"')
    mail = mail.replace(b"Content-Type: text/alternative", b"Content-Type: multipart/alternative")
    assert strip_reply(parse_message(mail).body).strip() == "VOTE 301 NO"
    receipt = planted.receive(mail, LATER)
    assert receipt.commands == 1 and bob(planted) == (False, True)


def test_a_line_repeating_the_referees_notice_in_its_thread_is_not_obeyed(
    planted: Referee,
) -> None:
    """A client whose quoting header no rule knows: the referee knows what it sent."""
    notice = notice_to_bob(planted)
    quoted = notice_text(notice)
    body = f"VOTE 301 NO\n\nScrisoarea arbitrului, 1 decembrie 2026\n\n{quoted}"
    mail = raw_mail(
        BOB,
        body,
        subject="Re: Proposal 301",
        headers=(
            ("In-Reply-To", str(notice["Message-ID"])),
            ("References", f"{notice['References']} {notice['Message-ID']}"),
        ),
    )
    receipt = planted.receive(mail, LATER)
    assert bob(planted) == (False, True)  # his own NO counts; the planted YES and QUIT do not
    assert receipt.refused == 2
    text = reply_text(planted)
    assert text.count("word for word a line of the referee's own mail") == 2
    assert "proposal 301" in text
    # The same lines in a new mail, not a reply, are his own words and are obeyed.
    planted.receive(raw_mail(BOB, "VOTE 301 YES"), LATER + DAY / 24)
    assert bob(planted) == (True, True)


# ----- over-long bodies are refused whole ----------------------------------------------------


def test_an_over_long_body_is_refused_whole_never_cut(referee: Referee) -> None:
    text = "A rule of many words. " * 12_000  # 264,000 characters, well under 5 MB
    mail = raw_mail(CARLA, f"PROPOSE ENACT\n{text}\nEND")
    receipt = referee.receive(mail, T0 + DAY / 24)
    assert receipt.status == "refused" and receipt.sent == 1
    assert referee.state.current_proposal is None  # no proposal cut mid-line
    reply = reply_text(referee)
    assert "264,0" in reply and "200,000" in reply and "Done" not in reply


# ----- limits per mail -----------------------------------------------------------------------


def test_a_thousand_appeals_in_one_mail_open_none_and_send_one_reply(referee: Referee) -> None:
    before = len(outbox(referee))
    body = "\n".join(f"APPEAL\nIs move {i} legal?\nEND" for i in range(1000))
    assert len(body) > 24_000
    receipt = referee.receive(raw_mail(BOB, body), LATER)
    assert receipt.status == "refused" and not referee.state.appeals
    assert len(outbox(referee)) == before + 1
    assert "opens 1000 appeals" in reply_text(referee)


def test_fifteen_thousand_votes_are_read_and_refused_in_one_answer(settings: Settings) -> None:
    referee = game(settings_with(settings, max_body_chars=1_000_000))
    try:
        referee.receive(raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), T0 + DAY / 24)
        body = "\n".join(f"VOTE {301 + i} YES" for i in range(15_000))
        receipt = referee.receive(raw_mail(BOB, body), LATER)
        assert receipt.status == "refused" and receipt.sent == 1
        assert "holds 15000 commands; at most 50" in reply_text(referee)
        proposal = referee.state.proposal(301)
        assert proposal is not None and proposal.vote_of(BOB) is None
    finally:
        referee.store.close()


def calls(work: Callable[[], Any]) -> int:
    """How many Python functions `work` runs: a measure of work that no clock disturbs."""
    counted = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal counted
        if event in ("call", "c_call"):
            counted += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return counted


def test_reading_commands_is_linear_in_the_size_of_the_mail() -> None:
    def votes(count: int) -> bytes:
        return raw_mail(BOB, "\n".join(f"VOTE {301 + i} YES" for i in range(count)))

    def read(raw: bytes) -> Callable[[], Any]:
        def run() -> None:
            mail = parse_message(raw)
            parse_commands(mail.sender, mail.subject, mail.own_words)

        return run

    small, large = calls(read(votes(1_000))), calls(read(votes(4_000)))
    assert large / small < 4.4  # quadratic work would be near 16


def settings_with(settings: Settings, **limits: int) -> Settings:
    return replace(settings, limits=replace(LimitsConfig(), **limits))


def game(settings: Settings) -> Referee:
    return Referee.create(Store(settings.database_url), settings, T0)


def test_a_mail_that_would_send_too_many_mails_stops_at_the_limit(settings: Settings) -> None:
    referee = game(settings_with(settings, mails_per_mail=3))
    try:
        # the reply and a circulation to each of three players would be four mails
        receipt = referee.receive(raw_mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND"), LATER)
        assert referee.state.current_proposal is None and receipt.sent == 1
        assert "may cause at most 3" in reply_text(referee)
    finally:
        referee.store.close()


def test_a_sender_over_the_days_mail_limit_is_told_once_then_set_aside(
    settings: Settings,
) -> None:
    referee = game(settings_with(settings, mails_per_day=3))
    try:
        for minute in range(6):
            referee.receive(raw_mail(BOB, "SCORES"), LATER + minute * DAY / 1440)
        replies = [m for m in outbox(referee, "reply") if m["To"].addresses[0].addr_spec == BOB]
        assert len(replies) == 4
        assert "today's limit (mails: 3 a day)" in reply_text(referee)
        referee.receive(raw_mail(BOB, "SCORES"), LATER + DAY)  # a new day
        assert len(outbox(referee, "reply")) == 5
    finally:
        referee.store.close()


def test_a_sender_over_the_days_command_limit_is_refused_with_the_reason(
    settings: Settings,
) -> None:
    referee = game(settings_with(settings, commands_per_day=4))
    try:
        referee.receive(raw_mail(BOB, "SCORES\nSTATUS\nRULES"), LATER)
        referee.receive(raw_mail(BOB, "SCORES\nHELP"), LATER + DAY / 1440)
        assert "today's limit (commands: 4 a day)" in reply_text(referee)
    finally:
        referee.store.close()


# ----- robots --------------------------------------------------------------------------------

OUT_OF_OFFICE: list[tuple[str, tuple[tuple[str, str], ...]]] = [
    ("Automatic reply: Proposal 301", ()),
    ("Risposta automatica: Proposta 301", ()),
    ("Automatische Antwort: Proposal 301", ()),
    ("Réponse automatique : Proposal 301", ()),
    ("Respuesta automática: Proposal 301", ()),
    ("Automatisch antwoord: Proposal 301", ()),
    ("Out of Office: Proposal 301", ()),
    ("Abwesenheitsnotiz: Proposal 301", ()),
    ("I am away", (("X-Autoreply", "yes"),)),
    ("I am away", (("X-Autorespond", "Proposal 301"),)),
    ("Away", (("Precedence", "auto_reply"),)),
]


@pytest.mark.parametrize(("subject", "headers"), OUT_OF_OFFICE)
def test_out_of_office_replies_without_auto_submitted_get_no_answer(
    referee: Referee, subject: str, headers: tuple[tuple[str, str], ...]
) -> None:
    before = len(outbox(referee))
    for minute in range(20):
        mail = raw_mail(ADA, "I am out of the office until Monday.", subject, headers=headers)
        assert referee.receive(mail, LATER + minute * DAY / 1440).status == "ignored"
    assert len(outbox(referee)) == before


def test_a_robot_no_rule_recognises_is_answered_at_most_a_few_times_a_day(
    referee: Referee,
) -> None:
    for minute in range(20):
        mail = raw_mail(ADA, "Thank you for your message.", "Re: your mail")
        referee.receive(mail, LATER + minute * DAY / 1440)
    assert len(outbox(referee, "reply")) == LimitsConfig().empty_replies_per_day


def test_two_hundred_forged_strangers_get_twenty_notes_in_all(referee: Referee) -> None:
    for index in range(200):
        referee.receive(raw_mail(f"x{index}@forged.example", "VOTE 301 YES"), LATER)
    referee.receive(raw_mail("x0@forged.example", "VOTE 301 YES"), LATER)
    assert len(outbox(referee, "stranger")) == LimitsConfig().stranger_notes_per_day == 20


def test_a_text_cut_where_quoted_history_begins_is_refused_not_half_obeyed(
    referee: Referee,
) -> None:
    body = "PROPOSE ENACT\nPlayers should be kind.\nVon: Ada\nGesendet: Montag\nAn: alle\nEND"
    receipt = referee.receive(raw_mail(CARLA, body), T0 + DAY / 24)
    assert receipt.refused == 1 and referee.state.current_proposal is None
    assert "no END line" in reply_text(referee)


# ----- bottom-posted and interleaved replies keep the player's own words ---------------------


def test_a_bottom_posted_vote_under_a_marked_quote_is_obeyed(planted: Referee) -> None:
    quoted = "\n".join(f"> {line}" for line in notice_text(notice_to_bob(planted)).split("\n"))
    body = f"On Tue, Dec 1, 2026 at 11:00 AM Test Nomic <referee@nomic.example> wrote:\n{quoted}"
    body += "\n\nVOTE 301 NO\n"
    mail = raw_mail(BOB, body, subject="Re: Proposal 301")
    assert strip_reply(parse_message(mail).body).strip() == "VOTE 301 NO"
    receipt = planted.receive(mail, LATER)
    assert receipt.commands == 1 and bob(planted) == (False, True)


def test_interleaved_answers_are_kept_and_later_unmarked_history_is_not(
    planted: Referee,
) -> None:
    body = (
        "Il giorno mar 1 dic 2026 alle ore 11:00 Test Nomic <referee@nomic.example> "
        "ha scritto:\n> Proposal 301 is open for debate.\n\nVOTE 301 NO\n\n"
        "> VOTE 301 YES\n\nI mean it.\n\nFrom: Test Nomic <referee@nomic.example>\n"
        f"Sent: Tuesday\nSubject: Proposal 301\n\n{PLANTED}"
    )
    mail = raw_mail(BOB, body, subject="Re: Proposal 301")
    assert strip_reply(parse_message(mail).body).strip() == "VOTE 301 NO\n\n\nI mean it."
    planted.receive(mail, LATER)
    assert bob(planted) == (False, True)


def test_a_first_line_of_prose_is_not_an_attribution() -> None:
    text = "On the matter, Carla wrote:\nI agree with her.\nVOTE 301 NO"
    assert strip_reply(text) == text
    # A dated attribution above unmarked text is still the quoted history.
    assert strip_reply("On 1 Dec 2026, Test Nomic wrote:\nQUIT") == ""
