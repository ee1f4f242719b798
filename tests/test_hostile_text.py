"""Numbers and text a hostile player writes (issue 15, item 6; rules 107, 203, 205, 213).

A numeral that is not a short run of ASCII digits is refused on its own line, and the rest of
the mail is still obeyed; every C0 and C1 control in a proposal is kept in the log as written
and never reaches a reader: not in mail, the archive, the website or its feed.
"""

from __future__ import annotations

import json
import mailbox
import re
import subprocess
from pathlib import Path

from tests.attack import ADA, BOB, CARLA, Mbox, cli, message, replay, text_of
from tests.conftest import write_config

FIVE_THOUSAND = "7" * 5000


def test_strange_numerals_refuse_their_line_and_the_rest_counts(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    box.add(CARLA, "PROPOSE ENACT\nBe kind.\nEND")
    box.add(BOB, "VOTE ³⁰¹ YES\nVOTE 301 NO")
    box.add(ADA, f"VOTE {FIVE_THOUSAND} NO\nVOTE ٣٠١ NO\nVOTE 301 YES")
    box.add(CARLA, f"REVISE {FIVE_THOUSAND}\nText\nEND\nRULE ¹⁰¹\nRULE {FIVE_THOUSAND}\nSCORES")
    box.add(BOB, f"APPEAL A{FIVE_THOUSAND} x\nPROPOSE AMEND 1.{FIVE_THOUSAND}\nx\nEND")
    done = replay(box)
    assert done.proposal(301)["votes"] == {BOB: "no", ADA: "yes"}
    assert "set aside" not in done.stderr
    bob, ada = done.replies_to(BOB)[0], done.replies_to(ADA)[0]
    assert "VOTE ³⁰¹ YES" in bob and "VOTE 301 NO" in bob
    assert "VOTE ٣٠١ NO" in ada
    carla = done.replies_to(CARLA)[-1]
    assert "Scores" in carla or "score" in carla.lower()  # SCORES answered after three refusals
    assert FIVE_THOUSAND not in carla  # a refused line is named, not echoed at any length


def test_a_score_parameter_in_other_digits_is_refused(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    box.add(CARLA, "PROPOSE AMEND 209\nThe first to 25 wins.\nSET winning_score = ²⁵\nEND")
    box.add(CARLA, f"PROPOSE AMEND 209\nLong.\nSET winning_score = {FIVE_THOUSAND}\nEND")
    box.add(CARLA, "PROPOSE AMEND 209\nThe first to 25 wins.\nSET winning_score = 25\nEND")
    done = replay(box)
    assert [p["sets"] for p in done.state["proposals"]] == [{"winning_score": "25"}]


CONTROLS = [chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))]
ALLOWED = {"\t", "\n", "\r"}
_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_ESCAPED = re.compile(
    r"\\u00[01][0-9a-fA-F]|\\u007[fF]|\\u00[89][0-9a-fA-F]|&#x?0*(?:[0-8]|1[0-9a-fA-F]);"
)


def _no_controls(where: str, text: str) -> None:
    found = _BAD.search(text)
    assert found is None, f"{where}: {found.group(0)!r} at {found.start()}"
    escaped = _ESCAPED.search(text)
    assert escaped is None, f"{where}: {escaped.group(0)!r}"


def test_every_control_is_stored_as_written_and_shown_nowhere(tmp_path: Path) -> None:
    """Every C0 and C1 control, through the live intake (Maildir, `run --once`), then the
    outbox export, the archive with its git log, the website and the feed."""
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    text = "Be kind " + " ".join(f"{i}{c}x" for i, c in enumerate(CONTROLS))
    # One line of text: the line ends (LF, CR, VT, FF, FS, GS, RS, NEL) stay in the text.
    body = f"PROPOSE ENACT\n{text}\nEND\n"
    inbox = mailbox.Maildir(str(tmp_path / "maildir"), create=False)
    inbox.add(message(CARLA, body, mid="<controls@example.org>", subject="Be\x1b[31m kind"))
    ran = cli("run", config, "--once", "--now", "2026-12-01T10:00:00+00:00")
    assert ran.returncode == 0, ran.stderr
    # Stored as received (107): the state holds the text with every control.
    status = cli("status", config, "--json")
    assert status.returncode == 0, status.stderr
    stored = json.loads(status.stdout)["proposals"]
    assert [p["text"] for p in stored] == [text.replace("\r", "\n")]  # a bare CR ends a line
    export = tmp_path / "export.mbox"
    assert cli("outbox", config, "--export", export).returncode == 0
    sent = list(mailbox.mbox(str(export)))
    assert len(sent) >= 4  # the reply and proposal 301 to three players
    assert any("301" in str(m["Subject"]) for m in sent)
    for mail in sent:
        _no_controls(f"mail {mail['Subject']}", str(mail["Subject"]))
        for part in mail.walk():
            if not part.is_multipart():
                payload = part.get_payload(decode=True)
                assert isinstance(payload, bytes)
                _no_controls(f"mail {mail['Subject']}", payload.decode("utf-8"))
    shown = "\n".join(text_of(m) for m in sent if "301" in str(m["Subject"]))
    assert "␀x" in shown and "␛x" in shown and "␡x" in shown  # visible, not silently lost
    archive, site = tmp_path / "archive", tmp_path / "site"
    done = cli("archive", config, archive)
    assert done.returncode == 0, done.stderr
    done = cli("site", config, "--out", site)
    assert done.returncode == 0, done.stderr
    files = [p for folder in (archive, site) for p in folder.rglob("*") if p.is_file()]
    files = [p for p in files if ".git" not in p.parts]
    assert (site / "feed.xml").is_file() and any(p.suffix == ".toml" for p in files)
    for path in files:
        _no_controls(str(path), path.read_text(encoding="utf-8"))
    assert "␛x" in (site / "proposals" / "301.html").read_text(encoding="utf-8")
    log = subprocess.run(
        ["git", "-C", str(archive), "log", "--format=%an%n%B"], capture_output=True, text=True
    )
    assert log.returncode == 0 and "301" in log.stdout
    _no_controls("git log", log.stdout)


FORMAT = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
FORMAT += "\u200b\u200c\u200d\u2060\ufeff"
_FORMAT = re.compile(f"[{FORMAT}]")


def test_direction_and_zero_width_characters_are_stored_as_written_and_shown_by_name(
    tmp_path: Path,
) -> None:
    """'The winning score is 52' written right to left reads as 25 in a mail program: the
    proposal keeps it as written (107), and every output names each such character instead."""
    config = write_config(tmp_path)
    assert cli("init", config).returncode == 0
    text = "The winning score is \u202e52\u202c points. Others: " + " ".join(
        f"{i}{c}x" for i, c in enumerate(FORMAT)
    )
    inbox = mailbox.Maildir(str(tmp_path / "maildir"), create=False)
    inbox.add(message(CARLA, f"PROPOSE ENACT\n{text}\nEND\n", mid="<bidi@example.org>"))
    ran = cli("run", config, "--once", "--now", "2026-12-01T10:00:00+00:00")
    assert ran.returncode == 0, ran.stderr
    status = cli("status", config, "--json")
    assert status.returncode == 0, status.stderr
    assert [p["text"] for p in json.loads(status.stdout)["proposals"]] == [text]
    export = tmp_path / "export.mbox"
    assert cli("outbox", config, "--export", export).returncode == 0
    sent = [m for m in mailbox.mbox(str(export)) if "301" in str(m["Subject"])]
    assert sent
    for mail in sent:
        for part in mail.walk():
            if not part.is_multipart():
                payload = part.get_payload(decode=True)
                assert isinstance(payload, bytes)
                shown = payload.decode("utf-8")
                assert _FORMAT.search(shown) is None, mail["Subject"]
                assert "\u27e8U+202E\u27e952\u27e8U+202C\u27e9" in shown
    first = text_of(sent[0])
    assert "13\u27e8U+200C\u27e9x" in first and "16\u27e8U+FEFF\u27e9x" in first
    archive, site = tmp_path / "archive", tmp_path / "site"
    done = cli("archive", config, archive)
    assert done.returncode == 0, done.stderr
    done = cli("site", config, "--out", site)
    assert done.returncode == 0, done.stderr
    files = [p for folder in (archive, site) for p in folder.rglob("*") if p.is_file()]
    for path in [p for p in files if ".git" not in p.parts]:
        written = path.read_text(encoding="utf-8")
        assert _FORMAT.search(written) is None, path
        assert not re.search(r"\\u(?:202[a-e]|206[6-9]|200[b-f]|2060|061c|feff)", written, re.I)
    assert "\u27e8U+202E\u27e9" in (site / "proposals" / "301.html").read_text(encoding="utf-8")
    assert "\u27e8U+202E\u27e9" in (site / "feed.xml").read_text(encoding="utf-8")
