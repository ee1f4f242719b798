"""The service's log: text lines or JSON lines, at the level `[log]` sets (205).

Libraries speak only at WARNING and above (alembic's migration notes, the mail clients'
chatter), so an INFO log is the referee's own lines: one per mail, decision and deadline.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `--help` and `--version` quiet the libraries without loading the config
    from referee.config import LogConfig

TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LIBRARIES = ("apscheduler", "alembic", "aioimaplib", "aiosmtplib", "mail.log", "sqlalchemy")


class JsonLines(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, and any error."""

    def format(self, record: logging.LogRecord) -> str:
        item = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            item["error"] = self.formatException(record.exc_info)
        return json.dumps(item, ensure_ascii=False)


def quiet_libraries() -> None:
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(logging.WARNING)


def configure(config: LogConfig, verbose: bool = False, once: bool = False) -> None:
    """Apply `[log]`: its level (`-v`: at least INFO; `--once` without it: at least WARNING,
    so cron mails only trouble) and its line format."""
    level = getattr(logging, config.level.upper())
    if verbose:
        level = min(level, logging.INFO)
    elif once:
        level = max(level, logging.WARNING)
    root = logging.getLogger()
    root.setLevel(level)
    formatter = JsonLines() if config.format == "json" else logging.Formatter(TEXT)
    for handler in root.handlers:
        handler.setFormatter(formatter)
    quiet_libraries()
