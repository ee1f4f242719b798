"""Where the built-in rulesets (rules 101-215) and the mail templates live on disk.

Installed (a wheel or an sdist), they are the packages `referee.ruleset` and
`referee.templates`, found with `importlib.resources`; in a source checkout run with
PYTHONPATH, the top-level `ruleset/` and `templates/` folders. A package that is not plain
files on disk (a zip import) is unpacked once with `as_file` for the life of the process.
"""

from __future__ import annotations

import atexit
import contextlib
from functools import cache
from importlib import resources
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parent.parent
_UNPACKED = contextlib.ExitStack()
atexit.register(_UNPACKED.close)


class ResourceError(FileNotFoundError):
    """The package's data is missing: a broken install."""


@cache
def data_folder(name: str) -> Path:
    """The folder of `name` ("ruleset" or "templates") as a real path on disk."""
    local = _SOURCE_ROOT / name
    if local.is_dir() and (_SOURCE_ROOT / "pyproject.toml").is_file():
        return local  # a source checkout: edits show at once
    try:
        found = resources.files(f"referee.{name}")
    except ModuleNotFoundError as exc:
        raise ResourceError(
            f"the package data 'referee.{name}' is missing: reinstall nomic-referee"
        ) from exc
    if isinstance(found, Path):
        return found
    return Path(_UNPACKED.enter_context(resources.as_file(found)))
