"""The front door: its catalogue and ``__all__`` agree, and importing it stays light."""

import re
import subprocess
import sys

import pytest

import perfmodel

GROUPS = ("Specs and results", "Models", "Formulas", "Simulation", "Placement", "Fitting",
          "Errors", "Modules")
ENTRY = re.compile(r"^   (\w+) -- .* \[(\w+)\]$")


def catalogue() -> dict[str, list[tuple[str, str]]]:
    """Group -> [(name, module)] as the package docstring lists them."""
    lines = perfmodel.__doc__.splitlines()
    groups, current = {}, None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and set(lines[i + 1]) == {"-"} and len(lines[i + 1]) == len(line):
            current = line
            groups[current] = []
        elif current and (m := ENTRY.match(line)):
            groups[current].append((m.group(1), m.group(2)))
    return groups


def test_catalogue_and_all_agree():
    groups = catalogue()
    assert tuple(groups) == GROUPS
    names = [name for entries in groups.values() for name, _ in entries]
    assert len(names) == len(set(names))
    assert set(names) == set(perfmodel.__all__) - {"__version__"}


@pytest.mark.parametrize("name,module", [e for g in catalogue().values() for e in g])
def test_every_name_resolves_where_the_catalogue_says(name, module):
    value = getattr(perfmodel, name)
    where = __import__(f"perfmodel.{module}", fromlist=["_"])
    if name == module:
        assert value is where
    else:
        defined = getattr(value, "__module__", "") or ""
        assert defined.startswith(f"perfmodel.{module}") or any(
            getattr(where, attr, None) is value for attr in dir(where))


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        perfmodel.nope  # noqa: B018
    assert "SyncCoarse" in dir(perfmodel)


HEAVY = ("numpy", "scipy", "networkx", "numba", "cvxpy", "matplotlib", "sympy", "yaml")


def _imported(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True)
    return set(out.stdout.split())


def test_import_perfmodel_loads_nothing_heavy():
    loaded = _imported("import perfmodel")
    assert not loaded & set(HEAVY)
    assert not {m for m in loaded if m.startswith("perfmodel.")}


def test_cli_start_up_loads_no_model_and_no_heavy_dependency():
    # what `perfmodel --help` runs: the parser, nothing that a command imports
    loaded = _imported("from perfmodel.cli import build_parser\nbuild_parser()")
    assert not loaded & {"scipy", "networkx", "numba", "cvxpy", "matplotlib", "sympy"}
    assert not {m for m in loaded if m.startswith(("perfmodel._cli.", "perfmodel.fit",
                                                   "perfmodel.sim", "optimizer"))
                and m != "perfmodel._cli.flags"}


def test_a_name_imports_only_what_it_needs():
    loaded = _imported("from perfmodel import SyncCoarse")
    assert "perfmodel.coarse" in loaded
    assert not loaded & {"scipy.special", "networkx", "numba", "cvxpy", "matplotlib"}
    assert not {m for m in loaded if m.startswith(("perfmodel.fit", "perfmodel.sim",
                                                   "perfmodel.gst", "perfmodel.placement"))}
