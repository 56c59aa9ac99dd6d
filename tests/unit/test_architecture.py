"""The library's shape: its layers, no import cycles, and no module reaching into another's privates.

Every rule is read from the source with :mod:`ast`, so deferred imports (inside functions) and
``TYPE_CHECKING`` imports count: a cycle hidden in a function body is still a cycle in the design, and
a report that imports the simulator inside a function still simulates.
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


# --- layers -----------------------------------------------------------------------------------------

#: Units every layer may use: errors, units of measure, the defaults and the read-only map.
FOUNDATION = frozenset({"errors", "units", "defaults", "frozen"})

#: Which unit may import which (besides itself). A unit is a top-level module or package of
#: ``workbench``, except the engine's flat records (``workbench.sim.records``), a unit of their own:
#: analysis and the report read them without importing the engine that writes them. Read from the
#: bottom up: the model's definitions, the engine, the one run verb, then what calls it.
LAYERS: dict[str, frozenset[str]] = {
    "errors": frozenset(), "units": frozenset(), "defaults": frozenset(), "frozen": frozenset(), "gcpause": frozenset(),
    "distributions": frozenset(), "notebook": frozenset(), "sim.records": frozenset(),
    "cli_errors": frozenset({"errors"}),
    "io": FOUNDATION,
    "pinot": FOUNDATION | {"gcpause", "io"},
    "jvm": FOUNDATION | {"pinot"},
    "workload": FOUNDATION | {"distributions", "io", "jvm", "pinot"},
    "scenario": FOUNDATION | {"distributions", "io", "pinot", "workload"},
    # the engine: it reaches no higher than the scenario it runs
    "sim": FOUNDATION | {"distributions", "gcpause", "io", "jvm", "pinot", "scenario", "workload", "sim.records"},
    # pure functions over tables: records in, frames and figures out; never the engine
    "analysis": FOUNDATION | {"io", "jvm", "pinot", "scenario", "sim.records"},
    # reads files: never the engine, the run verb, the studies or anything that calls them
    "report": FOUNDATION | {"analysis", "io", "pinot", "scenario", "workload", "sim.records"},
    # fits the model to a cluster's files: plans queries with the model's planner (sim), never runs it
    "calibrate": FOUNDATION | {"analysis", "io", "pinot", "scenario", "sim", "workload", "sim.records"},
    "groundtruth": FOUNDATION | {"io", "pinot", "scenario", "sim", "workload", "sim.records"},
    # the one run verb: simulate, summarise, write
    "runs": FOUNDATION | {"analysis", "io", "scenario", "sim", "sim.records"},
    # questions answered by runs, every run through the verb
    "studies": FOUNDATION | {"analysis", "calibrate", "io", "pinot", "report", "runs", "scenario", "sim", "workload",
                             "sim.records"},
    "api": FOUNDATION | {"analysis", "calibrate", "groundtruth", "io", "pinot", "report", "runs", "scenario", "sim",
                         "studies", "workload", "sim.records"},
    "sweep": FOUNDATION | {"analysis", "api", "io", "pinot", "report", "runs", "scenario", "sim", "studies",
                           "workload", "sim.records"},
    # the sizing search: shapes run as sweep points, judged by the report's rules and the studies' hooks (and,
    # for a calibrated scenario, on draws of the calibration's parameter distribution)
    "sizing": FOUNDATION | {"analysis", "api", "calibrate", "io", "pinot", "report", "runs", "scenario", "sim",
                            "studies", "sweep", "workload", "sim.records"},
    "cli": FOUNDATION | {"api", "calibrate", "cli_errors", "sim", "sizing", "sweep"},
}
#: The package itself is a lazy facade over the public names: it may name any unit.
FACADE = "workbench"


def _unit(module: str) -> str:
    if module == "workbench.sim.records":
        return "sim.records"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else FACADE


def _layer_violations(graph: dict[str, set[str]], layers: dict[str, frozenset[str]]) -> list[str]:
    """``module -> target`` for every import the layers do not allow, and every unit they do not place."""
    out = [f"{m}: unit {_unit(m)!r} has no layer" for m in graph if _unit(m) not in layers and _unit(m) != FACADE]
    for module, targets in graph.items():
        unit = _unit(module)
        if unit == FACADE or unit not in layers:
            continue
        out += [f"{module} -> {t}" for t in sorted(targets)
                if _unit(t) != unit and _unit(t) not in layers[unit]]
    return out


def test_the_layer_check_finds_an_import_against_the_layers() -> None:
    layers = {"sim": frozenset({"scenario"}), "scenario": frozenset(), "report": frozenset({"scenario"})}
    graph = {"workbench.report.x": {"workbench.sim.run", "workbench.scenario"}, "workbench.sim.run": set(),
             "workbench.scenario": set(), "workbench.sim.records": set(), "workbench.newpkg.y": set()}
    assert _layer_violations(graph, layers) == ["workbench.sim.records: unit 'sim.records' has no layer",
                                                "workbench.newpkg.y: unit 'newpkg' has no layer",
                                                "workbench.report.x -> workbench.sim.run"]


def test_every_module_imports_only_what_its_layer_allows() -> None:
    assert _layer_violations(_graph(), LAYERS) == []


def _parents(module: str) -> list[str]:
    """The packages Python imports before ``module`` itself (``a.b.c``: ``a`` and ``a.b``)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _reach(graph: dict[str, set[str]], roots: set[str], lazy: str = FACADE) -> set[str]:
    """Every module importing ``roots`` may run, deferred imports and parent packages included. The
    ``lazy`` facade's own imports are not followed: it names its exports for type checkers only and
    loads each on first use (``workbench/__init__.py``)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        targets = () if module == lazy else graph.get(module, ())
        todo += [t for t in (*targets, *_parents(module)) if t in graph]
    return seen


def _external(path: Path) -> set[str]:
    """The top-level names of the third-party (and standard) modules a file imports, anywhere in it."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names - {"workbench"}


ENGINE_LIBRARIES = {"simpy", "numba"}


def test_the_reach_follows_deferred_imports_and_parent_packages() -> None:
    graph = {"w.report.a": {"w.analysis.b"}, "w.analysis.b": set(), "w.report": set(), "w.analysis": {"w.sim.run"},
             "w.sim.run": set(), "w.sim": set(), "w": {"w.other"}, "w.other": set()}
    assert _reach(graph, {"w.report.a"}, lazy="w") == {"w.report.a", "w.analysis.b", "w.report", "w.analysis",
                                                       "w.sim.run", "w.sim", "w"}
    assert "w.other" in _reach(graph, {"w.report.a"}, lazy="none")  # a facade that imported eagerly would count


def test_the_report_never_imports_the_engine() -> None:
    """Rendering a report reads files: no module of ``workbench.report`` reaches SimPy, numba or the
    engine's modules, even through a function-level import."""
    graph = _graph()
    reached = _reach(graph, {m for m in MODULES if m == "workbench.report" or m.startswith("workbench.report.")})
    engine = sorted(m for m in reached if m.startswith("workbench.sim.") and m != "workbench.sim.records")
    libraries = {m: sorted(_external(MODULES[m]) & ENGINE_LIBRARIES) for m in reached}
    assert engine == []
    assert {m: found for m, found in libraries.items() if found} == {}
    assert "workbench.sim.run" in _reach(graph, {"workbench.runs"})  # the check sees what the verb runs


def test_one_verb_runs_the_model() -> None:
    """Only the run verb (:func:`workbench.runs.run_scenario`) calls the engine's ``simulate``; the
    package's lazy facade only names it."""
    callers = sorted(m for m, p in MODULES.items() for t, name in _imports(m, p)
                     if t == "workbench.sim.run" and name == "simulate")
    assert callers == ["workbench", "workbench.runs"]


# --- who names a workload file --------------------------------------------------------------------------

#: The files of a workload directory: only :class:`workbench.workload.directory.WorkloadDir` (and the
#: workload writers beside it) and :mod:`workbench.io` may spell them; everything else takes a value.
WORKLOAD_FILES = frozenset({"segments.parquet", "queries.parquet", "manifest.json"})
EVENTS_DIR = "events"
FILE_OWNERS = ("workbench.io", "workbench.workload")


def _named_files(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, name) of every string constant that is a workload file name, or starts with ``events/``,
    and of every ``path / "events"``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in WORKLOAD_FILES or node.value.startswith(f"{EVENTS_DIR}/")):
            yield node.lineno, node.value
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant)
              and node.right.value == EVENTS_DIR):
            yield node.lineno, f"/ {EVENTS_DIR!r}"


def _file_name_leaks(modules: dict[str, str]) -> list[str]:
    """``module:line names 'file'`` for every workload file named outside the modules that own them."""
    return [f"{m}:{line} names {name!r}" for m, source in modules.items()
            if not any(m == owner or m.startswith(owner + ".") for owner in FILE_OWNERS)
            for line, name in sorted(_named_files(ast.parse(source)))]


def test_the_file_name_check_finds_a_module_that_names_a_workload_file() -> None:
    modules = {"workbench.report.x": 'p = data / "segments.parquet"\nq = data / "events"\nr = "events/part-0"\n',
               "workbench.workload.directory": 'SEGMENTS_FILE = "segments.parquet"\n',
               "workbench.io.y": 'm = "manifest.json"\n',
               "workbench.report.z": 'table = "events"  # a table name\ns = "a queries.parquet note"\n'}
    assert _file_name_leaks(modules) == ["workbench.report.x:1 names 'segments.parquet'",
                                         "workbench.report.x:2 names \"/ 'events'\"",
                                         "workbench.report.x:3 names 'events/part-0'"]


def test_no_module_outside_io_and_workload_names_a_workload_file() -> None:
    """A workload directory's files are named by :class:`~workbench.workload.directory.WorkloadDir` (a run
    directory's by :class:`~workbench.io.run_dir.RunDir`); every other module takes the value."""
    assert _file_name_leaks({m: p.read_text(encoding="utf-8") for m, p in MODULES.items()}) == []
