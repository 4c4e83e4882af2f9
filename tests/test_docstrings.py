"""Every Examples section in the package's docstrings runs and prints what it shows."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import spectral_leverage

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(spectral_leverage.__path__, "spectral_leverage.")
)


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    if name.startswith("spectral_leverage.interop"):  # examples with torch: the [interop] extra
        pytest.importorskip("torch")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    if ">>>" in inspect.getsource(module):
        assert result.attempted > 0, f"examples in {name} were not collected"
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
