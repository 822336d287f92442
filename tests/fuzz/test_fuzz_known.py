"""What the fuzz suite found and left open: each the exact case, as a strict xfail (a fix makes it pass,
and then the mark must go), with why it is still open. The fuzz tests keep these cases out of their
draws (see the comments there naming them)."""
import numpy as np
import pytest

from fuzz_check import check_against_torch
from fuzz_strategies import Input


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="bitwise &, |, ^ on integer tensors: webgrad takes them on bool tensors only (new "
                          "BitwiseAnd/Or/Xor kernels on every backend, and bitwise_and & co. names: parity's area)")
@pytest.mark.parametrize("op", ["__and__", "__or__", "__xor__"])
def test_bitwise_operators_on_integers(op, backend):
    check_against_torch(lambda lib, a, b: getattr(a, op)(b), [Input(np.array([6, -3, 0]), "int32"),
                                                              Input(np.array([3, 5, 1]), "int32")], backend, op)


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="PROD_ZERO_NAN: prod's gradient where a slice holds a zero and a NaN: PyTorch multiplies "
                          "out the others (NaN beside the zero too); webgrad's rule gives 0 beside a single zero "
                          "(exact products of the others need a cumulative product kernel, which webgrad lacks)")
def test_prod_gradient_with_a_zero_and_a_nan(backend):
    check_against_torch(lambda lib, x: x.prod(0), [Input(np.array([0.0, np.nan, 2.0]), "float32")], backend, "prod")


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="MIXED_ROUNDING_GRAD: remainder's gradient across dtypes: PyTorch's rule uses the divisor "
                          "before its cast to the common dtype (floor(4.28125 / 4.2832) = 0), webgrad's after it "
                          "(a Cast node: 4.28125 in float16, so 1)")
def test_remainder_gradient_across_dtypes():
    check_against_torch(lambda lib, a, b: a % b, [Input(np.array([4.28125]), "float16"),
                                                  Input(np.array(4.283203125), "float32")], "cpu", "a % b")


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="MIXED_ROUNDING_GRAD: atan2's gradient across dtypes: PyTorch's rule squares the float32 "
                          "operand in float32, before the cast to float64 (5.2e-22 ** 2 is subnormal there, 0.25% "
                          "off); webgrad's rule runs after the cast, in float64")
def test_atan2_gradient_across_dtypes():
    check_against_torch(lambda lib, a, b: lib.atan2(a, b), [Input(np.array(5.24738208e-22), "float32"),
                                                            Input(np.array(0.0), "float64")], "cpu", "atan2")


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="HALF_SCALAR: a Python float with a float16/bfloat16 tensor: PyTorch computes in float32 "
                          "with the scalar unrounded, webgrad rounds the scalar to the tensor's dtype first (an ulp "
                          "of the result apart; a whole unit for //, % and comparisons)")
def test_python_float_with_a_bfloat16_tensor():
    check_against_torch(lambda lib, x: x // 0.587890625, [Input(np.array(0.5859375), "bfloat16")], "cpu", "x // s")


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="REPEATED_WRITES: y[index] = v with a repeated index: the last write wins in both, but "
                          "PyTorch gives every written value the gradient of its place (index_put's rule gathers), "
                          "webgrad gives the overwritten ones 0 (they are not in the result)")
def test_gradient_of_values_written_twice(backend):
    def program(lib, x, v):
        y = x.clone()
        y[lib.tensor([0, 0])] = v
        return y
    check_against_torch(program, [Input(np.zeros(3), "float32"), Input(np.array([1.0, 2.0]), "float32")], backend,
                        "y[[0, 0]] = v")


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="ARANGE_INT_STEP: arange with an integer dtype and fractional arguments: PyTorch casts "
                          "them to the dtype first (so a step of 0.5 is 'step must be nonzero' and end 3.5 is 3), "
                          "webgrad counts the elements from the arguments as given, as numpy does")
@pytest.mark.parametrize("start, end, step", [(0, 3.5, 1), (0, 3, 0.5), (0.5, 3, 1.5)])
def test_integer_arange_with_fractional_arguments(start, end, step, backend):
    check_against_torch(lambda lib: lib.arange(start, end, step, dtype=lib.int64), [], backend,
                        f"arange({start}, {end}, {step}, dtype=int64)")
