"""Every docstring example in webgrad runs and prints what it shows (``doctest``, with ``...``
matching any text), so the examples users copy stay true."""
import doctest
import importlib
import pkgutil
import warnings

import pytest

import webgrad
import webgrad.backends
import webgrad.web

PACKAGES = (webgrad, webgrad.backends, webgrad.web)   # three folders of the source tree (pyproject's package-dir)
MODULES = sorted({m.name for p in PACKAGES for m in pkgutil.walk_packages(p.__path__, p.__name__ + ".")})


def test_modules_are_found():
    assert {"webgrad.tensor", "webgrad.optim._updates", "webgrad.backends.cpu.erf", "webgrad.web.serve"} <= set(MODULES)


@pytest.fixture
def global_state():
    """Put back what examples may set (default backend, device, dtype, the default generator)."""
    saved = (webgrad.get_backend().name, webgrad.get_default_device(), webgrad.get_default_dtype(),
             webgrad.get_rng_state())
    yield
    backend, device, dtype, rng = saved
    webgrad.set_backend(backend)
    webgrad.set_default_device(device)
    webgrad.set_default_dtype(dtype)
    webgrad.set_rng_state(rng)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, global_state):
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # examples may show a warning's case; the warning is not the point
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples in {name} failed (above)"
