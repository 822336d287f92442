"""The backends the suite runs on: those in ``wg.backends()``, narrowed by
``WEBGRAD_TEST_BACKENDS=cpu,wgpu``; the dtypes each holds (float16 on a GPU only where its device
was granted WebGPU's shader-f16 feature), and which of them hold float64.
(A module of its own, not conftest, so test modules can import it by a unique name.)"""
import os

import webgrad as wg


def available_backends():
    names = wg.backends()
    wanted = os.environ.get("WEBGRAD_TEST_BACKENDS")
    return [n for n in names if not wanted or n in wanted.split(",")]


BACKENDS = available_backends()


def _has_float64(name):
    try:
        wg.zeros(1, dtype=wg.float64, backend=name)
        return True
    except (TypeError, ValueError, NotImplementedError):
        return False


FLOAT64_BACKENDS = {name for name in BACKENDS if _has_float64(name)}
BACKEND_DTYPES = {name: frozenset(d.name for d in wg.registry.backend(name).dtypes) for name in BACKENDS}
FLOAT16_BACKENDS = {name for name in BACKENDS if "float16" in BACKEND_DTYPES[name]}
