"""Inbound mail in the shapes real clients send, and commands found in them (rules 103-215)."""

from __future__ import annotations

import base64
import quopri

import pytest

from referee.core.events import GiveRuling, Propose, Query, QueryKind, Vote
from referee.core.model import ProposalKind
from referee.mail.commands import help_rows, parse_commands
from referee.mail.parse import html_to_text, parse_message
from referee.mail.quotes import strip_reply


def raw(headers: str, body: str) -> bytes:
    return (headers.strip() + "\n\n" + body).replace("\n", "\r\n").encode("utf-8")


def commands_of(message: bytes) -> list[object]:
    mail = parse_message(message)
    return [p.command for p in parse_commands(mail.sender, mail.subject, mail.own_words)]


BASE = """From: Bob Rossi <Bob@Example.org>
To: referee@nomic.example
Subject: {subject}
Date: Tue, 01 Dec 2026 10:00:00 +0100
Message-ID: <m1@example.org>
MIME-Version: 1.0"""


def test_plain_mail_with_a_vote() -> None:
    message = raw(
        BASE.format(subject="vote") + "\nContent-Type: text/plain; charset=utf-8", "VOTE 301 YES\n"
    )
    mail = parse_message(message)
    assert mail.sender == "bob@example.org" and mail.message_id == "<m1@example.org>"
    assert mail.date is not None and mail.date.utcoffset() is not None
    assert commands_of(message) == [Vote("bob@example.org", 301, True)]


def test_a_command_in_the_subject_is_obeyed_but_not_a_replys_subject() -> None:
    message = raw(BASE.format(subject="VOTO 301 sì") + "\nContent-Type: text/plain", "Ciao!\n")
    assert commands_of(message) == [Vote("bob@example.org", 301, True)]
    for subject in ("R: VOTO 301 sì", "Re: Appeal A1", "Fwd: QUIT", "AW: Ruling on A1"):
        message = raw(BASE.format(subject=subject) + "\nContent-Type: text/plain", "Ciao!\n")
        assert commands_of(message) == []
    message = raw(BASE.format(subject="Ruling on A1") + "\nContent-Type: text/plain", "Hi\n")
    assert commands_of(message) == []  # not a clean command: just a title


def test_gmail_reply_in_english_with_wrapped_attribution() -> None:
    body = """VOTE 301 NO

On Tue, Dec 1, 2026 at 9:00 AM Nomic of the King <referee@nomic.example>
wrote:

> VOTE 301 YES
> Proposal 301
"""
    message = raw(BASE.format(subject="Re: Proposal 301") + "\nContent-Type: text/plain", body)
    assert commands_of(message) == [Vote("bob@example.org", 301, False)]


@pytest.mark.parametrize(
    "attribution",
    [
        "Il giorno mar 1 dic 2026 alle ore 09:00 Nomic del Re <referee@nomic.example> ha scritto:",
        "Il 01/12/2026 09:00, Nomic del Re ha scritto:",
    ],
)
def test_italian_reply_attributions(attribution: str) -> None:
    body = f"VOTO 301 NO\n\n{attribution}\nVOTO 301 SÌ\nPROPONGO ABROGARE 209\n"
    message = raw(BASE.format(subject="Re: Proposta 301") + "\nContent-Type: text/plain", body)
    assert commands_of(message) == [Vote("bob@example.org", 301, False)]


def test_outlook_history_without_prefixes() -> None:
    body = """VOTE 301 YES

________________________________
From: Nomic of the King <referee@nomic.example>
Sent: Tuesday, December 1, 2026 9:00 AM
To: Bob Rossi <bob@example.org>
Subject: Proposal 301

VOTE 301 NO
QUIT
"""
    message = raw(BASE.format(subject="RE: Proposal 301") + "\nContent-Type: text/plain", body)
    assert commands_of(message) == [Vote("bob@example.org", 301, True)]


def test_outlook_italian_header_block_without_separator() -> None:
    text = (
        "VOTO 301 SI\n\nDa: Nomic del Re <referee@nomic.example>\nInviato: martedì 1 "
        "dicembre 2026 09:00\nA: Bob\nOggetto: Proposta 301\n\nABBANDONO\n"
    )
    assert strip_reply(text) == "VOTO 301 SI"


def test_iphone_footer_and_signature_are_ignored() -> None:
    body = "STATUS\n\nSent from my iPhone\n\nQUIT\n"
    message = raw(BASE.format(subject="hi") + "\nContent-Type: text/plain", body)
    assert commands_of(message) == [Query("bob@example.org", QueryKind.STATUS)]
    assert strip_reply("SCORES\n-- \nBob\nQUIT") == "SCORES"
    assert strip_reply("PUNTEGGI\n\nInviato da iPhone\nABBANDONO") == "PUNTEGGI"


def test_quoted_printable_italian_text_survives() -> None:
    text = "PROPONGO PROMULGARE\nLa virtù è perché città — così sia.\nFINE\n"
    encoded = quopri.encodestring(text.encode("utf-8")).decode("ascii")
    message = raw(
        BASE.format(subject="proposta")
        + "\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable",
        encoded,
    )
    [command] = commands_of(message)
    assert isinstance(command, Propose)
    assert command.text == "La virtù è perché città — così sia."


@pytest.mark.parametrize(
    ("charset", "text"),
    [
        ("iso-8859-1", "La città è là"),
        ("koi8-r", "Правило о голосовании"),
        ("iso-8859-15", "Sääntö § 2.2.1 ja kerjäläiset €"),
        ("windows-1252", "Rule “quoted” — fine"),
    ],
)
def test_base64_in_any_charset(charset: str, text: str) -> None:
    payload = f"PROPOSE ENACT\n{text}\nEND\n".encode(charset)
    message = (
        BASE.format(subject="x")
        + f"\nContent-Type: text/plain; charset={charset}\nContent-Transfer-Encoding: base64\n\n"
    ).replace("\n", "\r\n").encode("ascii") + base64.encodebytes(payload)
    [command] = commands_of(message)
    assert isinstance(command, Propose) and command.text == text


def test_unknown_charset_is_read_as_utf8_not_dropped() -> None:
    message = raw(
        BASE.format(subject="x") + "\nContent-Type: text/plain; charset=x-unknown", "VOTE 301 YES\n"
    )
    assert commands_of(message) == [Vote("bob@example.org", 301, True)]


def test_html_only_mail_with_gmail_quote() -> None:
    html = (
        '<div dir="ltr"><div>VOTE 301 YES</div><div><br></div>'
        '<div class="gmail_quote"><div class="gmail_attr">On Tue wrote:</div>'
        "<blockquote>VOTE 301 NO<br>QUIT</blockquote></div></div>"
    )
    message = raw(BASE.format(subject="Re: x") + "\nContent-Type: text/html; charset=utf-8", html)
    assert commands_of(message) == [Vote("bob@example.org", 301, True)]


def test_multipart_alternative_prefers_plain_text() -> None:
    body = """--b1
Content-Type: text/plain; charset=utf-8

RULE 202
--b1
Content-Type: text/html; charset=utf-8

<p>RULE 999</p>
--b1--
"""
    message = raw(
        BASE.format(subject="x") + '\nContent-Type: multipart/alternative; boundary="b1"', body
    )
    assert commands_of(message) == [Query("bob@example.org", QueryKind.RULE, 202)]


def test_html_to_text_breaks_blocks_and_drops_scripts() -> None:
    text = html_to_text(
        "<p>PROPOSE ENACT</p><p>Line <b>one</b></p><script>x()</script><div>END</div>"
    )
    assert [ln for ln in text.split("\n") if ln] == ["PROPOSE ENACT", "Line one", "END"]


def test_auto_replies_and_bounces_are_marked() -> None:
    auto = parse_message(
        raw(BASE.format(subject="Out of office") + "\nAuto-Submitted: auto-replied", "I am away")
    )
    assert auto.automatic
    bulk = parse_message(raw(BASE.format(subject="news") + "\nPrecedence: bulk", "x"))
    assert bulk.automatic
    bounce = parse_message(
        raw(
            BASE.format(subject="Undelivered").replace(
                "Bob Rossi <Bob@Example.org>", "MAILER-DAEMON@example.org"
            ),
            "x",
        )
    )
    assert bounce.bounce


def test_missing_message_id_gets_a_stable_one() -> None:
    message = raw("From: bob@example.org\nSubject: x", "STATUS\n")
    assert parse_message(message).message_id == parse_message(message).message_id
    assert parse_message(message).message_id.endswith("@no-message-id.invalid>")


def test_malformed_headers_do_not_crash() -> None:
    message = b"From: <<<>>>\r\nDate: not a date\r\nSubject: =?utf-8?b?broken\r\n\r\nVOTE 1 YES\r\n"
    mail = parse_message(message)
    assert mail.sender == "" and mail.date is None


def test_several_commands_and_texts_to_end() -> None:
    text = """Hello all,
PROPOSE AMEND 202 A turn has five parts.
And a second line.
SET debate_days = 9
END
VOTE 301 yes
vote 302 no
RULING A1 UPHELD
The replay differs.
END
HELP
"""
    found = [p.command for p in parse_commands("bob@example.org", "", text)]
    assert found[0] == Propose(
        "bob@example.org",
        ProposalKind.AMEND,
        target=202,
        text="A turn has five parts.\nAnd a second line.",
        sets=(("debate_days", "9"),),
    )
    assert found[1:3] == [Vote("bob@example.org", 301, True), Vote("bob@example.org", 302, False)]
    assert found[3] == GiveRuling(
        "bob@example.org", "A1", "UPHELD\nThe replay differs.", "upheld", None
    )
    assert found[4] == Query("bob@example.org", QueryKind.HELP)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("PROPONGO ABROGARE 209", ProposalKind.REPEAL),
        ("PROPOSE TRANSMUTE 116", ProposalKind.TRANSMUTE),
        ("PROPONGO TRASMUTARE 116", ProposalKind.TRANSMUTE),
        ("PROPOSE REPEAL AMENDMENT 305.1", ProposalKind.REPEAL_AMENDMENT),
        ("PROPONGO EMENDARE EMENDAMENTO 305.1 nuovo testo", ProposalKind.AMEND_AMENDMENT),
        ("PROPOSE ENACT AMENDMENT 202 text", ProposalKind.ENACT_AMENDMENT),
        ("proponGO promulgare emendamento 202 testo", ProposalKind.ENACT_AMENDMENT),
    ],
)
def test_every_proposal_kind_in_both_languages(line: str, kind: ProposalKind) -> None:
    [parsed] = parse_commands("bob@example.org", "", line)
    assert isinstance(parsed.command, Propose) and parsed.command.kind is kind


@pytest.mark.parametrize(
    "line",
    [
        "VOTE 301 MAYBE",
        "VOTE x YES",
        "AWARD many",
        "RULE",
        "PROPOSE AMEND x text",
        "AGREE",
        "CHAMPION A1",
        "PROPOSE REPEAL 202 203",
        "QUIT now",
        "EXTEND soon",
    ],
)
def test_bad_arguments_are_reported_not_dropped(line: str) -> None:
    [parsed] = parse_commands("bob@example.org", "", line)
    assert parsed.command is None and parsed.spec is not None


def test_prose_is_not_a_command_and_help_lists_every_command() -> None:
    assert parse_commands("bob@example.org", "", "Thanks all, see you next week.") == []
    rows = help_rows("it")
    assert any(r["syntax"].startswith("VOTO") for r in rows)
    assert len(rows) == len(help_rows("en"))


def test_a_vote_naming_both_answers_is_not_guessed() -> None:
    """`VOTE 301 YES NO` and `VOTE 301 NO, I mean YES` are refused as unclear (203)."""
    from referee.mail.commands import parse_commands

    for line in ("VOTE 301 YES NO", "VOTE 301 NO, I mean YES", "VOTO 301 SÌ, anzi NO"):
        (found,) = parse_commands("bob@example.org", "", line)
        assert found.command is None and "YES/NO" in found.problem, line
    (kept,) = parse_commands("bob@example.org", "", "VOTE 301 YES, a fine rule")
    assert kept.command == Vote("bob@example.org", 301, True)
