"""The shape of the code, held by tests: no import cycles, recall only reads through the store."""

from __future__ import annotations

import ast
import re
from pathlib import Path

BRAIN = Path(__file__).resolve().parents[1] / "brain"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(BRAIN.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The brain modules ``path`` imports, at module level and inside functions.

    Imports under ``if TYPE_CHECKING:`` never run and are left out.
    """
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for stmt in child.orelse:
                    visit(stmt)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names if alias.name.startswith("brain"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if not target.startswith("brain"):
                    continue
                for alias in child.names:  # `from . import x` may name a submodule
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in modules else target)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(name)
    return {m for m in found if m in modules}


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in BRAIN.rglob("*.py")}
    modules = set(files)
    return {name: _imports(path, modules) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_the_import_walker_sees_function_level_imports():
    graph = import_graph()
    assert "brain.recall.opening" in graph
    assert "brain.index.indexer" in graph["brain.recall.opening"]
    assert "brain.cli" in graph["brain.__main__"]  # imported inside main()
    # and it would report a cycle
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles in brain/: " + "; ".join(" → ".join(c) for c in found)


# The store: store.py, and fts_search.py, the BM25 searches it owns one of (``IndexStore._fts``),
# which run on its connection and its readers, and history_store.py and lexical_store.py, the
# history's SQL and the lexical index's, parents of IndexStore (``HistoryStore``, ``LexicalStore``)
# on the store's own connection.
STORE = {
    BRAIN / "index" / "store.py",
    BRAIN / "index" / "fts_search.py",
    BRAIN / "index" / "history_store.py",
    BRAIN / "index" / "lexical_store.py",
}


def test_only_the_index_store_touches_its_connection():
    """Recall, evaluation, the indexer and the rest go through IndexStore's typed methods:
    the store's modules (``STORE``) are the ones that know the index schema's SQL."""
    offenders = []
    for path in BRAIN.rglob("*.py"):
        if path in STORE:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\.conn\b", line):
                offenders.append(f"{path.relative_to(BRAIN.parent)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_only_opening_imports_the_indexer_from_recall():
    graph = import_graph()
    writers = {"brain.index.indexer", "brain.index.rebuild", "brain.index.linking", "brain.index.changes"}
    users = sorted(m for m in graph if m.startswith("brain.recall") and graph[m] & writers)
    assert users == ["brain.recall.opening"], users


def test_the_past_answers_every_store_read_recall_makes():
    """`brain ask --as-of` runs the same lanes over ``PastIndex``: a store method a lane calls
    that the slice does not answer would read the present into a past answer. A new lane
    that reads the store needs its method answered in recall/past.py (or listed here as
    independent of time)."""
    from brain.recall.past import PastIndex

    # ``_unchanged_cache``: each store's own, a slice's too (``IndexStore._share`` gives it an
    # empty one), filled only from that store's reads: the past's links for a past slice.
    # ``link_fences``: a meta value (the link setting the index reads with), as ``get_meta``'s.
    timeless = {"close", "directory", "get_meta", "link_fences", "readonly", "skipped", "_unchanged_cache"}
    used: set[str] = set()
    for path in (BRAIN / "recall").glob("*.py"):
        if path.name in ("past.py", "opening.py", "timeline.py"):  # the slice; the real store, before or beside it
            continue
        if path.name == "carry.py":  # between two snapshots of the present (open_snapshot), never a slice
            continue
        used |= set(re.findall(r"\bstore\.([a-z_]+)", path.read_text(encoding="utf-8")))
    missing = sorted(name for name in used - timeless if name not in vars(PastIndex))
    assert not missing, f"recall reads these store methods that PastIndex does not answer for the past: {missing}"


def _architecture_map() -> set[str]:
    """What the README's module map names in backticks: paths, file names, stems."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## Architecture") : readme.index("Rules the tests hold")]
    names: set[str] = set()
    for quoted in re.findall(r"`([^`]+)`", section):
        names.update(part for part in re.split(r"[\s,()]+", quoted) if part)
    return names


def test_the_readme_map_names_every_module_and_only_modules_that_exist():
    # The map had fallen behind: nine modules (moments.py, server/runtime.py, mcp/stdio.py, ...)
    # were named nowhere in it, and the packages described in prose named no file a reader
    # could open.
    root = Path(__file__).resolve().parent.parent
    named = _architecture_map()
    modules = [p for p in sorted((root / "brain").rglob("*.py")) if p.stem not in {"__init__", "__main__"}]
    unnamed = [
        str(p.relative_to(root))
        for p in modules
        if not {str(p.relative_to(root)), p.name, p.stem, str(p.relative_to(root).with_suffix(""))} & named
    ]
    assert unnamed == [], f"modules the README's Architecture map does not name: {unnamed}"
    files = {p.name for p in modules} | {str(p.relative_to(root)) for p in modules}
    missing = sorted(n for n in named if n.endswith(".py") and n not in files)
    assert missing == [], f"the map names files that do not exist: {missing}"


def test_the_readme_shows_no_path_of_the_checkout_it_was_written_in():
    # Output pasted from a developer's worktree showed `/work/wt/i11-serve/.venv/bin/brain` as
    # the command install writes: a user's is wherever pip put brain.
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    leaked = sorted({m for m in re.findall(r"/work/[\w./-]+", readme)})
    assert leaked == [], f"the README shows paths of a developer's checkout: {leaked}"
