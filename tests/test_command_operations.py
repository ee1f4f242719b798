"""The commands' decisions as library calls: `import` and `replay` return a report a program
can read, and refuse what the command refuses, with the same one line (101, 102, 213)."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee import rulebook
from referee.operations.importing import ImportChoices, ImportRefused, import_rules
from referee.operations.replaying import ReplayRefused, read_record
from tests.test_cli import cli

DATA = Path(__file__).resolve().parent / "data"
DOCUMENT = DATA / "chess-statutes.md"


def test_import_rules_reports_what_the_command_prints(tmp_path: Path) -> None:
    report = import_rules(DOCUMENT, tmp_path / "lib", ImportChoices())
    loaded = rulebook.load_folder(tmp_path / "lib", settled=False)
    assert report.rules == len(loaded.rules) > 0
    assert report.mutable == sum(1 for r in loaded.rules if r.mutable)
    shown = cli("import", DOCUMENT, "--out", tmp_path / "cli")
    assert shown.returncode == 0
    printed = "\n".join(report.lines()).replace(str(tmp_path / "lib"), str(tmp_path / "cli"))
    assert shown.stdout == printed + "\n"


@pytest.mark.parametrize(
    ("choices", "refusal"),
    [
        (ImportChoices(carry=("winning_score",)), "--carry 'winning_score': write NAME=RULE"),
        (ImportChoices(dismiss=("gold",)), "--dismiss 'gold': not a parameter"),
        (ImportChoices(immutable_under=("Nowhere",)), "--immutable-under 'Nowhere': no heading"),
    ],
)
def test_import_rules_refuses_a_choice_that_names_nothing(
    tmp_path: Path, choices: ImportChoices, refusal: str
) -> None:
    with pytest.raises(ImportRefused, match=refusal):
        import_rules(DOCUMENT, tmp_path / "lib", choices)
    assert not (tmp_path / "lib").exists()


def test_read_record_never_overwrites_a_file_that_is_not_an_mbox(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    record = tmp_path / "record.mbox"
    record.write_bytes(b"From a@example.org Mon Jan  1 12:00:00 2024\nSubject: hi\n\nhello\n")
    with pytest.raises(ReplayRefused, match="exists and is not an mbox"):
        read_record(record, notes, strict=False)
    assert notes.read_text(encoding="utf-8") == "my notes\n"
    assert len(read_record(record, tmp_path / "out.mbox", strict=False)) == 1
