"""The game's static website, built from the record (rules 109, 203, 205, 212, 213).

Pages: the ruleset in force and the scores (index), every rule with its history and a
word-level diff between any two of its versions (picked in the page by a few lines of script;
consecutive versions are also diffed on the server), every proposal with its text, diff and
vote table, appeals and rulings, the score chart (SVG drawn by pygal), an Atom feed (feedgen)
and a search over rule texts from a prebuilt index loaded as a script, so everything works from
`file://` as well as from any static host. The words follow the game's language (it/en).

Every text a player wrote goes through Markdown and then nh3, which keeps formatting and drops
anything active (`<script>`, `onerror=`, `javascript:` links, a `mailto:` link that fills in a
mail). A page is rendered only when what
it shows changed since the last build (a manifest keeps a key per page) and written only when
its bytes differ, so an update after one more proposal touches a handful of files.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import nh3
import pygal
from feedgen.feed import FeedGenerator
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from referee.archive.history import (
    KIND_WORDS,
    AppealRecord,
    History,
    ProposalRecord,
    RuleRecord,
    RuleVersion,
    shorten,
)
from referee.archive.progress import progress_bar
from referee.archive.writer import write_files
from referee.core import view

TEMPLATES = Path(__file__).resolve().parent / "site_templates"
SITE_VERSION = "2"  # bump when a template changes, so every page is rendered again
MANIFEST = ".manifest.json"
CHART_POINTS = 2000  # at most this many points in the score chart

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "ruleset": "Ruleset",
        "rules": "Rules",
        "rule": "Rule",
        "proposals": "Proposals",
        "proposal": "Proposal",
        "appeals": "Appeals",
        "appeal": "Appeal",
        "accusation": "Accusation",
        "scores": "Scores",
        "search": "Search",
        "search_hint": "a word of a rule's text",
        "no_results": "No rule contains all these words.",
        "player": "Player",
        "points": "Points",
        "in_force": "in force",
        "repealed": "Repealed",
        "mutable": "mutable",
        "immutable": "immutable",
        "history": "History",
        "text": "Text",
        "compare": "Compare versions",
        "from": "from",
        "to": "to",
        "version": "version",
        "formerly": "Formerly",
        "parameters": "Parameters",
        "cited": "Cited by rulings",
        "kind": "Kind",
        "target": "Rule",
        "status": "Result",
        "votes": "Votes",
        "vote": "Vote",
        "yes": "yes",
        "no": "no",
        "date": "Date",
        "by": "by",
        "submitted": "Submitted",
        "decided": "Decided",
        "changes": "Changes",
        "diff": "Change to the rule",
        "talk": "Debate",
        "awarded": "Points awarded",
        "bonus": "Bonuses",
        "question": "Question",
        "ruling": "Ruling",
        "judge": "Judge",
        "agree": "agree",
        "disagree": "disagree",
        "open": "open",
        "settled": "settled",
        "adopted": "adopted",
        "rejected": "failed",
        "debate": "in debate",
        "voting": "voting",
        "chart": "Scores over time",
        "cause": "Cause",
        "recent": "Recent changes",
        "feed": "Atom feed",
        "mail": "Message-ID",
        "none": "None yet.",
        "enact": "new rule",
        "repeal": "repeal of rule",
        "amend": "amendment of rule",
        "transmute": "transmutation of rule",
        "enact-amendment": "new amendment to rule",
        "amend-amendment": "change to an amendment of rule",
        "repeal-amendment": "repeal of an amendment of rule",
        "award": "award",
        "dissent-bonus": "dissent bonus",
        "start": "start",
        "ruling_cause": "ruling",
        "revisions": "Earlier texts",
        "rules_count": "rules in force",
        "highest": "Highest proposal",
        "withdrawn": "withdrawn",
        "formerly_short": "formerly",
        "standing": "Where the game stands",
        "over": "The game is over.",
        "won": "{name} won with {points} points.",
        "no_winner": "No player remains.",
        "tie": "Tied over the winning score: {names}. The King names the winner.",
        "turn": "Turn",
        "round": "round",
        "phase": "Phase",
        "phase_propose": "{player} writes a proposal",
        "phase_debate": "debate on proposal {n}",
        "phase_voting": "vote on proposal {n}",
        "phase_award": "the King awards {player}",
        "phase_appeal": "waiting for appeal {appeals} to be settled",
        "deadline": "Next deadline",
        "deadline_debate": "the debate ends",
        "deadline_voting": "the vote closes at the latest",
        "king": "King",
        "nobody": "nobody",
        "updated": "Last change",
        "record": "Record",
        "record_link": "link {link}, head",
        "record_help": "Every mail of the game names this head in X-Nomic-Chain; "
        "nomic-referee verify recomputes it from the mail.",
    },
    "it": {
        "ruleset": "Regolamento",
        "rules": "Regole",
        "rule": "Regola",
        "proposals": "Proposte",
        "proposal": "Proposta",
        "appeals": "Appelli",
        "appeal": "Appello",
        "accusation": "Accusa",
        "scores": "Punteggi",
        "search": "Cerca",
        "search_hint": "una parola del testo di una regola",
        "no_results": "Nessuna regola contiene tutte queste parole.",
        "player": "Giocatore",
        "points": "Punti",
        "in_force": "in vigore",
        "repealed": "Abrogate",
        "mutable": "mutabile",
        "immutable": "immutabile",
        "history": "Storia",
        "text": "Testo",
        "compare": "Confronta le versioni",
        "from": "da",
        "to": "a",
        "version": "versione",
        "formerly": "Già",
        "parameters": "Parametri",
        "cited": "Citata nelle sentenze",
        "kind": "Tipo",
        "target": "Regola",
        "status": "Esito",
        "votes": "Voti",
        "vote": "Voto",
        "yes": "sì",
        "no": "no",
        "date": "Data",
        "by": "di",
        "submitted": "Presentata",
        "decided": "Decisa",
        "changes": "Modifiche",
        "diff": "Modifica alla regola",
        "talk": "Dibattito",
        "awarded": "Punti assegnati",
        "bonus": "Bonus",
        "question": "Domanda",
        "ruling": "Sentenza",
        "judge": "Giudice",
        "agree": "d'accordo",
        "disagree": "in disaccordo",
        "open": "aperto",
        "settled": "risolto",
        "adopted": "approvata",
        "rejected": "respinta",
        "debate": "in discussione",
        "voting": "in votazione",
        "chart": "Punteggi nel tempo",
        "cause": "Causa",
        "recent": "Ultime modifiche",
        "feed": "Feed Atom",
        "mail": "Message-ID",
        "none": "Nessuno per ora.",
        "enact": "nuova regola",
        "repeal": "abrogazione della regola",
        "amend": "modifica della regola",
        "transmute": "trasmutazione della regola",
        "enact-amendment": "nuovo emendamento alla regola",
        "amend-amendment": "modifica di un emendamento alla regola",
        "repeal-amendment": "abrogazione di un emendamento alla regola",
        "award": "premio",
        "dissent-bonus": "bonus di dissenso",
        "start": "inizio",
        "ruling_cause": "sentenza",
        "revisions": "Testi precedenti",
        "rules_count": "regole in vigore",
        "highest": "Proposta più alta",
        "withdrawn": "ritirata",
        "formerly_short": "già",
        "standing": "A che punto è la partita",
        "over": "La partita è finita.",
        "won": "Ha vinto {name} con {points} punti.",
        "no_winner": "Non resta alcun giocatore.",
        "tie": "Pari oltre il punteggio per vincere: {names}. Il Re nomina il vincitore.",
        "turn": "Turno",
        "round": "giro",
        "phase": "Fase",
        "phase_propose": "{player} scrive una proposta",
        "phase_debate": "dibattito sulla proposta {n}",
        "phase_voting": "voto sulla proposta {n}",
        "phase_award": "il Re assegna i punti a {player}",
        "phase_appeal": "in attesa che si risolva l'appello {appeals}",
        "deadline": "Prossima scadenza",
        "deadline_debate": "fine del dibattito",
        "deadline_voting": "chiusura del voto al più tardi",
        "king": "Re",
        "nobody": "nessuno",
        "updated": "Ultimo cambiamento",
        "record": "Registro",
        "record_link": "anello {link}, testa",
        "record_help": "Ogni mail della partita riporta questa testa in X-Nomic-Chain; "
        "nomic-referee verify la ricalcola dalle mail.",
    },
}


# nh3's safe tags but images: a player's image would load from anywhere (a tracking pixel)
_TAGS = set(nh3.ALLOWED_TAGS) - {"img"}
# The same Markdown library as the mail; raw HTML in a player's text stays text.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})


def _no_mail_written(tag: str, attribute: str, value: str) -> str | None:
    """A link that writes a mail for the reader (`mailto:` with `?subject=`, `?body=`,
    `?In-Reply-To=`) loses its target: clicked, it could send the game a command or answer a
    prompt in the reader's name (issue 15). A plain `mailto:` address stays a link."""
    if attribute == "href" and value.strip().lower().startswith("mailto:") and "?" in value:
        return None
    return value


@functools.lru_cache(maxsize=4096)
def sanitised(text: str) -> Markup:
    """A player's text as HTML: Markdown for its formatting, nh3 so nothing in it can run."""
    html = _MARKDOWN.render(text)
    cleaned = nh3.clean(
        html, tags=_TAGS, link_rel="nofollow noopener", attribute_filter=_no_mail_written
    )
    return Markup(cleaned)  # cleaned by nh3


_WORD = re.compile(r"(\S+)(\s*)")


def word_diff(old: str, new: str) -> Markup:
    """A word-level diff of two texts as HTML: <del> for what went, <ins> for what came.

    Words are compared without the spaces after them, so a word that only moved to the end of
    a paragraph is not shown as changed; the new text's spacing is kept.
    """
    a, b = _WORD.findall(old), _WORD.findall(new)
    out: list[str] = [str(escape(new[: len(new) - len(new.lstrip())]))]
    matcher = difflib.SequenceMatcher(None, [w for w, _ in a], [w for w, _ in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(str(escape("".join(w + space for w, space in b[j1:j2]))))
            continue
        if op in ("delete", "replace"):
            gone = "".join(w + space for w, space in a[i1:i2])
            out.append(f"<del>{escape(gone.rstrip())}</del>{' ' if op == 'delete' else ''}")
        if op in ("insert", "replace"):
            came = "".join(w + space for w, space in b[j1:j2])
            rest = came[len(came.rstrip()) :]
            sep = " " if op == "replace" else ""
            out.append(f"{sep}<ins>{escape(came.rstrip())}</ins>{escape(rest)}")
    return Markup("".join(out))  # every piece escaped above


def _json_script(data: Any) -> Markup:
    """JSON safe inside a <script> element: no '<' can close it."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)  # no markup survives


@dataclass
class SiteResult:
    pages: int
    rendered: int
    written: int
    keys: dict[str, str]


class _Site:
    def __init__(
        self,
        history: History,
        out: Path,
        remembered: dict[str, str] | None,
        timezone: str = "UTC",
    ) -> None:
        self.h = history
        self.out = out
        self.lang = "it" if history.language == "it" else "en"
        self.w = WORDS[self.lang]
        self.zone = ZoneInfo(timezone)
        self.env = Environment(
            loader=FileSystemLoader(TEMPLATES),
            autoescape=select_autoescape(["html", "j2"]),
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        self.env.filters["md"] = sanitised
        self.env.filters["day"] = self.day
        self.env.filters["when"] = self.when
        self.env.filters["shorten"] = shorten
        self.env.globals.update(
            w=self.w,
            lang=self.lang,
            game=history.name,
            kinds=KIND_WORDS[self.lang],
            rule_href=self.rule_href,
            status_now=history.status_now,
        )
        self.numbers: dict[int, int] = {}  # any number a rule has had -> its identity
        for record in history.rules.values():
            for n in record.numbers:
                self.numbers[n] = record.identity
        manifest = out / MANIFEST
        self.old_keys: dict[str, str] = dict(remembered or {})
        self.trusted = bool(remembered)  # keys kept in memory since this process wrote the pages
        if not self.trusted and manifest.is_file():
            try:
                self.old_keys = json.loads(manifest.read_text(encoding="utf-8"))
            except ValueError:
                self.old_keys = {}
        self.keys: dict[str, str] = {}
        self.files: dict[str, str] = {}
        self.rendered = 0

    def day(self, at: datetime | None) -> str:
        """The date in the game's time zone, as the mail gives it."""
        return at.astimezone(self.zone).strftime("%Y-%m-%d") if at else ""

    def when(self, at: datetime | None) -> str:
        """Date and time in the game's time zone, with the zone's name (CET, CEST...)."""
        if at is None:
            return ""
        local = at.astimezone(self.zone)
        return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"

    def standing(self) -> dict[str, Any] | None:
        """Where the game stands: over or not, the winner, the King, whose turn, the phase,
        the next deadline (201, 202, 209, 212, 215)."""
        state = self.h.state
        if state is None:
            return None
        data = view.status_data(state)
        w = self.w
        winner = state.player(state.winner) if state.winner else None
        tie = [p.name for p in state.players if p.email in state.tie]
        phase = data["phase"]
        appeals = ", ".join(data["appeals"])
        what = {
            "propose": w["phase_propose"].format(player=data["player"]),
            "debate": w["phase_debate"].format(n=data["proposal"]),
            "voting": w["phase_voting"].format(n=data["proposal"]),
            "award": w["phase_award"].format(player=data["player"]),
            "appeal": w["phase_appeal"].format(appeals=appeals),
        }.get(phase, "")
        return {
            "over": state.over,
            "result": (
                w["won"].format(name=winner.name, points=winner.score) if winner else w["no_winner"]
            ),
            "tie": w["tie"].format(names=", ".join(tie)) if tie else "",
            "king": data["king"] or w["nobody"],
            "player": data["player"],
            "round": data["round"],
            "phase": what,
            "proposal": data["proposal"],
            "deadline": data["deadline"],
            "deadline_what": w.get(f"deadline_{phase}", ""),
        }

    def rule_href(self, number: int | None, root: str = "") -> str:
        if number is None or number not in self.numbers:
            return ""
        return f"{root}rules/{self.numbers[number]}.html"

    def unchanged(self, path: str, key: str) -> bool:
        """Note the page's key; True if the page on disk was made from the same content."""
        key = f"{SITE_VERSION}:{self.lang}:{self.zone.key}:{key}"
        self.keys[path] = key
        if self.old_keys.get(path) != key:
            return False
        return self.trusted or (self.out / path).is_file()

    def page(self, path: str, template: str, key: str | None, **context: Any) -> None:
        """Render `template` to `path` unless its key says nothing it shows has changed."""
        if key is not None and self.unchanged(path, key):
            return
        root = "../" * path.count("/")
        self.files[path] = self.env.get_template(template).render(root=root, **context)
        self.rendered += 1

    # ----- the pages -----------------------------------------------------------------------

    def jobs(self) -> Iterator[tuple[str, Any]]:
        yield "index", self.index
        yield "rules", self.rules_list
        for record in self.h.rules.values():
            yield f"rule {record.identity}", lambda r=record: self.rule(r)
        yield "proposals", self.proposals_list
        for p in self.h.proposals.values():
            yield f"proposal {p.number}", lambda p=p: self.proposal(p)
        yield "appeals", self.appeals_list
        for a in self.h.appeals.values():
            yield f"appeal {a.id}", lambda a=a: self.appeal(a)
        yield "scores", self.scores
        yield "search", self.search
        yield "feed", self.feed
        yield "static", self.static

    def index(self) -> None:
        rules = self.h.rules_in_force()
        # the table's talk has its place on each proposal's page, not among the rule changes
        recent = list(reversed([c for c in self.h.changes if c.kind != "debate"][-15:]))
        highest = max(self.h.proposals) if self.h.proposals else None
        self.page(
            "index.html",
            "index.html.j2",
            None,
            rules=rules,
            standings=self.h.standings(),
            recent=recent,
            highest=highest,
            last=self.h.changes[-1] if self.h.changes else None,
            standing=self.standing(),
            chain=self.h.chain,
        )

    def rules_list(self) -> None:
        records = [r for r in self.h.rules.values()]
        gone = sorted(
            (r for r in records if not r.current.in_force), key=lambda r: r.current.number
        )
        latest = max((r.current.stamp for r in records), default=0)
        self.page(
            "rules.html",
            "rules.html.j2",
            f"rules:{latest}:{len(records)}",
            rules=self.h.rules_in_force(),
            repealed=gone,
        )

    def rule(self, record: RuleRecord) -> None:
        path = f"rules/{record.identity}.html"
        noted = record.annotations[-1].stamp if record.annotations else 0
        counts = f"{len(record.versions)}:{len(record.annotations)}"
        if self.unchanged(path, f"rule:{record.current.stamp}:{noted}:{counts}"):
            return
        versions = [v for v in record.versions if v.text]
        steps: list[dict[str, Any]] = []
        previous: RuleVersion | None = None
        for v in record.versions:
            diff = None
            if previous is not None and previous.text != v.text:
                diff = word_diff(previous.text, v.text)
            steps.append({"v": v, "diff": diff})
            previous = v
        texts: list[dict[str, str]] = []
        for index, v in enumerate(versions, start=1):
            label = f"{index}. {KIND_WORDS[self.lang].get(v.kind, v.kind)} {v.at:%Y-%m-%d}"
            if not texts or texts[-1]["text"] != v.text:
                texts.append({"label": label, "text": v.text})
        self.page(
            path,
            "rule.html.j2",
            None,
            r=record,
            now=record.current,
            steps=steps,
            versions=_json_script(texts),
            count=len(texts),
        )

    def proposals_list(self) -> None:
        """The latest hundred on proposals.html, and a page per hundred numbers for the rest."""
        ordered = sorted(self.h.proposals.values(), key=lambda p: -p.number)
        hundreds: dict[int, list[ProposalRecord]] = {}
        for p in ordered:
            hundreds.setdefault(p.number // 100, []).append(p)
        ranges = [
            {
                "first": k * 100,
                "last": k * 100 + 99,
                "count": len(v),
                "href": f"proposals/{k}xx.html",
            }
            for k, v in sorted(hundreds.items(), reverse=True)
        ]
        self.page(
            "proposals.html",
            "proposals.html.j2",
            None,
            proposals=ordered[:100],
            ranges=ranges if len(ordered) > 100 else [],
        )
        if len(ordered) <= 100:
            return
        for k, rows in hundreds.items():
            keys = "".join(_proposal_key(p) + self.h.status_now(p.number) for p in rows)
            digest = hashlib.sha1(keys.encode()).hexdigest()
            self.page(
                f"proposals/{k}xx.html",
                "proposals.html.j2",
                f"hundred:{len(rows)}:{digest}",
                proposals=rows,
                ranges=ranges,
            )

    def proposal(self, p: ProposalRecord) -> None:
        path = f"proposals/{p.number}.html"
        if self.unchanged(path, f"{_proposal_key(p)}:{self.h.status_now(p.number)}"):
            return
        diff = word_diff(p.old_text, p.text) if p.old_text and p.text else None
        self.page(
            path,
            "proposal.html.j2",
            None,
            p=p,
            diff=diff,
        )

    def appeals_list(self) -> None:
        ordered = sorted(self.h.appeals.values(), key=lambda a: a.opened_at, reverse=True)
        self.page("appeals.html", "appeals.html.j2", None, appeals=ordered)

    def appeal(self, a: AppealRecord) -> None:
        # a piece recorded between changes carries the next change's number: count them too
        state = (a.stamp, a.settled_stamp, a.status, len(a.rulings), len(a.agreements), a.judge)
        self.page(
            f"appeals/{a.id}.html",
            "appeal.html.j2",
            "appeal:" + ":".join(map(str, state)),
            a=a,
        )

    def scores(self) -> None:
        self.files["scores.svg"] = score_chart(self.h, self.w["chart"])
        changes = list(reversed(self.h.scores))[:500]
        self.page(
            "scores.html",
            "scores.html.j2",
            None,
            standings=self.h.standings(),
            changes=changes,
        )

    def search(self) -> None:
        index = []
        for record in sorted(self.h.rules.values(), key=lambda r: r.current.number):
            now = record.current
            text = (
                now.text
                if now.in_force
                else (record.versions[-2].text if len(record.versions) > 1 else now.text)
            )
            index.append(
                {
                    "n": now.number,
                    "i": record.identity,
                    "t": now.title,
                    "f": now.in_force,
                    "x": " ".join(text.split()),
                }
            )
        self.files["search-index.js"] = f"window.NOMIC_INDEX = {_json_script(index)};\n"
        self.page("search.html", "search.html.j2", None)

    def feed(self) -> None:
        self.files["feed.xml"] = atom_feed(self.h, self.lang)

    def static(self) -> None:
        for name in ("style.css", "site.js"):
            self.files[name] = (TEMPLATES / name).read_text(encoding="utf-8")


def _proposal_key(p: ProposalRecord) -> str:
    """What a proposal's page shows, in numbers: a vote or a result changes it.

    A vote recorded between changes carries the number of the change to come, so the counts
    and the status are part of the key, not only the change numbers."""
    parts = (p.stamp, p.decided_stamp, p.status, len(p.ballots), len(p.texts))
    more = (len(p.awarded), len(p.bonuses), len(p.debate))
    return "proposal:" + ":".join(map(str, (*parts, *more)))


def score_chart(history: History, title: str) -> str:
    """The scores over time as SVG, drawn with pygal; stable bytes for the same history."""
    chart = pygal.DateTimeLine(
        title=title,
        js=[],
        disable_xml_declaration=True,
        width=900,
        height=420,
        show_dots=len(history.scores) < 400,
        x_label_rotation=25,
        truncate_legend=-1,
        x_value_formatter=lambda at: at.strftime("%Y-%m-%d"),
        style=pygal.style.CleanStyle,
        legend_at_bottom=True,
    )
    series: dict[str, list[tuple[datetime, int]]] = {name: [] for name in history.players.values()}
    for change in history.scores:
        points = series.setdefault(change.player, [])
        if points:  # a score is a step: it holds until the moment it changes
            points.append((change.at, points[-1][1]))
        points.append((change.at, change.score))
    end = max((c.at for c in history.changes), default=history.started_at)
    total = sum(len(points) for points in series.values())
    for name, points in series.items():
        if total > CHART_POINTS:  # a long game: every n-th point keeps the shape, not the bulk
            step = -(-total // CHART_POINTS)
            points[:] = [*points[:-1:step], points[-1]] if points else []
        if points:
            if points[-1][0] < end:
                points.append((end, points[-1][1]))
            chart.add(name, points)
    svg = str(chart.render(is_unicode=True))
    # pygal names the chart with a random uuid; a stable name keeps rebuilds identical.
    return svg.replace(chart.uuid, "score-chart")


def atom_feed(history: History, lang: str) -> str:
    """The changes as an Atom feed, newest first (a feed library, not a string template)."""
    feed = FeedGenerator()
    slug = re.sub(r"[^a-z0-9]+", "-", history.name.lower()).strip("-") or "game"
    feed.id(f"urn:nomic-referee:{slug}")
    feed.title(history.name)
    feed.language(lang)
    feed.link(href="index.html", rel="alternate")
    feed.link(href="feed.xml", rel="self")
    last = history.changes[-1].at if history.changes else history.started_at
    feed.updated(last)
    feed.author({"name": f"{history.name} referee"})
    for change in history.changes[-50:]:
        entry = feed.add_entry(order="prepend")
        entry.id(f"urn:nomic-referee:{slug}:change:{change.ordinal}")
        entry.title(change.summary)
        entry.updated(change.at)
        entry.published(change.at)
        if change.author:
            entry.author({"name": change.author})
        if change.proposal is not None:
            entry.link(href=f"proposals/{change.proposal}.html")
        elif change.appeal:
            entry.link(href=f"appeals/{change.appeal}.html")
        else:
            entry.link(href="index.html")
        detail = [change.summary]
        if change.message_id:
            detail.append(f"Message-ID: {change.message_id}")
        entry.content("\n".join(detail), type="text")
    data: bytes = feed.atom_str(pretty=True)
    return data.decode("utf-8")


def build_site(
    history: History,
    out: Path,
    progress: bool = False,
    remembered: dict[str, str] | None = None,
    timezone: str = "UTC",
) -> SiteResult:
    """Write the site into `out`; only pages whose content changed are rewritten.

    `remembered` holds the page keys of this process's last build of `out` (`SiteResult.keys`),
    so a long-running `run` need not read the manifest and look at every page again. Times are
    shown in `timezone`, the game's, as in its mail."""
    site = _Site(history, out, remembered, timezone)
    jobs = list(site.jobs())
    with progress_bar("site", len(jobs), progress) as step:
        for _, job in jobs:
            job()
            step()
    written = write_files(out, site.files)
    manifest = json.dumps(site.keys, sort_keys=True, indent=0)
    write_files(out, {MANIFEST: manifest})
    pages = len(site.files) + sum(1 for p in site.keys if p not in site.files)
    return SiteResult(pages, site.rendered, len(written), site.keys)
