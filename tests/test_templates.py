"""Every effect and refusal has a template in every language, fed every variable (107, 203, 205)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from referee.core.events import Done, Notice, NoticeKind, Outcome, Propose, Reason, Vote
from referee.core.mechanics import citations
from referee.core.model import ProposalKind
from referee.mail.render import Renderer, templates_folder
from tests.helpers import ADA, BOB, CARLA, DAY, T0, Game

LANGUAGES = ("en", "it")
CITES = citations(Game().state)  # the rules each mechanic is cited by, in the seed ruleset


def renderer(language: str) -> Renderer:
    return Renderer(language, "Europe/Rome", "Nomic <Test>", "referee@nomic.example")


def macro_names(language: str, name: str) -> set[str]:
    return renderer(language).macro_names(name)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_code_and_notice_has_a_template(language: str) -> None:
    assert {d.value for d in Done} <= macro_names(language, "outcomes")
    assert {r.value for r in Reason} <= macro_names(language, "refusals")
    folder = templates_folder() / language / "notices"
    assert {k.value for k in NoticeKind} == {
        p.name.removesuffix(".md.j2") for p in folder.glob("*.md.j2")
    }


def a_full_game_log() -> Game:
    """A game that produces most notices, to feed the templates real data."""
    from dataclasses import replace

    from referee.core import engine
    from referee.core.events import (
        Accuse,
        Agree,
        Award,
        Crown,
        Extend,
        GiveRuling,
        NameChampion,
        OpenAppeal,
        Quit,
        Revise,
    )

    game = Game()
    opening = engine.start_game(replace(game.state, phase=game.state.phase), T0)
    game.log.extend(opening.effects)
    game.do(Propose(CARLA, ProposalKind.AMEND, target=209, text="Reach <b>50</b> & win."))
    game.do(Revise(CARLA, 301, "Reach 50 to win <script>x</script>."))
    game.do(Extend(ADA, 0, 1))
    for who in (ADA, BOB):
        game.do(Vote(who, 301, True))
    game.clock(T0 + 10 * DAY)  # the debate ends with Carla's vote missing: "vote now"
    game.do(Vote(CARLA, 301, True))
    game.clock(T0 + 15 * DAY)
    game.do(Award(ADA, 3))
    game.do(OpenAppeal(ADA, "Is my award fair?"))
    game.do(NameChampion(ADA, "A1", "Bob"))
    game.do(GiveRuling(BOB, "A1", "Fair."))
    game.do(Agree(ADA, "A1", False))
    game.do(Agree(CARLA, "A1", False))
    game.do(Agree(BOB, "A1", True))
    game.do(Agree(ADA, "A1", True))
    game.do(Accuse(BOB, "Falsified 301."))
    game.do(NameChampion(ADA, "A2", "Carla"))
    game.do(GiveRuling(CARLA, "A2", "UPHELD", verdict="upheld"))
    game.do(Agree(BOB, "A2", True))
    game.do(Agree(CARLA, "A2", True))
    game.do(Crown(ADA, "Bob"))
    game.do(Quit(ADA))
    game.clock(game.now + 3 * DAY)
    return game


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_notice_of_a_played_game_renders_with_strict_variables(language: str) -> None:
    game = a_full_game_log()
    seen = set()
    r = renderer(language)
    for effect in game.log:
        if isinstance(effect, Notice):
            out = r.render(f"notices/{effect.kind.value}", effect.data)
            assert out.subject and out.text.strip()
            assert "<script>" not in out.html and "<b>50</b>" not in out.html
            seen.add(effect.kind.value)
    expected = {
        "game_started",
        "turn_started",
        "turn_reminder",
        "proposal_circulated",
        "proposal_revised",
        "debate_extended",
        "debate_ended",
        "vote_result",
        "ruleset",
        "scores",
        "award_prompt",
        "parameter_prompt",
        "appeal_opened",
        "champion_prompt",
        "champion_named",
        "ruling_published",
        "ruling_failed",
        "appeal_settled",
        "king_deposed",
        "crown_prompt",
        "king_crowned",
        "player_quit",
    }
    assert expected <= seen


SAMPLES: dict[str, dict[str, Any]] = {
    "tie": {
        "players": [{"name": "A", "score": 100}, {"name": "B", "score": 100}],
        "target": 100,
        "king": "",
    },
    "tie_prompt": {
        "players": [{"name": "A", "score": 100}, {"name": "B", "score": 100}],
        "target": 100,
    },
    "winner": {
        "winner": "Ada",
        "score": 100,
        "rule": "winning",
        "scores": [{"name": "Ada", "score": 100, "king": True, "active": True}],
        "changes": {
            "rules": [],
            "scores": [
                {
                    "player": "Ada",
                    "email": "ada@example.org",
                    "delta": 7,
                    "cause": "award",
                    "rule": 202,
                    "mechanic": "turn",
                    "proposal": 305,
                }
            ],
            "proposal": None,
        },
    },
    "majority_now": {
        "rounds": 2,
        "dissent": True,
        "decided": {"name": "301", "was": "", "state": "in_force"},
        "over": {"name": "204", "was": "", "state": "in_force"},
    },
    "vote_reminder": {"number": 301, "vote_deadline": T0, "missing": ["Bob", "Carla"]},
    "award_reminder": {"player": "Bob", "proposal": 301, "adopted": True, "low": 1, "high": 10},
    "join_prompt": {
        "number": 1,
        "name": "Eve Noether",
        "email": "eve@example.net",
        "round": 3,
        "reminder": False,
        "close": ["Eve Rossi (eve@rossi.example)"],
        "lookalike": ["Eve Noether (eve@noether.example)"],
    },
    "join_refused": {"name": "Eve Noether", "king": "Ada"},
    "address_moved": {"player": "Bob", "old": "bob@example.org", "new": "bob@new.example"},
    "debate": {
        "author": "Carla <b>",
        "author_email": CARLA,
        "proposal": 301,
        "text": "Too long.\n\n<img src=x>",
    },
    "appeal_dropped": {
        "accusation": True,
        "question": "Ada counted <b>two</b> votes for herself.",
        "asked": T0,
        "reason": {"code": "accused_not_king", "data": {"accused": "Ada"}},
    },
    "debate_digest": {
        "posts": [
            {"author": "Bob", "at": T0, "proposal": 301, "text": "No."},
            {"author": "Carla", "at": T0 + DAY, "proposal": None, "text": "Why?"},
        ]
    },
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_notices_rare_in_play_render(language: str, kind: str) -> None:
    out = renderer(language).render(f"notices/{kind}", {**SAMPLES[kind], "cites": CITES})
    assert out.subject and out.text.strip()


def outcome_samples() -> list[Outcome]:
    game = Game()
    outcomes = [
        game.do(Propose(CARLA, ProposalKind.ENACT, text="x")),
        game.do(Vote(ADA, 301, True)),
        game.do(Vote(ADA, 301, False)),
    ]
    return outcomes


DATA: dict[str, dict[str, Any]] = {
    "proposal_accepted": {"number": 301, "debate_ends": T0, "vote_deadline": T0 + 7 * DAY},
    "revision_accepted": {"number": 301, "voided": 2},
    "vote_recorded": {"number": 301, "yes": True},
    "vote_replaced": {"number": 301, "yes": False},
    "appeal_opened": {"id": "A1", "judge": "Ada"},
    "accusation_opened": {"id": "A1"},
    "champion_named": {"id": "A1", "champion": "Bob"},
    "ruling_published": {"id": "A1"},
    "agreement_recorded": {"id": "A1", "agree": True},
    "crowned": {"king": "Bob"},
    "award_recorded": {"points": 5, "player": "Bob"},
    "debate_extended": {"number": 301, "debate_ends": T0, "vote_deadline": T0 + timedelta(1)},
    "quit_recorded": {"waiting": 2},
    "appeal_waiting": {"accusation": False, "limit": 5, "position": 2, "opens": T0 + DAY},
    "parameters_confirmed": {
        "rule": 305,
        "parameters": [{"name": "winning_score", "value": "100"}],
    },
    "parameter_set": {"rule": 305, "name": "winning_score", "value": "50"},
    "winner_named": {"winner": "Bob"},
    "help": {},
    "join_asked": {"name": "Eve Noether", "king": "Ada"},
    "join_confirm_sent": {"name": "Eve Noether"},
    "admitted": {"name": "Eve Noether", "yes": True, "round": 3},
    "address_moved": {"name": "Bob", "new": "bob@new.example"},
    "address_confirm_sent": {"new": "bob@new.example"},
    "enrolled": {"name": "Eve Noether", "round": 3},
    "debate_relayed": {"proposal": 301, "relayed": 2, "digest": 1},
    "delivery_chosen": {"delivery": "digest"},
    "confirm_needed": {"meant": "VOTE 301 YES", "form": "VOTE N YES|NO"},
    "action_done": {
        "action": "pickpocket",
        "rule": "304",
        "moved": ("Ada 30 → 37 coins", "Bob 60 → 53 coins"),
        "announced": ("A theft!",),
        "questions": ("Was it fair?",),
    },
    "action_offered": {
        "action": "transfer",
        "rule": "305",
        "to": "Bob",
        "number": 2,
        "until": T0 + 7 * DAY,
    },
    "offer_accepted": {"action": "transfer", "rule": "305", "number": 2, "moved": ("x",)},
    "question_answered": {"number": 1, "yes": True, "rule": "306", "moved": ()},
    "archive_sent": {"messages": 12, "size": "38 kB", "withheld": 2, "link": 40, "head": "ab" * 32},
    "archive_linked": {
        "messages": 12,
        "withheld": 2,
        "size": "8.1 MB",
        "mailbox": "https://nomic.example/archive/ab12/mail.mbox.gz",
        "config": "https://nomic.example/archive/ab12/game.toml",
        "link": 40,
        "head": "ab" * 32,
    },
}
REASON_DATA: dict[str, Any] = {
    "winner": "Ada",
    "player": "Bob",
    "phase": "debate",
    "appeals": ["A1"],
    "king": "Ada",
    "id": "A1",
    "judge": "Bob",
    "number": 301,
    "rule": 202,
    "mechanic": "turn",
    "amendment": "305.1",
    "cap": 25,
    "count": 25,
    "status": "adopted",
    "name": "x",
    "value": "1",
    "allowed": "1..10",
    "kind": "repeal",
    "low": 1,
    "high": 10,
    "days": 0,
    "who": "Zed",
    "syntax": "VOTE N YES|NO",
    "problem": "YES/NO",
    "why": "no DKIM signature",
    "characters": ["<", "@"],
    "lookalike": ["Ada Lovelace (ada@example.org)"],
    "address": "referee@nomic.example",
    "limit": "5 MB",
    "rules": [
        {"number": 104, "label": "I", "path": "II/I"},
        {"number": 107, "label": "I", "path": "III/I"},
    ],
    "hint": "AWARD 7",
    "headers": "Subject",
    "header": "Subject",
    "length": "250,000",
    "queued": 300,
    "what": "commands",
    "where": "proposal 301",
    "other": "VOTE 301 NO",
    "email": "eve@example.net",
    "proposal": 301,
    "next": T0,
    "cut": "footer",
    "cut_line": "Sent from my iPhone",
    "size": "7.4 MB",
    "waiting": 10,
    "accused": "Ada",
    "action": "pickpocket",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_outcome_and_refusal_renders_in_a_reply(language: str) -> None:
    game = Game()
    from referee.core.events import Query, QueryKind

    queries = [
        game.do(Query(BOB, q, 202 if q in (QueryKind.RULE, QueryKind.HISTORY) else None))
        for q in QueryKind
    ]
    items = [
        {"line": q.code, "meant": "", "ok": True, "code": q.code, "data": dict(q.data)}
        for q in queries
    ]
    items += [
        {"line": code, "meant": "", "ok": True, "code": code, "data": data}
        for code, data in DATA.items()
    ]
    items += [
        {"line": r.value, "meant": "AWARD 7", "ok": False, "code": r.value, "data": REASON_DATA}
        for r in Reason
    ]
    out = renderer(language).render(
        "reply", {"items": items, "subject": "x", "name": "Bob", "cites": CITES}
    )
    assert out.subject == "x"
    assert "VOTE" in out.text or "VOTO" in out.text  # help and syntax rendered
    for r in Reason:
        assert f"> {r.value}" in out.text


def test_player_html_never_reaches_the_reader_as_markup() -> None:
    out = renderer("en").render(
        "notices/appeal_opened",
        {
            "cites": CITES,
            "appeal": {
                "id": "A1",
                "kind": "appeal",
                "appellant_name": '<img src=x onerror="y">',
                "question": "<a href='javascript:alert(1)'>click</a> **bold** [x](http://e)",
                "judge": "ada",
                "judge_name": "Ada",
                "accused": None,
                "asked": None,
            },
        },
    )
    assert "<img" not in out.html and "<a href" not in out.html
    assert "&lt;a href=" in out.html and "**bold**" in out.html  # shown, not interpreted
    assert "<img" in out.text  # the plain text keeps what was written


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_notice_template_asks_only_for_its_own_payload(language: str) -> None:
    """The contract between the engine and the mail: one typed payload per notice kind."""
    import dataclasses

    import jinja2
    from jinja2 import meta

    from referee.core.notices import PAYLOAD_OF

    assert set(PAYLOAD_OF) == set(NoticeKind)
    # What the renderer gives every template (the game's name, plural, diff_of, ...).
    shared = set(renderer(language)._plain.globals) - set(jinja2.Environment().globals)
    env = jinja2.Environment()
    for kind, payload in PAYLOAD_OF.items():
        path = templates_folder() / language / "notices" / f"{kind.value}.md.j2"
        source = path.read_text(encoding="utf-8")
        for name in re.findall(r"\|\s*(\w+)", source):  # the renderer's filters, as stand-ins
            env.filters.setdefault(name, lambda value, *args: value)
        asked = meta.find_undeclared_variables(env.parse(source))
        own = {f.name for f in dataclasses.fields(payload)}
        assert asked <= own | shared, (kind, asked - own)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", ["outcomes", "refusals"])
def test_every_outcome_and_refusal_macro_reads_only_its_own_payload(
    language: str, kind: str
) -> None:
    """Each reply line's macro `code(d)` reads only fields of the payload of that code."""
    import dataclasses

    from referee.core.outcomes import PAYLOAD_OF

    source = (templates_folder() / language / f"{kind}.md.j2").read_text(encoding="utf-8")
    macros = re.findall(r"{%-?\s*macro (\w+)\(d\)\s*-?%}(.*?){%-?\s*endmacro", source, re.S)
    assert macros
    for code, body in macros:
        payload = PAYLOAD_OF[code]
        own = {f.name for f in dataclasses.fields(payload)}
        read = set(re.findall(r"\bd\.(\w+)", body)) - {"get"}
        read |= set(re.findall(r"\bd\.get\([\"'](\w+)", body))
        assert read <= own, (code, read - own)


def test_each_outcome_renders_from_exactly_its_own_payload() -> None:
    """A reply of one line per code, each fed an instance of its own payload class."""
    import dataclasses

    from referee.core.outcomes import ACCEPTED, REFUSED, Accepted, Refused

    sample: dict[str, Any] = {
        **REASON_DATA,
        **{k: v for data in DATA.values() for k, v in data.items()},
        "asked": 202,
        "rule": 202,
        "deadline": T0,
        "round": 1,
        "adoption": "unanimity",
        "missing": ["Bob"],
        "waiting_appeals": [
            {
                "position": 1,
                "accusation": False,
                "asked": T0,
                "opens": T0 + DAY,
                "question": "May Bob vote twice?",
            }
        ],
        "appeal_waits": [
            {"id": "A1", "judge": "Ada", "missing": []},
            {"id": "A2", "judge": None, "missing": ["Bob"], "agree": 1, "disagree": 0},
        ],
        "proposal": 301,
        "rules": [],
        "scores": [],
        "parameters": [],
        "kind": "repeal",
        "least_days": 7,
        "question": 301,
    }
    for language in LANGUAGES:
        items = []
        classes: list[type[Accepted] | type[Refused]] = [*ACCEPTED, *REFUSED]
        for cls in classes:
            if cls.__name__ in ("Rule", "History", "Rules", "ParametersConfirmed"):
                continue  # their nested views come from a played game, in the test above
            values = {f.name: sample[f.name] for f in dataclasses.fields(cls)}
            payload: Accepted | Refused = cls(**values)
            items.append(
                {
                    "line": payload.code.value,
                    "meant": "",
                    "ok": isinstance(payload, Accepted),
                    "code": payload.code.value,
                    "data": payload.fields(),
                }
            )
        out = renderer(language).render(
            "reply", {"items": items, "subject": "x", "name": "Bob", "cites": CITES}
        )
        assert all(f"> {item['line']}" in out.text for item in items)
