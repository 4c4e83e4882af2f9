"""The package's imports point down: no circles, and no module imports a floor above its own.

The floors are those of docs/architecture.md. The graph is read from the source with ``ast``
(imports inside functions included), so a lazy import cannot hide an arrow that runs back up.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "spectral_leverage"

#: floor of each top-level module or subpackage; an import may go to the same floor only inside
#: one subpackage, never between two different units of one floor
FLOORS = {
    "_validation": 0, "_blocks": 0, "_atomic": 0, "_keys": 0, "_lapack": 0,
    "_spd": 1,
    "kernels": 2, "metrics": 2, "datasets": 2, "io": 2, "pivoted_cholesky": 2, "ridge_gcv": 2,
    "backends": 3,
    "base": 4, "density": 4,
    "spectral": 5,
    "samplers": 6,
    "krr": 7,
    "validation": 8, "interop": 8,
    "cli": 9,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Modules of the package that ``path`` imports (absolute names)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found.update(c for c in candidates if c.split(".")[0] == "spectral_leverage" and resolves(c))
    found.discard(name)
    return found


def resolves(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def graph() -> dict[str, set[str]]:
    return {module_name(path): imports_of(path) for path in sorted(PACKAGE.rglob("*.py"))}


def unit(name: str) -> str:
    """The top-level module or subpackage a module belongs to ('' for the package itself)."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in edges.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
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

    for node in edges:
        if node not in index:
            visit(node)
    return found


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from a unit to another unit on the same or a higher floor."""
    bad = []
    for source, targets in edges.items():
        if not unit(source):
            continue  # the package's __init__ gathers the public names from every floor
        for target in targets:
            a, b = unit(source), unit(target)
            if a != b and (not b or FLOORS[b] >= FLOORS[a]):
                bad.append((source, target))
    return sorted(bad)


def test_every_unit_has_a_floor():
    assert {unit(name) for name in graph()} - {""} <= set(FLOORS)


def test_no_import_circles():
    assert cycles(graph()) == []


def test_imports_point_down():
    assert upward(graph()) == []


@pytest.mark.parametrize("injected", [("spectral_leverage.density.tree", "spectral_leverage.krr"),
                                      ("spectral_leverage.kernels", "spectral_leverage.io")])
def test_the_check_sees_an_upward_or_sideways_import(injected):
    edges = graph()
    source, target = injected
    edges[source] |= {target}
    assert injected in upward(edges)


def test_the_check_sees_a_circle():
    edges = graph()
    edges["spectral_leverage.kernels"] |= {"spectral_leverage.krr.nystrom"}
    assert any("spectral_leverage.kernels" in component for component in cycles(edges))


def test_optional_libraries_are_not_imported_with_the_package():
    """torch, gpytorch (the [interop] extra) and Dask load only where they are used, not with
    ``import spectral_leverage`` nor ``import spectral_leverage.interop``."""
    code = ("import sys, spectral_leverage, spectral_leverage.interop; "
            "print(sorted({'torch', 'gpytorch', 'dask', 'distributed'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
