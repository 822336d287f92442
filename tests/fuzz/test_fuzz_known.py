"""What the fuzz suite found and left open: each the exact case, as a strict xfail (a fix makes it pass,
and then the mark must go), with why it is still open. The fuzz tests keep these cases out of their
draws (see the comments there naming them)."""
from typing import NamedTuple

import numpy as np
import pytest

from fuzz_check import check_against_torch
from fuzz_strategies import Input


class Known(NamedTuple):
    """A difference from PyTorch: ``program(lib, *tensors)`` on ``inputs``, on every backend unless
    ``cpu_only`` (the inputs hold a dtype the GPU backends lack), and why it is still open."""
    name: str
    program: object
    inputs: list
    why: str
    cpu_only: bool = False


KNOWN = [
    Known("float16 % float32", lambda lib, a, b: a % b,
          [Input(np.array([4.28125]), "float16"), Input(np.array(4.283203125), "float32")],
          "MIXED_ROUNDING_GRAD: remainder's gradient across dtypes: PyTorch's rule uses the divisor before its "
          "cast to the common dtype (floor(4.28125 / 4.2832) = 0), webgrad's after it (a Cast node: 4.28125 in "
          "float16, so 1)", cpu_only=True),
    Known("atan2(float32, float64)", lambda lib, a, b: lib.atan2(a, b),
          [Input(np.array(5.24738208e-22), "float32"), Input(np.array(0.0), "float64")],
          "MIXED_ROUNDING_GRAD: atan2's gradient across dtypes: PyTorch's rule squares the float32 operand in "
          "float32, before the cast to float64 (5.2e-22 ** 2 is subnormal there, 0.25% off); webgrad's rule runs "
          "after the cast, in float64", cpu_only=True),
]


def _cases(cpu_only: bool) -> list:
    return [pytest.param(k, id=k.name, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=k.why))
            for k in KNOWN if k.cpu_only == cpu_only]


if _cases(cpu_only=False):   # (none open now: a parameter set left empty would be a skip, which CI refuses)
    @pytest.mark.parametrize("known", _cases(cpu_only=False))
    def test_known_difference_from_torch(known, backend):
        check_against_torch(known.program, known.inputs, backend, known.name)


@pytest.mark.parametrize("known", _cases(cpu_only=True))
def test_known_difference_from_torch_in_cpu_dtypes(known):
    """The cases in dtypes the GPU backends lack (float64, float16, bfloat16)."""
    check_against_torch(known.program, known.inputs, "cpu", known.name)
