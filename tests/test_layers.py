"""The house keeps its floors: no import cycle, no upward import, few imports inside functions.

Walks ``perfmodel/`` and ``optimizer/`` with :mod:`ast` (nothing is imported)
and checks, for every import of the project's own modules, module-level and
function-level alike (only ``if TYPE_CHECKING:`` blocks are skipped):

* no cycle among modules (importing ``a.b.c`` also runs the packages ``a.b``);
* no upward import: core -> models -> fit -> optimizer -> apps -> compat shims;
* a function-level import of our own code, or an ``importlib.import_module``
  call, only where :data:`ALLOWED_LATE_IMPORTS` says why;
* no use of another module's ``_private`` name.

The checker is tested on made-up modules too: it must catch the kinds of knot
the package had (``io`` <-> ``tuning`` through a function-level import, a
reference checker that imports what it checks, a private helper reached across
modules, a model that imports the fitting layer).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("perfmodel", "optimizer")

#: Floors, lowest first.  A module may import only modules on its floor or below.
FLOORS = ("core", "models", "fit", "optimizer", "apps", "compat", "front")

#: Module (or package prefix) -> floor; the longest matching prefix wins.
PLACES = {
    "perfmodel.units": "core", "perfmodel.errors": "core", "perfmodel.specs": "core",
    "perfmodel.result": "core", "perfmodel.io": "core", "perfmodel.measurements": "core",
    "perfmodel._validate": "core", "perfmodel.interface": "core", "perfmodel.registry": "core",
    "perfmodel.floors": "core", "perfmodel._callable": "core", "perfmodel._process": "core",
    "perfmodel._fluid": "models", "perfmodel.collectives": "models", "perfmodel.coarse": "models",
    "perfmodel.queueing": "models", "perfmodel.gst": "models", "perfmodel.layerwise": "models",
    "perfmodel.partition": "models", "perfmodel.baselines": "models",
    "perfmodel.operational": "models", "perfmodel.symbolic": "models",
    "perfmodel.pipedream": "models", "perfmodel.sim": "models", "perfmodel.placement": "models",
    "perfmodel.zoo": "models",
    "perfmodel.fit": "fit",
    "optimizer": "optimizer",
    "perfmodel.cli": "apps", "perfmodel._cli": "apps", "perfmodel.sweep": "apps",
    "perfmodel.plot": "apps", "perfmodel.__main__": "apps", "optimizer.__main__": "apps",
    # old module paths, kept as re-exports so that user code does not break
    "perfmodel.tuning": "compat", "perfmodel.select": "compat", "perfmodel.calibrate": "compat",
    "perfmodel.validation": "compat", "perfmodel.dl2": "compat",
    "perfmodel": "front",
}

#: (module, imported module or "import_module") -> why the import happens inside a function.
ALLOWED_LATE_IMPORTS = {
    ("perfmodel", "import_module"):
        "the front door resolves a name on first use (PEP 562), so `import perfmodel` stays "
        "cheap",
    ("perfmodel.registry", "import_module"):
        "the registry names model classes by module path and imports one when it is asked for",
    ("perfmodel.cli", "import_module"):
        "CLI start-up: a command's module, with what it needs, is imported when it runs",
    ("perfmodel.io", "import_module"):
        "the deprecated alias perfmodel.io.load_pipedream resolves to "
        "perfmodel.pipedream.load_graph on use (PEP 562)",
    ("perfmodel.sim.engine", "perfmodel.sim._kernel_jit"):
        "optional dependency: the compiled kernel imports numba, only when asked for",
}

#: Upward imports allowed because they happen late, for the reason above.
ALLOWED_UPWARD = {("perfmodel.io", "perfmodel.pipedream")}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_sources(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    """Every module of the packages: name -> (source, is a package)."""
    out = {}
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            out[module_name(path, root)] = (path.read_text(encoding="utf-8"),
                                            path.name == "__init__.py")
    return out


@dataclass
class Import:
    importer: str
    target: str
    line: int
    late: bool                 # inside a function
    names: tuple = ()          # names taken from the target (from-imports)


@dataclass
class Findings:
    imports: list = field(default_factory=list)
    dynamic: list = field(default_factory=list)      # (module, line) of import_module calls
    private: list = field(default_factory=list)      # (module, line, "target._name")


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _own(name: str, modules) -> str | None:
    """The module of ours that ``name`` (a module path, maybe with an attribute) names."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _visit(node, late: bool, ctx: dict, found: Findings) -> None:
    """Record the imports, dynamic imports and private names under ``node``."""
    name, is_package, modules, aliases = (ctx["name"], ctx["is_package"], ctx["modules"],
                                          ctx["aliases"])
    if isinstance(node, ast.If) and _type_checking(node):
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        late = True
    if isinstance(node, ast.Import):
        for a in node.names:
            target = _own(a.name, modules)
            if target:
                found.imports.append(Import(name, target, node.lineno, late))
                if a.asname:
                    aliases[a.asname] = target
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(name, is_package, node)
        for a in node.names:
            sub = f"{base}.{a.name}"
            if sub in modules:      # a module: `from . import io`
                found.imports.append(Import(name, sub, node.lineno, late))
                aliases[a.asname or a.name] = sub
            elif _own(base, modules):
                target = _own(base, modules)
                found.imports.append(Import(name, target, node.lineno, late, (a.name,)))
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found.private.append((name, node.lineno, f"{target}.{a.name}"))
    elif isinstance(node, ast.Call):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called == "import_module":
            found.dynamic.append((name, node.lineno))
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        target = aliases.get(node.value.id)
        if (target and target != name and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.private.append((name, node.lineno, f"{target}.{node.attr}"))
    for child in ast.iter_child_nodes(node):
        _visit(child, late, ctx, found)


def scan(sources: dict[str, tuple[str, bool]]) -> Findings:
    """Imports, dynamic imports and private-name uses of every module in ``sources``."""
    found = Findings()
    for name, (source, is_package) in sources.items():
        ctx = {"name": name, "is_package": is_package, "modules": set(sources),
               "aliases": {}}   # aliases: local name -> our module it is bound to
        _visit(ast.parse(source), False, ctx, found)
    return found


def floor(module: str) -> str:
    """The floor of ``module`` (the longest prefix of it in :data:`PLACES`)."""
    best = max((p for p in PLACES if module == p or module.startswith(p + ".")),
               key=len, default=None)
    if best is None:
        raise KeyError(module)
    return PLACES[best]


def import_graph(found: Findings, modules) -> nx.DiGraph:
    """Module -> module edges, with the packages an import runs on the way.

    Importing ``perfmodel.sim.trace`` runs ``perfmodel/sim/__init__.py`` first, so
    the importer depends on that package too (unless it lives inside it).  The
    top-level packages are left out: their ``__init__`` imports nothing eagerly.
    """
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    for imp in found.imports:
        if imp.target == imp.importer:
            continue
        g.add_edge(imp.importer, imp.target, line=imp.line)
        parent = imp.target.rpartition(".")[0]
        while parent and parent not in PACKAGES:
            if parent in modules and not imp.importer.startswith(parent + ".") \
                    and parent != imp.importer:
                g.add_edge(imp.importer, parent, line=imp.line)
            parent = parent.rpartition(".")[0]
    return g


def cycles(g: nx.DiGraph) -> list[list[str]]:
    return [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]


def upward(found: Findings) -> list[str]:
    out = []
    for imp in found.imports:
        a, b = FLOORS.index(floor(imp.importer)), FLOORS.index(floor(imp.target))
        if b > a and (imp.importer, imp.target) not in ALLOWED_UPWARD:
            out.append(f"{imp.importer}:{imp.line} ({floor(imp.importer)}) imports "
                       f"{imp.target} ({floor(imp.target)})")
    return out


def late_imports(found: Findings) -> list[tuple[str, str, int]]:
    """(module, target, line) of every function-level import of ours and every import_module."""
    out = [(i.importer, i.target, i.line) for i in found.imports if i.late]
    out += [(m, "import_module", line) for m, line in found.dynamic]
    return out


# --------------------------------------------------------------------------
# The package
# --------------------------------------------------------------------------

SOURCES = package_sources()
FOUND = scan(SOURCES)


def test_every_module_has_a_floor():
    unplaced = []
    for m in SOURCES:
        try:
            floor(m)
        except KeyError:
            unplaced.append(m)
    assert not unplaced, f"place these modules on a floor in PLACES: {unplaced}"


def test_no_import_cycle():
    found = cycles(import_graph(FOUND, SOURCES))
    assert not found, f"import cycles: {found}"


def test_imports_point_down_the_floors():
    bad = upward(FOUND)
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_function_level_imports_are_few_and_explained():
    late = late_imports(FOUND)
    unexplained = [f"{m}:{line} imports {t}" for m, t, line in late
                   if (m, t) not in ALLOWED_LATE_IMPORTS]
    assert not unexplained, ("import at module top, down the floors, or add the case to "
                             "ALLOWED_LATE_IMPORTS with its reason:\n" + "\n".join(unexplained))
    assert len(late) <= 15


def test_no_private_name_of_another_module():
    assert not FOUND.private, f"private names used across modules: {FOUND.private}"


def test_nothing_inside_imports_the_compat_shims():
    users = [f"{i.importer}:{i.line}" for i in FOUND.imports
             if floor(i.target) == "compat" and floor(i.importer) != "compat"]
    assert not users


# --------------------------------------------------------------------------
# The checker catches what it must (made-up modules)
# --------------------------------------------------------------------------

def _sources(**modules: str) -> dict[str, tuple[str, bool]]:
    return {name.replace("__", "."): (text, False) for name, text in modules.items()}


def test_checker_catches_a_cycle_through_a_function_level_import():
    sources = _sources(perfmodel__io="from .tuning import parse_measurements\n",
                       perfmodel__tuning="def f():\n    from .io import read_text\n")
    found = scan(sources)
    assert cycles(import_graph(found, sources)) == [["perfmodel.io", "perfmodel.tuning"]]
    assert late_imports(found) == [("perfmodel.tuning", "perfmodel.io", 2)]


def test_checker_catches_a_reference_importing_what_it_checks():
    sources = _sources(optimizer__dp="def check():\n    from .exhaustive import best_plan\n",
                       optimizer__exhaustive="from .dp import _state_space\n")
    found = scan(sources)
    assert cycles(import_graph(found, sources)) == [["optimizer.dp", "optimizer.exhaustive"]]
    assert found.private == [("optimizer.exhaustive", 1, "optimizer.dp._state_space")]


def test_checker_catches_two_modules_reaching_into_each_other():
    # the selection and the tunables each imported the other's private helpers
    sources = _sources(perfmodel__select="def f():\n    from .tuning import _measured_profile\n",
                       perfmodel__tuning="def g():\n    from .select import _band_values\n")
    found = scan(sources)
    assert cycles(import_graph(found, sources)) == [["perfmodel.select", "perfmodel.tuning"]]
    assert len(found.private) == 2


def test_checker_catches_a_dispatcher_cycle_inside_a_package():
    sources = {"perfmodel.placement": ("from .strategies import place\n", True),
               "perfmodel.placement.strategies": (
                   "def place(name):\n    from .optimize import optimize_placement\n", False),
               "perfmodel.placement.optimize": ("from .strategies import colocated\n", False)}
    found = scan(sources)
    assert ["perfmodel.placement.optimize", "perfmodel.placement.strategies"] in \
        cycles(import_graph(found, sources))


def test_checker_catches_a_private_helper_reached_through_a_module_alias():
    sources = _sources(perfmodel__collectives="def _checked(name, v):\n    return v\n",
                       perfmodel__coarse="from . import collectives as _c\nx = _c._checked('a', 1)\n")
    assert scan(sources).private == [("perfmodel.coarse", 2, "perfmodel.collectives._checked")]


def test_checker_catches_an_upward_import_and_a_hidden_package_cycle():
    sources = {"perfmodel.coarse": ("from .fit.grid import fit_tunables\n", False),
               "perfmodel.fit": ("from .grid import fit_tunables\n", True),
               "perfmodel.fit.grid": ("from ..coarse import SyncCoarse\n", False)}
    found = scan(sources)
    assert upward(found) == ["perfmodel.coarse:1 (models) imports perfmodel.fit.grid (fit)"]
    # grid -> coarse -> fit.grid: and importing fit.grid runs the package fit first
    assert cycles(import_graph(found, sources)) == [["perfmodel.coarse", "perfmodel.fit",
                                                     "perfmodel.fit.grid"]]


@pytest.mark.parametrize("block", ["if TYPE_CHECKING:\n    from .fit import grid\n",
                                   "import typing\nif typing.TYPE_CHECKING:\n    from .fit import grid\n"])
def test_checker_skips_type_checking_blocks(block):
    sources = _sources(perfmodel__coarse=block, perfmodel__fit__grid="")
    assert scan(sources).imports == []
