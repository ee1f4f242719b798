"""Prometheus metrics of `run`, on an optional port (`[metrics] port`) (205, 212).

Counters are counted as things happen: mails in by what became of them, commands by outcome
(obeyed or refused), mails sent, deferred and undeliverable, IMAP reconnections. The rest is
read from the store at each scrape: outbox depth and the age of its oldest waiting mail,
mails in quarantine, and the deadline lag (how long a due deadline has waited to be fired).
Every series carries the game's id as `game`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CollectorRegistry, Counter, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from referee.service import Receipt

log = logging.getLogger("referee.metrics")

REGISTRY = CollectorRegistry()
MAILS_IN = Counter(
    "nomic_mails_in", "Inbound mails, by what became of them", ["game", "status"], registry=REGISTRY
)
COMMANDS = Counter(
    "nomic_commands", "Commands read from mail, by outcome", ["game", "outcome"], registry=REGISTRY
)
MAILS_OUT = Counter(
    "nomic_mails_out", "Outgoing mail attempts, by result", ["game", "result"], registry=REGISTRY
)
RECONNECTS = Counter(
    "nomic_imap_reconnects", "IMAP connections lost and made again", ["game"], registry=REGISTRY
)


def mail_in(game: str, receipt: Receipt) -> None:
    MAILS_IN.labels(game, str(receipt.status)).inc()
    if receipt.commands:
        COMMANDS.labels(game, "obeyed").inc(max(0, receipt.commands - receipt.refused))
    if receipt.refused:
        COMMANDS.labels(game, "refused").inc(receipt.refused)


def quarantined(game: str) -> None:
    """A mail set aside in quarantine (unreadable, or its processing failed)."""
    MAILS_IN.labels(game, "quarantined").inc()


def mails_out(game: str, sent: int, deferred: int, undeliverable: int) -> None:
    for result, number in (
        ("sent", sent),
        ("deferred", deferred),
        ("undeliverable", undeliverable),
    ):
        if number:
            MAILS_OUT.labels(game, result).inc(number)


def reconnected(game: str) -> None:
    RECONNECTS.labels(game).inc()


@dataclass(frozen=True)
class Gauges:
    """One game's figures at a scrape: the outbox's depth and the age of its oldest waiting
    mail, the mails in quarantine, and how long a due deadline has waited."""

    game: str
    depth: int
    oldest_seconds: float
    quarantined: int
    lag_seconds: float


class GaugeSource(Protocol):
    """A game served by this process, as a scrape reads it (the runner's `Service`)."""

    def gauges(self, now: datetime) -> Gauges: ...


class StoreGauges(Collector):
    """The gauges read from the store at each scrape, for the games this process serves."""

    def __init__(self, sources: Sequence[GaugeSource]) -> None:
        self.sources = list(sources)

    def collect(self) -> Iterator[Any]:
        now = datetime.now(UTC)
        depth = GaugeMetricFamily("nomic_outbox_depth", "Mails waiting to be sent", labels=["game"])
        oldest = GaugeMetricFamily(
            "nomic_outbox_oldest_seconds", "Age of the oldest waiting mail", labels=["game"]
        )
        quarantine = GaugeMetricFamily(
            "nomic_quarantined_mails", "Inbound mails set aside", labels=["game"]
        )
        lag = GaugeMetricFamily(
            "nomic_deadline_lag_seconds", "How long a due deadline has waited", labels=["game"]
        )
        for source in self.sources:
            try:
                gauges = source.gauges(now)
            except Exception:  # a scrape must never take the service down
                log.debug("metrics: cannot read the store", exc_info=True)
                continue
            depth.add_metric([gauges.game], gauges.depth)
            oldest.add_metric([gauges.game], gauges.oldest_seconds)
            quarantine.add_metric([gauges.game], gauges.quarantined)
            lag.add_metric([gauges.game], gauges.lag_seconds)
        yield from (depth, oldest, quarantine, lag)


def serve(port: int, address: str, sources: Sequence[GaugeSource]) -> None:
    """Expose the metrics on http://address:port/metrics (a thread of this process)."""
    REGISTRY.register(StoreGauges(sources))
    start_http_server(port, addr=address, registry=REGISTRY)
    log.info("metrics on http://%s:%d/metrics", address, port)
