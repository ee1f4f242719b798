"""The house's shape, measured (issue 25): sizes, layers and no circles of imports.

Outside the pure engine in `referee/core/` (and the store's migrations, which are one-off
scripts), no class is over 500 lines and no function over 80; `service.py` keeps only the
four transactions and stays under 600 lines; imports run one way (core <- mail <- store <-
desk/service <- cli) and no modules import each other in a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "referee"
LONGEST_CLASS = 500
LONGEST_FUNCTION = 80
SERVICE_LINES = 600
# What each lower layer must never import: the arrows that would run back up.
NEVER = {
    "referee.core": ("referee.",),  # anything outside core (checked against core itself below)
    "referee.mail": (
        "referee.store",
        "referee.desk",
        "referee.service",
        "referee.runner",
        "referee.cli",
        "referee.delivery",
    ),
    "referee.store": (
        "referee.mail",
        "referee.desk",
        "referee.service",
        "referee.runner",
        "referee.cli",
    ),
    "referee.desk": ("referee.service", "referee.runner", "referee.cli"),
}


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def measured(path: Path) -> bool:
    relative = path.relative_to(PACKAGE).as_posix()
    return not relative.startswith("core/") and "/migrations/" not in relative


def imported(name: str, path: Path) -> set[str]:
    """The referee modules `name` imports, wherever the import statement stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return {module for module in found if module == "referee" or module.startswith("referee.")}


def graph() -> dict[str, set[str]]:
    known = dict(modules())
    return {
        name: {module for module in imported(name, path) if module in known and module != name}
        for name, path in known.items()
    }


def test_no_class_or_function_is_too_long_outside_the_engine() -> None:
    too_long = []
    for _, path in modules():
        if not measured(path):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                limit = LONGEST_CLASS if isinstance(node, ast.ClassDef) else LONGEST_FUNCTION
                if lines > limit:
                    too_long.append(f"{path.relative_to(ROOT)}:{node.name} {lines} lines")
    assert too_long == []


def test_the_service_keeps_only_its_transactions() -> None:
    lines = (PACKAGE / "service.py").read_text(encoding="utf-8").count("\n")
    assert lines <= SERVICE_LINES


def test_imports_run_one_way() -> None:
    backwards = []
    for name, targets in graph().items():
        for layer, forbidden in NEVER.items():
            if name != layer and not name.startswith(layer + "."):
                continue
            for target in targets:
                if layer == "referee.core" and target.startswith("referee.core"):
                    continue
                if target.startswith(forbidden) or (
                    layer == "referee.core" and target == "referee"
                ):
                    backwards.append(f"{name} -> {target}")
    assert backwards == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    edges = graph()
    # A package's face (__init__) hands on its submodules' names: an import of the package
    # from inside it is not a circle of the code, so it is left out.
    for name in edges:
        edges[name] = {t for t in edges[name] if not name.startswith(t + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    assert circles == []
