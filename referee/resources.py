"""Where the built-in rulesets (rules 101-215) and the mail templates live on disk.

Installed, they are the packages `referee.ruleset` and `referee.templates`; in a source
checkout or an editable install, the top-level `ruleset/` and `templates/` folders.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def data_folder(name: str) -> Path:
    """`name` is "ruleset" or "templates"."""
    local = _SOURCE_ROOT / name
    if local.is_dir() and (_SOURCE_ROOT / "pyproject.toml").is_file():
        return local
    try:
        return Path(str(resources.files(f"referee.{name}")))
    except ModuleNotFoundError:
        return local
