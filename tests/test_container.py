"""The container, read as its builder and runner read it (issue 29, item 6), with no daemon.

The faults found by reading: no ignore file, so `COPY . /src` baked `.git`, local databases and
keys into a layer; /config read-only while the sent Maildir, the DKIM key and the OAuth token
defaulted to beside the config; the LMTP listener on the container's own loopback, and no port
published. Here the ignore files are applied to a checkout with a local game in it, and the
container's config is loaded as the image loads it (NOMIC_REFEREE_DATA from the Containerfile).
tests/test_deploy.py builds the image where a daemon runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from referee.config import load_settings

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
IGNORE_FILES = (ROOT / ".dockerignore", ROOT / ".containerignore")


def _pattern(line: str) -> re.Pattern[str]:
    """One ignore line as Docker reads it (Go's filepath.Match from the context's root, and
    `**` for any number of folders)."""
    parts = []
    for piece in re.split(r"(\*\*/|\*\*|\*|\?|\[[^]]*\])", line.strip("/")):
        if piece == "**/":
            parts.append("(?:.*/)?")
        elif piece == "**":
            parts.append(".*")
        elif piece == "*":
            parts.append("[^/]*")
        elif piece == "?":
            parts.append("[^/]")
        elif piece.startswith("["):
            parts.append(piece)
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def ignored(path: str, lines: list[str]) -> bool:
    """Whether the build context leaves `path` out: a folder left out takes what is in it,
    and the last matching line wins (`!` lets a path back in)."""
    verdict = False
    prefixes = ["/".join(path.split("/")[: n + 1]) for n in range(path.count("/") + 1)]
    for line in lines:
        keep = line.startswith("!")
        pattern = _pattern(line.removeprefix("!"))
        if any(pattern.fullmatch(prefix) for prefix in prefixes):
            verdict = not keep
    return verdict


def ignore_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


@pytest.mark.parametrize("ignore_file", IGNORE_FILES, ids=lambda p: p.name)
def test_the_build_context_leaves_out_history_local_games_and_secrets(ignore_file: Path) -> None:
    lines = ignore_lines(ignore_file)
    assert lines == ignore_lines(IGNORE_FILES[0])  # Docker's and Podman's say the same
    for secret in (
        ".git/config",
        ".venv/bin/python",
        "nomic.db",
        "game/nomic.db-wal",
        "deploy/game/game.toml",
        "nomic-demo/sent/new/1.mail",
        "srv/maildir/new/1.mail",
        "keys/dkim.pem",
        "game/oauth-token.json",
        "deploy/nomic-referee.env",
        "backups/2026-12-01.db",
        "referee/__pycache__/cli.cpython-311.pyc",
    ):
        assert ignored(secret, lines), secret
    for needed in (  # what `pip install /src` builds the package from
        "pyproject.toml",
        "README.md",
        "MANIFEST.in",
        "referee/cli.py",
        "referee/mail/maildir.py",
        "referee/mail/sentbox.py",
        "ruleset/en/101.md",
        "templates/en/notices/welcome.md.j2",
        "referee/archive/site_templates/base.html.j2",
    ):
        assert not ignored(needed, lines), needed
        assert (ROOT / needed).exists(), needed


def test_the_image_writes_only_to_data_and_listens_where_the_mta_reaches_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    containerfile = (DEPLOY / "Containerfile").read_text(encoding="utf-8")
    env = re.search(r"^ENV (.*)$", containerfile, re.MULTILINE)
    assert env is not None
    variables = dict(pair.split("=", 1) for pair in env.group(1).split())
    assert variables["NOMIC_REFEREE_DATA"] == "/data"
    assert 'VOLUME ["/config", "/data"]' in containerfile and "USER nomic" in containerfile
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NOMIC_DATABASE_PASSWORD", "from-the-env-file")
    # the config as the container reads it: /config/game.toml (relative paths are resolved,
    # never opened, by loading it)
    settings = load_settings(DEPLOY / "container.toml", secrets=False)
    written = [settings.maildir, settings.sent]
    written += [settings.dkim.key_file] if settings.dkim else []
    written += [settings.oauth2.token_file] if settings.oauth2 else []
    assert settings.dkim is not None
    assert all(path.is_relative_to("/data") for path in written), written
    assert "from-the-env-file" in settings.database_url
    assert settings.lmtp is not None and settings.lmtp.address == "0.0.0.0"
    expose = re.search(r"^EXPOSE (\d+)$", containerfile, re.MULTILINE)
    assert expose is not None and int(expose.group(1)) == settings.lmtp.port
    compose = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    referee = compose[compose.index("  referee:") :]
    published = re.findall(r'^\s+- "([\d.]+):(\d+):(\d+)"$', referee, re.MULTILINE)
    assert ("127.0.0.1", str(settings.lmtp.port), str(settings.lmtp.port)) in published
    assert "./game:/config:ro" in referee and "data:/data" in referee
    assert "POSTGRES_PASSWORD:" not in compose  # the password is the env file's, not here
