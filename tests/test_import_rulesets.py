"""Rulesets as Nomic groups write them, imported rule for rule and played by their own labels
(101, 102, 109, 111, 209, 210).

Each document in tests/data/rulesets (see SOURCES.md there) is imported with `nomic-referee
import`: the rule count is exact, every rule's text is whole and separate, the labels are the
document's, export gives the document back in its own order and a second import the same
folder; then a game started on it amends a rule named by its own label through `replay`
(`tests.imported`), speaking the ruleset's language and listing its rules in its order.
A generated ruleset of several hundred rules checks the same at scale.
"""

from __future__ import annotations

import email.utils
import random
import re
import textwrap
import tomllib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from referee import exporter, importer, rulebook
from referee.config import load_settings
from referee.core import labels, numbering
from referee.counts import counted
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import ADA, BOB, CARLA, T0
from tests.imported import bodies, config, message, replay_game, ruleset_order, turn
from tests.test_cli import cli

DATA = Path(__file__).resolve().parent / "data" / "rulesets"


@dataclass(frozen=True)
class Shape:
    name: str
    file: str
    labels: tuple[str, ...]  # every rule's label, in the document's order
    flags: tuple[str, ...]  # the import's options, carrying or dismissing what the rules state
    amend: str  # the label of the rule the game amends
    ends: dict[str, tuple[str, str]]  # label: how its text starts and ends
    parameters: str = ""
    immutable: tuple[str, ...] | None = None  # the immutable rules' labels, when checked
    language: str = "en"  # the language the import finds; the game speaks it


SHAPES = [
    Shape(
        "full-logical-ruleset",
        "driftwood-flr.txt",
        (
            "101",
            "1698",
            "869",
            "2139",
            "2350",
            "106",
            "879",
            "2422",
            "2141",
            "1030",
            "2449",
            "2327",
        ),
        (
            "--immutable-power",
            "3",
            "--carry",
            "winning_score=2449",
            "--carry",
            "max_mutable_rules=2141",
            "--dismiss",
            "debate_days",
            "--dismiss",
            "voting_days",
            "--dismiss",
            "majority_after_rounds",
        ),
        "2327",
        {
            "2327": ("The first week of each October", "DOES NOT OVERRIDE ANY OTHER RULE."),
            "106": ("When a proposal is adopted", "3. Ties are resolved against the proposal."),
            "2139": ("The Registrar is an office", "2. Each player's voting strength."),
            "101": ("Driftwood is a game of Nomic", "but the game never ends."),
        },
    ),
    Shape(
        "bold-numbers",
        "initial-set-bold.md",
        tuple(str(n) for n in [*range(101, 118), *range(201, 216)]),
        (
            "--immutable-under",
            "Immutable Rules",
        ),
        "203",
        {"101": ("All players must always abide", "201 to 215 (mutable).")},
    ),
    Shape(
        "bold-numbers-by-topic",
        "initial-set-topics.md",
        (
            "101",
            "113",
            "116",
            "117",
            "102",
            "103",
            "104",
            "105",
            "106",
            "107",
            "108",
            "109",
            "110",
            "111",
            "112",
            "114",
            "115",
            "201",
            "202",
            "203",
            "204",
            "205",
            "206",
            "207",
            "208",
            "210",
            "209",
            "211",
            "212",
            "213",
            "214",
            "215",
        ),
        (
            "--immutable-under",
            "The game",
            "--immutable-under",
            "Changing the rules",
        ),
        "209",
        {
            "113": (
                "The condition that makes a player",
                "applied and enacted and, if mutable, amended and repealed.",
            )
        },
    ),
    Shape(
        "markdown-rule-headings",
        "sandbar-nomic.md",
        ("4E83", "-216", "7", "3A", "12"),
        (
            "--immutable",
            "7",
            "--carry",
            "winning_score=7",
            "--dismiss",
            "debate_days",
            "--dismiss",
            "majority_after_rounds",
        ),
        "4E83",
        {
            "4E83": ("A player proposes a rule change", "2. Comment on anything unclear."),
            "-216": ("Voting happens on the pull request", "simple majority of the votes cast."),
        },
    ),
    Shape(
        "underlined-rule-headers",
        "harbour-rules.txt",
        ("1", "2", "5", "4", "10"),
        (
            "--immutable",
            "10",
            "--carry",
            "winning_score=5",
            "--dismiss",
            "debate_days",
            "--dismiss",
            "majority_after_rounds",
        ),
        "5",
        {"2": ("The rules in force are kept", "3) a majority of the members present.")},
    ),
    Shape(
        "parenthesised-numbers",
        "tidepool-laws.txt",
        ("1", "2", "3", "4", "5"),
        (
            "--immutable",
            "4",
            "--carry",
            "winning_score=5",
            "--dismiss",
            "debate_days",
            "--dismiss",
            "majority_after_rounds",
        ),
        "3",
        {"2": ("A player proposes a change", "passes when every player votes FOR.")},
    ),
]


SHAPES += [
    Shape(
        "immutable-in-the-header",
        "lighthouse-rules.txt",
        ("101", "102", "103", "201", "202", "204", "203"),
        ("--carry", "winning_score=204", "--dismiss", "majority_after_rounds"),
        "202",
        {
            "103": ("Every keeper votes on each proposed rule change.", "two keepers voted."),
            "203": ("No rule may take effect", "in which it is adopted has ended."),
        },
        immutable=("101", "102", "103"),
    ),
    Shape(
        "numbered-markdown-headings",
        "orchard-nomic.md",
        ("101", "102", "110", "201", "150", "202"),
        ("--carry", "winning_score=202"),
        "201",
        {
            "102": ("A player changes the rules by proposal.", "by the number in its heading."),
            "202": ("The first player to reach 100 points", "a basket of\napples."),
        },
        immutable=("101", "102", "110", "150"),
    ),
    Shape(
        "numbered-markdown-subheadings-in-italian",
        "cava-regole.md",
        ("101", "102", "201", "203", "202"),
        (
            "--immutable-under",
            "Regole immutabili",
            "--carry",
            "winning_score=202",
            "--carry",
            "majority_after_rounds=102",
            "--carry",
            "debate_days=201",
            "--carry",
            "max_mutable_rules=203",
        ),
        "203",
        {"102": ("Una modifica delle regole", "2) hanno votato almeno due giocatori.")},
        immutable=("101", "102"),
        language="it",
    ),
    Shape(
        "numbered-parts-over-numbered-rules",
        "reef-charter.md",
        ("101", "102", "201", "205", "203"),
        ("--immutable-under", "1", "--carry", "winning_score=203"),
        "205",
        {
            "102": ("A rule change is the enactment", "who voted is in favour of it."),
            "203": ("The first player to reach 50 points", "the reef is named after em."),
        },
        immutable=("101", "102"),
    ),
    Shape(
        "numbered-rules-over-numbered-sub-rules",
        "kelp-code.md",
        ("101", "102", "201", "202"),
        ("--carry", "winning_score=202", "--carry", "majority_after_rounds=102"),
        "201",
        {
            "101": ("All players must always follow", "binds no one, whatever it says."),
            "102": ("A player changes the rules by proposal;", "votes cast by the players."),
            "202": ("The first player to reach 75 points", "the game ends with them."),
        },
        immutable=("101", "102"),
    ),
]


@pytest.fixture(params=SHAPES, ids=[s.name for s in SHAPES])
def shape(request: pytest.FixtureRequest) -> Shape:
    found: Shape = request.param
    return found


def test_each_rule_is_read_whole_with_its_own_label(shape: Shape, tmp_path: Path) -> None:
    text = (DATA / shape.file).read_text(encoding="utf-8")
    doc = importer.read_document(text)
    assert tuple(s.label for s in doc.sections) == shape.labels
    for label, (start, end) in shape.ends.items():
        [rule] = [s for s in doc.sections if s.label == label]
        assert rule.text.startswith(start) and rule.text.endswith(end), rule.text
    headers = [s.marker.splitlines()[0] for s in doc.sections if s.marker]
    for rule in doc.sections:  # separate: no rule holds another's header
        assert not any(h in rule.text.splitlines() for h in headers), rule.label
    assert not importer.warnings(doc)
    folder = tmp_path / "rules"
    done = cli("import", DATA / shape.file, "--out", folder, "--strict", *shape.flags)
    assert done.returncode == 0, done.stderr
    assert f"found {counted(len(shape.labels), 'rule')} by" in done.stdout
    assert f"rule {shape.labels[0]}" in done.stdout
    assert f"language: {shape.language}, from the document's words" in done.stdout
    rules = rulebook.load_folder(folder).rules
    assert sorted(r.label for r in rules) == sorted(shape.labels)
    assert rulebook.load_folder(folder).language == shape.language
    if shape.immutable is not None:
        assert sorted(r.label for r in rules if not r.mutable) == sorted(shape.immutable)
    numbers = {r.label: r.number for r in rules}
    for label, number in numbers.items():  # a whole-number label is the rule's number
        if re.fullmatch(r"\d+", label):
            assert number == int(label)
    # export: the document's order, its own headers, word for word; a second import: the same
    exported = cli("export", folder)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.split() == text.split()
    again_doc = tmp_path / ("again" + Path(shape.file).suffix)
    again_doc.write_text(exported.stdout, encoding="utf-8")
    again = tmp_path / "again"
    assert cli("import", again_doc, "--out", again, *shape.flags).returncode == 0
    for file in folder.glob("*.md"):
        assert (again / file.name).read_text(encoding="utf-8") == file.read_text(encoding="utf-8")
    assert cli("export", again).stdout == exported.stdout


def test_a_game_amends_a_rule_by_its_own_label(shape: Shape, tmp_path: Path) -> None:
    folder = tmp_path / "rules"
    assert cli("import", DATA / shape.file, "--out", folder, *shape.flags).returncode == 0
    before = rulebook.load_folder(folder).rules
    mutable = sum(1 for r in before if r.mutable)
    # the config leaves [game] language out: the game speaks its ruleset's
    settings = config(tmp_path, folder, f"max_mutable_rules = {mutable + 5}", language=None)
    first = numbering.first_proposal_number(before)
    new_text = "Every player may read the ruleset aloud once a week."
    script = [
        *turn(CARLA, f"PROPOSE AMEND {shape.amend}\n{new_text}\nEND", first, 0),
        message(BOB, f"RULE {shape.amend}\nHISTORY {shape.amend}", 8 * 24 + 20),
    ]
    state, sent = replay_game(settings, script, tmp_path)
    assert {p["number"]: p["status"] for p in state["proposals"]} == {first: "adopted"}
    rules = {r["number"]: r for r in state["rules"]}
    old = labels.resolve(before, shape.amend).rule
    assert old is not None and old.number not in rules
    assert rules[first]["text"] == new_text and rules[first]["label"] == shape.amend
    assert all(
        labels.normal(r["label"]) != labels.normal(shape.amend)
        for r in rules.values()
        if r["number"] != first
    )
    answer = next(t for s, t in bodies(sent) if f"> RULE {shape.amend}" in t)
    assert new_text in answer
    # the ruleset mail lists the rules in the document's order, the amended one in its place
    numbers = {r.label: r.number for r in before}
    assert ruleset_order(sent) == [
        first if label == shape.amend else numbers[label] for label in shape.labels
    ]
    word = {"en": "Rule", "it": "Regola"}[shape.language]  # in the ruleset's language
    assert f"{word} {first}" in [t for _, t in bodies(sent, ".ruleset@")][-1]


def _round(text: str, folder: Path, form: str | None) -> str:
    """import, then export: what `nomic-referee import` and `export` write (tested above)."""
    importer.write_folder(importer.read_document(text), importer.Options(), "doc", folder)
    return exporter.export(folder, form)


@pytest.mark.parametrize("form", [None, "md", "txt"])
@pytest.mark.parametrize(
    "document",
    sorted(p.name for p in DATA.iterdir() if p.name != "SOURCES.md")
    + [f"../{p.name}" for p in sorted(DATA.parent.glob("*.*"))],
)
def test_export_is_byte_stable_after_the_first(
    document: str, form: str | None, tmp_path: Path
) -> None:
    """import → export → import → export gives the first export back byte for byte, in the
    document's own form and in each other (an underlined title stays one heading)."""
    exported = _round((DATA / document).read_text(encoding="utf-8"), tmp_path / "first", form)
    again = exported
    for round_ in range(3):
        again = _round(again, tmp_path / f"round{round_}", form)
        assert again == exported, round_


def test_a_ruleset_of_several_hundred_rules(tmp_path: Path) -> None:
    """Three hundred rules in topic order, numbers from 100 to 9999 with gaps, lists and
    ALL-CAPS sentences inside rules, histories, separators and section titles between them."""
    chance = random.Random(18)
    numbers = chance.sample(range(100, 10000), 300)
    texts = {}
    blocks = ["THE SHORT LOGICAL RULESET", "", "Date of this ruleset: 1 Dec 2026", ""]
    for position, number in enumerate(numbers):
        if position % 25 == 0:
            blocks += ["=" * 72, f"Section {position // 25 + 1}", "-" * 72]
        word = chance.choice(["who", "when", "how"])
        body = [f"Rule {number} says {word} things happen, whenever a player asks for it."]
        if position % 3 == 0:
            body += ["", "A player CAN do so by:", "", "1. announcing it;", "2. waiting 4 days."]
        if position % 7 == 0:
            body += ["", "THIS RULE TAKES PRECEDENCE OVER RULE 101."]
        texts[str(number)] = "\n".join(body)
        blocks += [f"Rule {number}/{position % 9 + 1} (Power={1 + position % 3})", "Title"]
        blocks += ["", textwrap.indent(texts[str(number)], "      "), ""]
        if position % 2:
            blocks += ["History:", f"Enacted by P{position} (Wren), 1 Jan 2026", ""]
        blocks.append("-" * 72)
    document = "\n".join(blocks) + "\n"
    doc = importer.read_document(document)
    assert [s.label for s in doc.sections] == [str(n) for n in numbers]
    assert {s.label: s.text for s in doc.sections} == texts
    assert len(doc.headings) == 12 and not importer.warnings(doc)
    assert [int(s.power) for s in doc.sections][:4] == [1, 2, 3, 1]
    source = tmp_path / "slr.txt"
    source.write_text(document, encoding="utf-8")
    folder = tmp_path / "slr"
    done = cli("import", source, "--out", folder, "--immutable-power", "3")
    assert done.returncode == 0, done.stderr
    assert "found 300 rules by their headers, 12 headings" in done.stdout
    rules = rulebook.load_folder(folder).rules
    assert sum(1 for r in rules if not r.mutable) == 100
    exported = cli("export", folder)
    assert exported.stdout.split() == document.split()


def test_what_looks_wrong_is_said_and_strict_refuses(tmp_path: Path) -> None:
    lists = tmp_path / "players.txt"
    lists.write_text(
        "Players\n\n" + "\n\n".join(f"1. Alice\n2. Bob\n3. Carla {n}" for n in range(5)) + "\n",
        encoding="utf-8",
    )
    loose = cli("import", lists, "--out", tmp_path / "a")
    assert loose.returncode == 0 and "warning:" in loose.stdout
    strict = cli("import", lists, "--out", tmp_path / "b", "--strict")
    assert strict.returncode != 0 and "warning:" in strict.stdout


def test_init_refuses_until_the_rules_values_are_carried_or_dismissed(tmp_path: Path) -> None:
    folder = tmp_path / "dw"
    done = cli("import", DATA / "driftwood-flr.txt", "--out", folder, "--immutable-power", "3")
    assert done.returncode == 0, done.stderr
    assert "rule 2449 says winning_score = 50" in done.stdout
    assert "“The first player to reach 50 points wins the game.”" in done.stdout
    assert "voting strength (rule 2139, 2422)" in done.stdout and "quorum" in done.stdout
    refused = cli("init", "--strict", config(tmp_path, folder, "max_mutable_rules = 20"))
    assert refused.returncode == 2 and "winning_score = 50" in refused.stderr
    assert "--carry debate_days=2350" in refused.stderr
    carried = tmp_path / "carried"
    flags: tuple[str, ...] = (
        "--carry",
        "winning_score=2449",
        "--carry",
        "max_mutable_rules=2141",
        "--dismiss",
        "debate_days",
        "--dismiss",
        "voting_days",
    )
    two_thirds = cli(
        "import", DATA / "driftwood-flr.txt", "--out", carried, *flags,
        "--carry", "majority_after_rounds=106",
    )  # fmt: skip
    assert two_thirds.returncode == 2 and "cannot count" in two_thirds.stderr
    flags += ("--dismiss", "majority_after_rounds")
    assert cli("import", DATA / "driftwood-flr.txt", "--out", carried, *flags).returncode == 0
    rules = {r.label: r for r in rulebook.load_folder(carried).rules}
    assert rules["2449"].parameters == (("winning_score", "50"),)
    assert rules["2141"].parameters == (("max_mutable_rules", "60"),)


def test_a_document_named_directly_whose_rules_state_values_is_refused_with_the_fix(
    tmp_path: Path,
) -> None:
    """Named directly as [game] ruleset there is nowhere to carry or dismiss a value a rule
    states, so init refuses rather than run on a house value the rules contradict."""
    refused = cli(
        "init", "--strict", config(tmp_path, DATA / "lighthouse-rules.txt", language=None)
    )
    assert refused.returncode == 2
    assert "rule 204 says winning_score = 100" in refused.stderr
    assert "import it into a folder first" in refused.stderr and "--dismiss" in refused.stderr
    assert "edit its ruleset.toml" not in refused.stderr


def test_italian_rules_state_values_too_and_init_refuses_until_each_is_handled(
    tmp_path: Path,
) -> None:
    """An Italian ruleset's values are found as an English one's, each with its sentence; a
    threshold of two thirds can only be dismissed (the referee counts unanimity or a majority)."""
    cava = tmp_path / "cava"
    done = cli("import", DATA / "cava-regole.md", "--out", cava, "--immutable", "101")
    assert done.returncode == 0, done.stderr
    assert (
        "rule 202 says winning_score = 100: “Vince il primo giocatore che raggiunge i 100 punti,"
    ) in done.stdout
    assert "rule 102 says majority_after_rounds = 0: “Una proposta passa quando:" in done.stdout
    assert "rule 201 says debate_days = 7:" in done.stdout
    assert "rule 203 says max_mutable_rules = 20:" in done.stdout
    refused = cli("init", "--strict", config(tmp_path, cava))
    assert refused.returncode == 2 and "rule 201 says debate_days = 7" in refused.stderr
    document = tmp_path / "lago.md"
    document.write_text(
        "# Regole del Lago\n\n"
        "## 101. Le proposte\n\nOgni proposta ha due settimane di dibattito, poi si vota.\n\n"
        "## 102. Il voto\n\nUna proposta è approvata a maggioranza semplice dei voti espressi.\n\n"
        "## 201. Il punteggio\n\nUna proposta che cambia il punteggio è approvata con i due "
        "terzi dei voti.\n\n"
        "## 202. La votazione\n\nLa votazione resta aperta tre giorni.\n\n"
        "## 203. La vittoria\n\nVince il primo giocatore che raggiunge 80 punti.\n",
        encoding="utf-8",
    )
    lago = tmp_path / "lago"
    done = cli("import", document, "--out", lago)
    assert done.returncode == 0, done.stderr
    for said in (
        "rule 101 says debate_days = 14: “Ogni proposta ha due settimane di dibattito",
        "rule 102 says majority_after_rounds = 0: “Una proposta è approvata a maggioranza",
        "rule 201 says majority_after_rounds = 2/3: “Una proposta che cambia il punteggio",
        "rule 202 says voting_days = 3: “La votazione resta aperta tre giorni.”",
        "rule 203 says winning_score = 80: “Vince il primo giocatore che raggiunge 80 punti.”",
    ):
        assert said in done.stdout
    assert "the referee counts only unanimity or a majority" in done.stdout
    refused = cli("init", "--strict", config(tmp_path, lago))
    assert refused.returncode == 2 and "rule 101 says debate_days = 14" in refused.stderr
    carry: tuple[str, ...] = ("--carry", "debate_days=101", "--carry", "voting_days=202")
    carry += ("--carry", "winning_score=203")
    two_thirds = cli("import", document, "--out", tmp_path / "x", *carry)
    assert two_thirds.returncode == 0
    refused = cli("init", "--strict", config(tmp_path, tmp_path / "x"))
    assert refused.returncode == 2 and "majority_after_rounds = 2/3" in refused.stderr
    assert "--dismiss majority_after_rounds" in refused.stderr
    settled = tmp_path / "settled"
    flags = (*carry, "--dismiss", "majority_after_rounds")
    assert cli("import", document, "--out", settled, *flags).returncode == 0
    assert cli("init", config(tmp_path, settled)).returncode == 0
    rules = {r.label: dict(r.parameters) for r in rulebook.load_folder(settled).rules}
    assert rules["101"] == {"debate_days": "14"} and rules["203"] == {"winning_score": "80"}


SEED = Path(rulebook.__file__).resolve().parent.parent / "ruleset" / "it" / "SOURCE.txt"


def test_the_seeds_values_are_carried_by_its_own_rules(tmp_path: Path) -> None:
    """The game's own Italian ruleset, imported: every value its rules state comes from the rule
    that carries that parameter in the seed, so each is carried there, with the value the
    shipped ruleset (ruleset/it) gives it, and init goes ahead, imported or named directly."""
    folder = tmp_path / "seed"
    done = cli("import", SEED, "--out", folder)
    assert done.returncode == 0, done.stderr
    assert "init refuses" not in done.stdout
    for said in (
        "rule 209 says winning_score = 100: “Il primo giocatore che raggiunge i 100 punti",
        "rule 210 says max_mutable_rules = 25: “Non ci possono essere mai più di 25 leggi",
        "rule 204 says majority_after_rounds = 2: “Un cambiamento di regolamento è adottato",
        "rule 112 says debate_days_min = 7:",
        "rule 202 says debate_days = 7:",
        "rule 203 says voting_days = 7:",
    ):
        assert said in done.stdout
        assert f"(carried by rule {said.split()[1]}, as in the seed)" in done.stdout
    shipped = {r.number: dict(r.parameters) for r in rulebook.load_folder(SEED.parent).rules}
    imported = {r.number: dict(r.parameters) for r in rulebook.load_folder(folder).rules}
    carried = {n: p for n, p in imported.items() if p}
    assert set(carried) == {112, 202, 203, 204, 209, 210}
    for number, values in carried.items():
        assert values == {k: v for k, v in shipped[number].items() if k in values}
    assert cli("init", config(tmp_path, folder, language=None)).returncode == 0
    direct = tmp_path / "direct"
    direct.mkdir()
    named = cli("init", config(direct, SEED, language=None))
    assert named.returncode == 0, named.stderr


def test_the_site_and_the_archive_keep_the_documents_order(tmp_path: Path) -> None:
    """A ruleset in topic order (101, 102, 110, 201, 150, 202), a rule amended and one enacted:
    the site's rules page and front page, the archive's index and full ruleset list the rules
    in the document's order, the amended rule in its place and the new rule last; a game started
    from the archive's rules/ mails its ruleset in that order too."""
    folder = tmp_path / "rules"
    done = cli("import", DATA / "orchard-nomic.md", "--out", folder, "--carry", "winning_score=202")
    assert done.returncode == 0, done.stderr
    game = tmp_path / "game"
    game.mkdir()
    settings_file = config(game, folder, "max_mutable_rules = 10")
    settings = load_settings(settings_file)
    script = [
        *turn(CARLA, "PROPOSE AMEND 201\nEach player may pick one apple a day.\nEND", 301, 0),
        *turn(ADA, "PROPOSE ENACT\nThe orchard is open on Sundays.\nEND", 302, 8),
    ]
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0, render=False)
        for item in script:
            at = email.utils.parsedate_to_datetime(str(item["Date"]))
            referee.receive(item.as_bytes(), at)
        referee.advance(T0 + timedelta(days=17))
    finally:
        store.close()
    read = [101, 102, 110, 301, 150, 202, 302]  # 201 amended by 301 in its place; 302 is new
    archive = tmp_path / "archive"
    written = cli("archive", "write", settings_file, archive)
    assert written.returncode == 0, written.stderr
    index = tomllib.loads((archive / "rules" / "index.toml").read_text(encoding="utf-8"))
    assert index["order"] == read and [int(n) for n in index["in_force"]] == read
    full = (archive / "ruleset-full.md").read_text(encoding="utf-8")
    assert [int(n) for n in re.findall(r"^## Rule (\d+)", full, re.M)] == read
    site = tmp_path / "site"
    built = cli("site", settings_file, "--out", site)
    assert built.returncode == 0, built.stderr
    page = (site / "rules.html").read_text(encoding="utf-8")
    assert [
        int(n) for n in re.findall(r"<h2><a href=\"rules/\d+\.html\">Rule (\d+)</a>", page)
    ] == read
    front = (site / "index.html").read_text(encoding="utf-8")
    table = front.split('<table class="rules">')[1].split("</table>")[0]
    assert [int(n) for n in re.findall(r">(\d+)</a></td>", table)] == read
    # a new game from the archive's rules/: every label and the same order
    again = tmp_path / "again"
    again.mkdir()
    second = config(again, archive / "rules")
    state, sent = replay_game(second, [message(BOB, "RULE 110", 1)], again)
    shown = {r["number"]: r.get("label", "") for r in state["rules"]}
    assert shown == {
        101: "101",
        102: "102",
        110: "110",
        301: "201",
        150: "150",
        202: "202",
        302: "",
    }
    assert ruleset_order(sent) == read


@pytest.mark.parametrize(
    ("heads", "rules", "paths"),
    [
        # parts with no text over `### 1.1 Title` rules: the lower level carries the texts
        (("## 1. The game", "### 1.1 Playing", "### 1.2 Changing", "## 2. Turns", "### 2.1 Turns"),
         ("1.1", "1.2", "2.1"), ("1.1", "1.2", "2.1")),
        # `## 101. Title` with no text of its own over `### 101.1 Title` rules
        (("## 101. Rules", "### 101.1 Binding", "### 101.2 Repealed", "## 102. Proposals",
          "### 102.1 Naming"), ("101.1", "101.2", "102.1"), ("101.1", "101.2", "102.1")),
        # rules numbered afresh under each part: told apart by their part
        (("## 1. The game", "### 1. Playing", "### 2. Changing", "## 2. Turns", "### 1. Turns"),
         ("1", "2", "1"), ("1/1", "1/2", "2/1")),
    ],
)  # fmt: skip
def test_numbered_headings_at_two_levels(
    heads: tuple[str, ...], rules: tuple[str, ...], paths: tuple[str, ...], tmp_path: Path
) -> None:
    """The level whose headings carry the rules' texts gives the rules; the other gives
    headings: each rule whole, under its heading."""
    blocks = ["# A Nomic", ""]
    for head in heads:
        blocks += [head, ""]
        if head.startswith("### "):
            blocks += [f"The text of {head[4:]}, a whole sentence that says what a rule says.", ""]
    doc = importer.read_document("\n".join(blocks))
    assert tuple(s.label for s in doc.sections) == rules
    assert tuple(s.path for s in doc.sections) == paths
    assert [h.line for h in doc.headings] == [h for h in heads if h.startswith("## ")]
    for section, head in zip(doc.sections, [h for h in heads if h.startswith("###")], strict=True):
        assert (
            section.text == f"The text of {head[4:]}, a whole sentence that says what a rule says."
        )
