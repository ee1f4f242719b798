"""What a new player reads in the mail: rules cited by their current number (109), parameters
by a human name, scores in order, plurals that agree, untitled rules headed by their number,
and the replay that rebuilds an example game's website (issue 6 review findings)."""

from __future__ import annotations

import email.policy
import mailbox
import re
import subprocess
import sys
from email import message_from_bytes
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.core.events import Award, Propose, Vote
from referee.core.model import ProposalKind as K
from referee.counts import counted
from referee.mail.render import Renderer
from tests.helpers import ADA, BOB, CARLA, DAY, Game, new_game

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def renderer(language: str) -> Renderer:
    return Renderer(language, "Europe/Rome", "Nomic <Test>", "referee@nomic.example")


def cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from referee.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        check=False,
    )


def plain_bodies(path: Path) -> list[tuple[str, str]]:
    out = []
    for item in mailbox.mbox(str(path)):
        msg = message_from_bytes(item.as_bytes(), policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        body = msg.get_body(("plain",))
        assert body is not None
        out.append((str(msg["Subject"]), body.get_content()))
    return out


@pytest.fixture(scope="module", params=["en", "it"])
def replayed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, subprocess.CompletedProcess[str]]:
    """An example game replayed the README's way, keeping its mail and its website."""
    language = str(request.param)
    folder = tmp_path_factory.mktemp(f"replay-{language}")
    done = cli(
        "replay",
        EXAMPLES / f"game-{language}.toml",
        EXAMPLES / f"game-{language}.mbox",
        "--out",
        "sent.mbox",
        "--site",
        "site",
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    return language, folder, done


def test_replay_writes_the_examples_website(
    replayed: tuple[str, Path, subprocess.CompletedProcess[str]],
) -> None:
    language, folder, done = replayed
    index = folder / "site" / "index.html"
    assert index.is_file() and "Bob Rossi" in index.read_text(encoding="utf-8")
    assert f"open {Path('site') / 'index.html'}" in done.stderr
    assert "(s)" not in done.stderr
    history = (folder / "site" / "rules" / "101.html").read_text(encoding="utf-8")
    note = {"en": "[initial ruleset]", "it": "[regolamento iniziale]"}[language]
    assert note in history
    if language == "it":
        assert "initial ruleset" not in history


def test_the_winner_mail_cites_the_winning_rule_by_its_current_number(
    replayed: tuple[str, Path, subprocess.CompletedProcess[str]],
) -> None:
    language, folder, _ = replayed
    word = {"en": "rule", "it": "regola"}[language]
    mails = plain_bodies(folder / "sent.mbox")
    title = {"en": "Bob Rossi wins", "it": "Vince Bob Rossi"}[language]
    winners = [body for subject, body in mails if subject.endswith(title)]
    assert winners
    text = " ".join(winners[0].split())
    formerly = {"en": "formerly", "it": "già"}[language]
    assert f"27 {'points' if language == 'en' else 'punti'} ({word} 304, {formerly} 209)" in text
    assert f"({word} 209)" not in text


def test_parameters_are_named_for_people_and_still_typeable(
    replayed: tuple[str, Path, subprocess.CompletedProcess[str]],
) -> None:
    language, folder, _ = replayed
    human = {"en": "winning score", "it": "punteggio per vincere"}[language]
    text = " ".join(" ".join(body.split()) for _, body in plain_bodies(folder / "sent.mbox"))
    assert f"{human} (winning_score) = 25" in text
    assert f"{human} (winning_score) 100 → 25" in text
    bare = re.findall(r"(?<!\()\bwinning_score\b(?!\))", text)
    assert bare == []  # the identifier only ever follows its human name


def _score_tables(body: str) -> list[list[int]]:
    """Each plain-text score table's points column, in the order the mail lists them."""
    tables: list[list[int]] = []
    current: list[int] | None = None
    for line in body.splitlines():
        if re.match(r"^\s*(Player|Giocatore)\s+(Points|Punti)\b", line):
            current = []
            tables.append(current)
            continue
        if current is not None:
            match = re.match(r"^\s*[A-Z][\w .'-]*?\s{2,}(\d+)\b", line)
            if match:
                current.append(int(match.group(1)))
            elif line.strip() and not set(line.strip()) <= set("-| "):
                current = None
    return tables


def test_every_score_table_is_in_order_of_points(
    replayed: tuple[str, Path, subprocess.CompletedProcess[str]],
) -> None:
    _, folder, _ = replayed
    tables = [t for _, body in plain_bodies(folder / "sent.mbox") for t in _score_tables(body)]
    assert len(tables) > 5 and any(len(set(t)) > 1 for t in tables)
    for table in tables:
        assert table == sorted(table, reverse=True), table


def test_italian_vote_counts_agree_in_number() -> None:
    game = Game(state=new_game(language="it"))
    number = int(game.do(Propose(CARLA, K.ENACT, text="Si gioca di lunedì.")).data["number"])
    for who, yes in ((ADA, True), (BOB, True), (CARLA, False)):
        game.do(Vote(who, number, yes))
    game.clock(game.now + 8 * DAY)
    (result,) = game.notices("vote_result")
    text = " ".join(renderer("it").render("notices/vote_result", result.data).text.split())
    assert "2 favorevoli, 1 contrario o astenuto" in text


def test_a_rule_enacted_without_a_title_is_headed_by_its_number_alone() -> None:
    game = Game()
    sentence = "Players may also vote by carrier pigeon."
    number = int(game.do(Propose(CARLA, K.ENACT, text=sentence)).data["number"])
    for who in (ADA, BOB, CARLA):
        game.do(Vote(who, number, True))
    game.clock(game.now + 8 * DAY)
    game.do(Award(ADA, 1))
    rulesets = game.notices("ruleset")
    assert rulesets
    text = renderer("en").render("notices/ruleset", rulesets[-1].data).text
    assert f"Rule {number} — {sentence}" not in text
    assert text.count(sentence) == 1
    assert re.search(rf"^\s*Rule {number}\s*$", text, re.M)


@pytest.mark.parametrize(
    ("number", "expected"), [(0, "0 mails"), (1, "1 mail"), (2, "2 mails"), (1, "1 mail")]
)
def test_the_command_line_counts_agree_with_their_nouns(number: int, expected: str) -> None:
    assert counted(number, "mail") == expected


def test_the_italian_examples_players_write_italian_subjects(
    replayed: tuple[str, Path, subprocess.CompletedProcess[str]],
) -> None:
    language, folder, _ = replayed
    if language != "it":
        pytest.skip("the English example's subjects are English")
    replies = [s for s, _ in plain_bodies(folder / "sent.mbox") if s.startswith("Re:")]
    assert "Re: La mia proposta" in replies
    english = ("My proposal", "An appeal", "Proposal 301", "Ruling on", "King:", "Turn ")
    assert not [s for s in replies if any(word in s for word in english)]


@pytest.mark.parametrize(
    ("language", "vote", "said", "doubled"),
    [
        ("en", "VOTE 301 YES", "amend rule 201 (now rule 301)", "(201) (now rule 301)"),
        ("it", "VOTO 301 SÌ", "emendare la regola 201 (ora regola 301)", "(201) (ora regola 301)"),
    ],
)
def test_a_label_that_is_the_rules_old_number_is_not_said_twice(
    tmp_path: Path, language: str, vote: str, said: str, doubled: str
) -> None:
    """A ruleset whose document numbers rule 201 as `201` (its label): once proposal 301 has
    renumbered it, the mail says "amend rule 201 (now rule 301)", not "(201) (now rule 301)"."""
    import shutil
    from datetime import timedelta

    from referee.config import load_settings
    from referee.service import Referee
    from referee.store.store import Store
    from tests.conftest import write_config
    from tests.helpers import T0, mail

    shutil.copytree(ROOT / "ruleset" / language, tmp_path / "rules")
    first = tmp_path / "rules" / "201.md"
    first.write_text(
        first.read_text(encoding="utf-8").replace(
            "number = 201\n", 'number = 201\nlabel = "201"\n'
        ),
        encoding="utf-8",
    )
    config = write_config(tmp_path, language)
    text = config.read_text(encoding="utf-8").replace(
        "timezone = ", 'ruleset = "rules"\ntimezone = '
    )
    config.write_text(text, encoding="utf-8")
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0)
        amend = "PROPOSE AMEND 201\nTurns go by surname.\nEND"
        if language == "it":
            amend = "PROPONGO EMENDARE 201\nI turni vanno per cognome.\nFINE"
        referee.receive(mail(CARLA, amend), T0 + timedelta(hours=1))
        referee.advance(T0 + 8 * DAY)
        for who in (ADA, BOB, CARLA):
            referee.receive(mail(who, vote), T0 + 8 * DAY + timedelta(hours=1))
        assert 301 in [r.number for r in referee.state.rules_in_force]  # renumbered (109)
        result = next(r for r in store.outbox(referee.game_id) if r.kind == "vote_result")
        message = message_from_bytes(result.raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        body = message.get_body(("plain",))
        assert body is not None
        words = " ".join(str(body.get_content()).split())
        assert said in words and doubled not in words
    finally:
        store.close()
