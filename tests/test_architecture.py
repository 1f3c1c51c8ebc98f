"""The layout stays one-directional: no import cycles in rag/ or bench/, stages import downward only."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lower stages never import higher ones (see docs/architecture.md).
LAYERS = [
    {"rag.errors", "rag.text", "rag.markers", "rag.types", "rag.config", "rag.offline_env"},
    {"rag.clean", "rag.labels", "rag.corpus"},
    {"rag.index"},
    {"rag.llm"},
    {"rag.answering"},
    {"rag.api", "rag"},
    {"rag.rewrite", "rag.history", "rag.render", "rag.readable", "rag.console", "rag.progress", "rag.chat",
     "rag.doctor", "rag.evals", "rag.eval_cli", "rag.cli"},
]


def _module_name(path: Path, base: Path, package: str) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts]) if package else ".".join(parts)


def _graph(base: Path, package: str) -> dict[str, set[str]]:
    """Module -> modules of the same tree it imports anywhere (top level or inside functions)."""
    files = {_module_name(p, base, package): p for p in base.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from rag.index import lexical` imports the submodule rag.index.lexical.
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                           for a in node.names]
            for t in targets:
                if t in files and t != name:
                    graph[name].add(t)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_no_import_cycles_in_rag():
    assert _cycle(_graph(ROOT / "rag", "rag")) is None, " -> ".join(_cycle(_graph(ROOT / "rag", "rag")))


def test_no_import_cycles_in_bench():
    graph = _graph(ROOT / "bench", "")
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def _layer(module: str) -> int:
    for i, layer in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in layer if p != "rag") or module in layer:
            return i
    raise AssertionError(f"{module} is in no layer of LAYERS: add it (and to docs/architecture.md)")


def test_stages_import_only_downward():
    graph = _graph(ROOT / "rag", "rag")
    upward = [f"{a} -> {b}" for a, deps in graph.items() for b in deps if _layer(b) > _layer(a)]
    assert upward == []


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
