"""The library's shape: no import cycles among its modules, and no module reaching into another's privates.

Both rules are read from the source with :mod:`ast`, so deferred imports (inside functions) and
``TYPE_CHECKING`` imports count: a cycle hidden in a function body is still a cycle in the design.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workbench"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module that ``name`` (a module or a module's attribute) lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> Iterator[tuple[str, str]]:
    """(target module, imported name) for every workbench import in ``module``, anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("workbench") and (target := _owner(alias.name)):
                    yield target, ""
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if not base.startswith("workbench"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in MODULES else _owner(base)
                if target:
                    yield target, alias.name


def _graph() -> dict[str, set[str]]:
    return {m: {t for t, _ in _imports(m, p) if t != m} for m, p in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_among_workbench_modules() -> None:
    assert _cycles(_graph()) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def test_no_module_imports_another_modules_private_names() -> None:
    leaks = [f"{m} imports {name} from {t}" for m, p in MODULES.items() for t, name in _imports(m, p)
             if t != m and _private(name)]
    leaks += [f"{m} imports the private module {t}" for m, p in MODULES.items() for t, _ in _imports(m, p)
              if any(_private(part) for part in t.split("."))]
    assert leaks == []


def _defined_private_names(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, attributes it assigns, fields it declares."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # __slots__ entries and setattr(self, "_x", ...)
    return {n for n in names if _private(n)}


def test_no_module_reads_private_members_of_another_modules_objects() -> None:
    """``obj._x`` is allowed only where ``_x`` is the accessing module's own private name."""
    leaks = []
    for path in MODULES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _defined_private_names(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                leaks.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert leaks == []
