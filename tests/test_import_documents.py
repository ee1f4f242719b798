"""Rule documents in many shapes: import, export, round trip, then a game played on them (101,
102, 109, 110, 115, 210).

Each document is taken in with `nomic-referee import`, checked character by character against
the folder, written back with `nomic-referee export`, and then played through `replay`
(`tests.imported`): a
proposal amends, one repeals and one transmutes a rule named by its label, and the players ask
for rules by label and path.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee import importer
from referee.core import labels
from referee.core.model import Rule
from referee.counts import counted
from tests.helpers import ADA, BOB, CARLA, T0
from tests.imported import bodies, config, message, replay_game, ruleset_order, turn
from tests.test_cli import cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SEED = ROOT.parent / "shared" / "seeds" / "000_1052fcb6633c6904.txt"


def finnish_laws() -> Path:
    """The seed's Finnish code (tests/data keeps the same bytes for a checkout without it)."""
    copy = DATA / "dalmuti-laws.txt"
    if SEED.is_file():
        assert SEED.read_bytes() == copy.read_bytes()
        return SEED
    return copy


@dataclass(frozen=True)
class Case:
    """A document, how it is imported, and the game played on it."""

    name: str
    path: Path
    flags: tuple[str, ...]
    parameters: str  # the config's [parameters] lines
    amend: str  # a reference by label (or path) for each move
    repeal: str
    transmute: str
    ask: str  # RULE <ask>
    history: str  # HISTORY <history>
    new_text: str
    rules: int
    headings: int
    ambiguous: str = ""  # a label several rules share


CASES = [
    Case(
        "finnish",
        finnish_laws(),
        ("--immutable", "§ -1", "--immutable", "§ 1", "--carry", "winning_score=§ 5.4"),
        "max_mutable_rules = 60",
        "§ 2.2",
        "4.4.1",
        "§ -1",
        "2.2.2.10.1#2",
        "§ 2.2",
        "Satunnaiset maailmantapahtumat. Kortti käännetään eſiin jokaiſella kierrokſella — ♦ ♣.",
        58,
        0,
    ),
    Case(
        "roman-chapters",
        DATA / "kerho-luvut.txt",
        ("--immutable", "I/I"),
        "",
        "II/III",
        "III/IV",
        "I/I",
        "II/II",
        "II/III",
        "Eroava jäsen palauttaa läänitysmerkkinsä ſihteerille viikon ſisällä.",
        10,
        3,
        "III",
    ),
    Case(
        "cyrillic-restart",
        DATA / "ustav-1911.txt",
        ("--immutable", "IV", "--carry", "winning_score=II"),
        "",
        "V",
        "VI",
        "IV",
        "I",
        "ОТДѢЛЪ ВТОРОЙ. О ГОЛОСОВАНІИ/II",
        "Правила, помѣченныя какъ неизмѣнныя, измѣняются единогласно (правило IV); ѳита и ѵ.",
        5,
        2,
    ),
    Case(
        "no-numbers",
        DATA / "thursday-table.txt",
        ("--immutable", "¶1"),
        "",
        "¶2",
        "¶3",
        "¶1",
        "¶4",
        "¶2",
        "The host deals first; the dealer shuffles three times.",
        4,
        0,
    ),
    Case(
        "markdown",
        DATA / "chess-statutes.md",
        ("--immutable", "1/1", "--language", "en"),
        "",
        "1/2",
        "2/2",
        "1/1",
        "2/2.1/1",
        "2/2.1/2",
        "Members pay € 25 a year; students pay half.",
        6,
        3,
        "§ 2",
    ),
]


def non_space(text: str) -> str:
    return "".join(text.split())


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def case(request: pytest.FixtureRequest) -> Case:
    found: Case = request.param
    return found


def test_import_keeps_every_character_and_export_gives_the_document_back(
    case: Case, tmp_path: Path
) -> None:
    folder = tmp_path / "rules"
    done = cli("import", case.path, "--out", folder, *case.flags)
    assert done.returncode == 0, done.stderr
    assert f"wrote {counted(case.rules, 'rule')} to" in done.stdout
    document = case.path.read_text(encoding="utf-8")
    # every non-space character of the document is in the folder's files, as often as there
    files = "".join(p.read_text(encoding="utf-8") for p in sorted(folder.iterdir()))
    missing = Counter(non_space(document)) - Counter(non_space(files))
    assert not missing, missing
    # and the export puts them back in the document's order, word for word
    exported = cli("export", folder)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.split() == document.split()
    written = tmp_path / "again.txt"
    assert cli("export", folder, "--output", written).returncode == 0
    assert written.read_text(encoding="utf-8") == exported.stdout
    # the round trip is stable: importing the export gives the same folder
    again = tmp_path / "again"
    assert cli("import", written, "--out", again, *case.flags).returncode == 0
    for file in folder.iterdir():
        if file.suffix == ".md":
            assert (again / file.name).read_text(encoding="utf-8") == file.read_text(
                encoding="utf-8"
            )
    doc = importer.read_document(document)
    assert len(doc.sections) == case.rules and len(doc.headings) == case.headings


def test_what_the_reader_finds_in_each_shape() -> None:
    finnish = importer.read_document(finnish_laws().read_text(encoding="utf-8"))
    assert finnish.title.startswith("Sen Yhden Suuren Dalmutin Peliſäännöt")
    assert finnish.preamble.startswith("Me Suuri Dalmuti") and finnish.numbering == "dotted+§"
    by_label = {s.label: s for s in finnish.sections}
    assert [s.label for s in finnish.sections[:3]] == ["§ -1", "-1.1", "§ 1"]
    assert by_label["§ 2.2.2.5.1"].depth == 5 and by_label["§ 2.2.2.5.1"].marker.startswith("•")
    twins = [s for s in finnish.sections if s.label == "§ 2.2.2.10.1"]
    assert [t.path for t in twins] == ["§ 2.2.2.10.1", "§ 2.2.2.10.1#2"]
    assert "♦" in by_label["§ 2.2.1.1"].text and "“lukossa”" in by_label["§ 2.2.2.11.1"].text

    roman = importer.read_document((DATA / "kerho-luvut.txt").read_text(encoding="utf-8"))
    assert [h.label for h in roman.headings] == ["I", "II", "III"]
    assert [s.path for s in roman.sections][:4] == ["I/I", "I/II", "I/III", "II/I"]
    third = roman.sections[2]
    assert "13 kerjäläistä ja 1 Dalmuti" in third.text  # a number inside a paragraph
    assert any("13 kerjäläistä" in note for note in roman.notes)
    assert "    - paitsi Dalmutin luvalla." in roman.sections[1].text  # nested dash-items stay
    assert roman.headings[0].text == "Yleiset määräykset"
    assert "a) ensin ehdotus luetaan;" in roman.sections[7].text

    ustav = importer.read_document((DATA / "ustav-1911.txt").read_text(encoding="utf-8"))
    assert [s.label for s in ustav.sections] == ["IV", "V", "VI", "I", "II"]
    assert "Примѣчаніе" in ustav.sections[1].text  # an unnumbered paragraph: the rule above
    assert ustav.headings[1].text.startswith("Голосованіе производится открыто")
    assert "ѳ" not in ustav.title and "Ѳеодоръ" in ustav.sections[2].text

    plain = importer.read_document((DATA / "thursday-table.txt").read_text(encoding="utf-8"))
    assert plain.numbering == "none" and plain.sections[0].path == "¶1"
    assert "- Cards are dealt one at a time." in plain.sections[1].text

    chess = importer.read_document((DATA / "chess-statutes.md").read_text(encoding="utf-8"))
    assert chess.format == "md" and chess.title == "# Statutes of the Via Roma Chess Club"
    assert [h.path for h in chess.headings] == ["1", "2", "2/2.1"]
    assert chess.sections[4].path == "2/2.1/1" and chess.sections[4].depth == 3


def test_cross_references_in_the_text_still_name_their_rules(tmp_path: Path) -> None:
    from referee import rulebook

    folder = tmp_path / "ustav"
    assert cli("import", DATA / "ustav-1911.txt", "--out", folder).returncode == 0
    rules = rulebook.load_folder(folder).rules
    for ref in re.findall(r"\(правило ([IVX]+)", "\n".join(r.text for r in rules)):
        found = labels.resolve(rules, ref)
        assert found.rule is not None, ref


def test_import_refuses_options_that_name_no_rule_and_a_folder_in_use(tmp_path: Path) -> None:
    folder = tmp_path / "rules"
    wrong = cli("import", DATA / "kerho-luvut.txt", "--out", folder, "--immutable", "IX")
    assert wrong.returncode == 2 and "no rule 'IX'" in wrong.stderr
    assert not folder.exists() or not any(folder.iterdir())
    twice = cli("import", DATA / "kerho-luvut.txt", "--out", folder, "--immutable", "II")
    assert twice.returncode == 2 and "names several rules" in twice.stderr
    assert "I/II" in twice.stderr and "II/II" in twice.stderr
    assert cli("import", DATA / "kerho-luvut.txt", "--out", folder).returncode == 0
    again = cli("import", DATA / "kerho-luvut.txt", "--out", folder)
    assert again.returncode == 2 and "already holds a ruleset" in again.stderr
    bad = cli("import", DATA / "kerho-luvut.txt", "--out", tmp_path / "x", "--carry", "speed")
    assert bad.returncode == 2 and "NAME=RULE" in bad.stderr


def test_init_refuses_a_ruleset_that_could_not_move_and_says_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "laws"
    assert cli("import", finnish_laws(), "--out", folder).returncode == 0
    refused = cli("init", config(tmp_path, folder))
    assert refused.returncode == 2
    assert "58 mutable rules but at most 25" in refused.stderr
    assert "[parameters] max_mutable_rules = 58" in refused.stderr and "immutable" in refused.stderr
    # rule 115: a ruleset where nothing may change
    closed = tmp_path / "closed"
    listed = [f"--immutable={ref}" for ref in ("¶1", "¶2", "¶3", "¶4")]
    early = cli("import", DATA / "thursday-table.txt", "--out", closed, *listed)
    assert early.returncode == 2 and "(115)" in early.stderr  # import says so at once
    assert cli("import", DATA / "thursday-table.txt", "--out", closed).returncode == 0
    index = closed / "ruleset.toml"  # and init, when the folder is edited by hand
    edited = index.read_text(encoding="utf-8").replace(
        "immutable = []", 'immutable = ["¶1", "¶2", "¶3", "¶4"]'
    )
    index.write_text(edited, encoding="utf-8")
    (tmp_path / "two").mkdir()
    none_mutable = cli("init", config(tmp_path / "two", closed))
    assert none_mutable.returncode == 2 and "(115)" in none_mutable.stderr
    # the fix the message gives works
    (tmp_path / "three").mkdir()
    fixed = cli("init", config(tmp_path / "three", folder, "max_mutable_rules = 58"))
    assert fixed.returncode == 0, fixed.stderr
    assert "58 rules" in fixed.stdout


def test_a_game_is_played_on_the_imported_rules_by_their_labels(case: Case, tmp_path: Path) -> None:
    folder = tmp_path / "rules"
    assert cli("import", case.path, "--out", folder, *case.flags).returncode == 0
    settings = config(tmp_path, folder, case.parameters)
    script = [
        *turn(CARLA, f"PROPOSE AMEND {case.amend}\n{case.new_text}\nEND", 301, 0),
        message(BOB, f"RULE {case.ask}\nHISTORY {case.history}", 30),
        *turn(ADA, f"PROPOSE REPEAL {case.repeal}", 302, 8),
        *turn(BOB, f"PROPOSE TRANSMUTE {case.transmute}", 303, 16),
        message(CARLA, f"HISTORY {case.amend}", 25 * 24),
        message(BOB, f"RULE {case.ambiguous or case.ask}", 25 * 24 + 1),
    ]
    state, sent = replay_game(settings, script, tmp_path)
    proposals = {p["number"]: p for p in state["proposals"]}
    assert [proposals[n]["status"] for n in (301, 302, 303)] == ["adopted"] * 3, proposals
    rules = {r["number"]: r for r in state["rules"]}
    before = {r.number: r for r in _folder_rules(folder)}
    amended = _named(before, case.amend)
    repealed = _named(before, case.repeal)
    transmuted = _named(before, case.transmute)
    assert amended.number not in rules and rules[301]["text"] == case.new_text
    assert rules[301]["label"] == amended.label and rules[301]["path"] == amended.path
    assert repealed.number not in rules
    assert transmuted.number not in rules  # 109: a transmuted rule takes the proposal's number
    assert rules[303]["mutable"] is (not transmuted.mutable)
    assert rules[303]["path"] == transmuted.path and rules[303]["text"] == transmuted.text
    # text survives: every rule not changed is exactly as the document had it
    for number, rule in before.items():
        if number in rules:
            assert rules[number]["text"] == rule.text
    mails = bodies(sent)
    # the last ruleset mail keeps changed rules in their places, under their new numbers
    last = [text for _, text in bodies(sent, ".ruleset@")][-1]  # one thread per game (205)
    now = {amended.number: 301, transmuted.number: 303}
    assert ruleset_order(sent) == [now.get(n, n) for n in sorted(before) if n != repealed.number]
    shown = labels.display(amended, tuple(before.values()))  # the label, or the path if it repeats
    if shown:
        assert f"Rule 301 ({shown})" in last
    # HISTORY by label after the amendment still finds the rule, now 301
    history = [t for s, t in mails if "History" in t or "history" in t.lower()]
    flat = [" ".join(t.split()) for t in history]  # plain text is wrapped at 72
    assert any("(then numbered 301, proposal 301)" in t for t in flat), history[-1:]
    if case.ambiguous:  # a label several rules share: the answer lists them
        asked = next(t for s, t in mails if f"> RULE {case.ambiguous}" in t)
        assert f"Several rules are labelled {case.ambiguous}" in asked


def _folder_rules(folder: Path) -> tuple[Rule, ...]:
    from referee import rulebook

    return rulebook.load_folder(folder).rules


def _named(rules: dict[int, Rule], ref: str) -> Rule:
    found = labels.resolve(tuple(rules.values()), ref)
    assert found.rule is not None, ref
    return found.rule


@pytest.mark.parametrize(
    ("line", "number", "ref"),
    [
        ("RULE § 2.2", None, "§ 2.2"),
        ("RULE 2.2", None, "2.2"),
        ("RULE §2.2.", None, "§2.2."),
        ("REGOLA 202", 202, ""),
        ("HISTORY II/III", None, "II/III"),
        ("STORIA IV", None, "IV"),
        ("RULE ¶2", None, "¶2"),
        ("RULE § -1", None, "§ -1"),
        ("CONFIRM § 5.4", None, "§ 5.4"),
        ("CONFERMO 209", 209, ""),
    ],
)
def test_every_rule_command_takes_a_label_or_a_path(
    line: str, number: int | None, ref: str
) -> None:
    from referee.core.events import Confirm, Query
    from referee.mail.commands import parse_commands

    [parsed] = parse_commands(BOB, "", line)
    command = parsed.command
    if isinstance(command, Confirm):
        assert (command.rule or None, command.ref) == (number, ref)
        return
    assert isinstance(command, Query), parsed.problem
    assert (command.number, command.ref) == (number, ref)


def test_proposals_name_their_rule_by_label() -> None:
    from referee.core.events import Propose
    from referee.core.model import ProposalKind as K
    from referee.mail.commands import parse_commands

    text = (
        "PROPOSE AMEND § 2.2 Uusi teksti.\nToinen rivi.\nEND\n"
        "PROPOSE REPEAL IV\nPROPOSE TRANSMUTE § -1\nPROPONGO ABROGARE II/III\n"
        "PROPOSE ENACT AMENDMENT 2.2.1\nLisäys.\nEND\nPROPOSE REPEAL § 2.2 § 2.3\n"
    )
    found = parse_commands(BOB, "", text)
    commands = [p.command for p in found]
    assert commands[0] == Propose(BOB, K.AMEND, text="Uusi teksti.\nToinen rivi.", ref="§ 2.2")
    assert commands[1] == Propose(BOB, K.REPEAL, ref="IV")
    assert commands[2] == Propose(BOB, K.TRANSMUTE, ref="§ -1")
    assert commands[3] == Propose(BOB, K.REPEAL, ref="II/III")
    assert commands[4] == Propose(BOB, K.ENACT_AMENDMENT, text="Lisäys.", ref="2.2.1")
    assert commands[5] is None and found[5].problem  # two rules at once: a syntax problem


def test_a_game_saved_before_labels_reads_back() -> None:
    """States and events logged before rules had labels (no `label`, `path`, `ref` keys)."""
    from referee.core import codec
    from referee.core.events import Propose
    from referee.core.model import ProposalKind
    from tests.helpers import new_game

    state = new_game()
    data = codec.state_to_data(state)
    for rule in data["rules"]:
        del rule["label"], rule["path"]
    assert codec.state_from_data(data) == state
    event = codec.event_to_data(Propose(BOB, ProposalKind.REPEAL, target=209))
    del event["ref"]
    assert codec.event_from_data(event) == Propose(BOB, ProposalKind.REPEAL, target=209)


def test_documents_that_cannot_be_rules_get_a_clear_answer(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n   \n", encoding="utf-8")
    done = cli("import", empty, "--out", tmp_path / "a")
    assert done.returncode == 2 and "no rules found" in done.stderr
    binary = tmp_path / "laws.pdf"
    binary.write_bytes(b"%PDF-1.4\n\xff\xfe\x00\x81 binary")
    done = cli("import", binary, "--out", tmp_path / "b")
    assert done.returncode == 2 and "cannot read" in done.stderr and "Traceback" not in done.stderr
    done = cli("export", tmp_path / "nowhere")
    assert done.returncode == 2 and "not a ruleset folder" in done.stderr


def test_markdown_export_of_a_text_document_reads_back_the_same(tmp_path: Path) -> None:
    from referee import rulebook

    folder = tmp_path / "kerho"
    assert cli("import", DATA / "kerho-luvut.txt", "--out", folder).returncode == 0
    markdown = cli("export", folder, "--format", "md")
    assert markdown.returncode == 0
    assert markdown.stdout.startswith("# TUONELAN PELIKERHON JÄRJESTYSSÄÄNTÖ")
    assert "\n## I LUKU\n" in markdown.stdout
    written = tmp_path / "kerho.md"
    written.write_text(markdown.stdout, encoding="utf-8")
    again = tmp_path / "again"
    assert cli("import", written, "--out", again).returncode == 0
    first, second = rulebook.load_folder(folder).rules, rulebook.load_folder(again).rules
    assert [(r.number, r.label, r.path, r.text) for r in first] == [
        (r.number, r.label, r.path, r.text) for r in second
    ]


def test_a_long_code_is_read_in_one_pass() -> None:
    """Two thousand sections under fifty chapters: every one found, none merged."""
    chapters = []
    for chapter in range(1, 51):
        rules = "\n\n".join(f"{n}. Sääntö {chapter}.{n}: 13 kerjäläistä." for n in range(1, 41))
        chapters.append(f"Chapter {chapter}\n\n{rules}")
    doc = importer.read_document("Laws\n\n" + "\n\n".join(chapters))
    assert len(doc.sections) == 2000 and len(doc.headings) == 50
    assert doc.sections[-1].path == "50/40"
    numbered = importer.game_numbers(doc)
    assert numbered[0].number == 101 and numbered[-1].number == 2100


def test_control_characters_and_odd_lines_survive_the_folder(tmp_path: Path) -> None:
    """A document with a NUL, a DEL, escapes, quotes, '+++' lines and TOML-looking text."""
    text = (
        'Säännöt "lainausmerkeissä" \\ ja \x7f\n\n'
        "1. Ensimmäinen\x00 sääntö \x1b[31m punainen.\n+++\nnumber = 999\n+++\n\n"
        "2. Toinen: \"\"\" ja ''' ja [carry] ja \\u0041.\n\n"
        "3. Kolmas\x0bsääntö.\n"
    )
    source = tmp_path / "odd.txt"
    source.write_text(text, encoding="utf-8")
    folder = tmp_path / "odd"
    done = cli("import", source, "--out", folder)
    assert done.returncode == 0, done.stderr
    exported = cli("export", folder)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.split() == text.split()
    from referee import rulebook

    rules = rulebook.load_folder(folder).rules
    assert [r.label for r in rules] == ["1", "2", "3"] and "number = 999" in rules[0].text


def test_a_carried_parameter_is_the_rules_and_the_king_confirms_it_by_label(
    tmp_path: Path,
) -> None:
    """[carry] gives § 5.4 the winning score; amended in silence, the King keeps it (111)."""
    from referee import rulebook
    from referee.core import engine, params
    from referee.core.events import Confirm, Propose, Vote
    from referee.core.model import GameState, ProposalKind
    from tests.helpers import DAY, PLAYERS, Game

    folder = tmp_path / "laws"
    flags = ("--carry", "winning_score=§ 5.4", "--immutable", "§ 1")
    assert cli("import", finnish_laws(), "--out", folder, *flags).returncode == 0
    house = {"winning_score": "40", "max_mutable_rules": "60"}
    ruleset = rulebook.load_folder(folder, house)
    carrier = _named({r.number: r for r in ruleset.rules}, "§ 5.4")
    assert carrier.parameters == (("winning_score", "40"),)  # the house value, now the rule's
    assert not _named({r.number: r for r in ruleset.rules}, "§ 1").mutable
    state = GameState(
        name="Dalmuti",
        language="en",
        started_at=T0,
        players=PLAYERS,
        king=ADA,
        rules=ruleset.at(T0),
        house_parameters=tuple(house.items()),
    )
    rulebook.check_playable(state)
    game = Game(engine.start_game(state, T0).state)
    assert params.carrier(game.state, "winning_score") == game.state.rule_by_number(carrier.number)
    proposer = game.state.turn_player or ""
    assert game.do(Propose(proposer, ProposalKind.AMEND, ref="§ 5.4", text="Pisteet.")).ok
    for who in (ADA, BOB, CARLA):
        game.do(Vote(who, 301, True))
    game.at(game.now + 8 * DAY)
    assert game.state.parameter_questions
    assert game.do(Confirm(ADA, 0, ref="§ 5.4")).ok
    assert not game.state.parameter_questions
    assert params.effective(game.state)["winning_score"] == 40


def test_dotted_sections_under_numbered_headings() -> None:
    """`## 2. Games` then `2.1`, `2.2` line by line: the heading is the sections' parent."""
    text = (
        "# Rules\n\n## 1. Membership\n\n1.1 Anyone may join.\n\n1.2 Members pay.\n\n"
        "## 2. Games\n\n2.1 Games use a clock.\n2.2 One adjournment, 3 days at most.\n"
        "2.5 kg of chess sets stay in the club.\n"
    )
    doc = importer.read_document(text)
    assert [s.path for s in doc.sections] == ["1/1.1", "1/1.2", "2/2.1", "2/2.2"]
    assert doc.sections[-1].text.endswith("2.5 kg of chess sets stay in the club.")
    assert any("2.5 kg" in note for note in doc.notes)


def test_a_reference_finds_its_rule_by_number_then_label_then_path() -> None:
    def rule(number: int, label: str, path: str, in_force: bool = True) -> Rule:
        return Rule(
            number, number, True, f"text {number}", label=label, path=path, in_force=in_force
        )

    rules = (
        rule(101, "§ 1", "§ 1"),
        rule(102, "2", "A/2"),
        rule(103, "2", "B/2"),
        rule(104, "IV", "B/IV", in_force=False),
        rule(301, "IV", "C/IV"),
        rule(105, "101", "C/101"),
    )
    assert labels.resolve(rules, 101).rule == rules[5]  # a label before a number
    assert labels.resolve(rules, "§1.").rule == rules[0] and labels.resolve(rules, "1").rule
    assert labels.resolve(rules, "2").ambiguous
    assert [r.number for r in labels.resolve(rules, "2").candidates] == [102, 103]
    assert labels.resolve(rules, "b/2").rule == rules[2]  # paths ignore case
    assert labels.resolve(rules, "IV").rule == rules[4]  # the rule in force first
    assert labels.resolve(rules, "B/IV").rule == rules[3]  # a repealed rule by its path
    assert labels.resolve(rules, "XL").rule is None and not labels.resolve(rules, "XL").ambiguous
    assert labels.display(rules[0], rules) == "§ 1"
    assert labels.display(rules[1], rules) == "A/2"
    assert labels.shown(rules[2]) == "103 (B/2)"
    order = labels.reading_order([Rule(400, 400, True, "new"), rules[4], rules[1], rules[0]])
    assert [r.number for r in order] == [101, 102, 301, 400]


def test_the_site_shows_each_rule_by_its_own_label(tmp_path: Path) -> None:
    """Issue 18, item 2: the site names a rule by the document's label (`§ 2.2`), as commands
    and mail do, in the front page's table, the rules page and the rule's own page."""
    case = CASES[0]
    folder = tmp_path / "rules"
    assert cli("import", case.path, "--out", folder, *case.flags).returncode == 0
    settings = config(tmp_path, folder, case.parameters)
    assert cli("init", settings).returncode == 0
    site = tmp_path / "site"
    built = cli("site", settings, "--out", site)
    assert built.returncode == 0, built.stderr
    front = (site / "index.html").read_text(encoding="utf-8")
    table = front.split('<table class="rules">')[1].split("</table>")[0]
    assert ">§ 2.2</a></td>" in table
    page = (site / "rules.html").read_text(encoding="utf-8")
    assert re.search(r"<h2><a href=\"rules/\d+\.html\">Rule § 2\.2</a>", page), page[:2000]
    target = re.search(r'<h2><a href="(rules/\d+\.html)">Rule § 2\.2</a>', page)
    assert target is not None
    own = (site / target.group(1)).read_text(encoding="utf-8")
    assert "<h1>Rule § 2.2" in own
