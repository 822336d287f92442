"""Fused elementwise kernels for compiled plans: a chain of float32 elementwise kernels as one
generated WGSL function run by the elementwise shader (one dispatch, no intermediate buffers), or
run by a MatMul on each result before it is stored (its epilogue: ``linalg_epilogue``).

A chain is given as ops ``(kernel name, operands)``, each operand ``("in", k)`` (the fused kernel's
k-th input, broadcast to the output's shape as any elementwise input) or ``("op", j)`` (the result
of op j). The function is ``fn fused_(x0: F, ...) -> F { let t0 = ...; ...; return tN; }`` with each
op's expression from ``elementwise``'s tables; pipelines are cached by that text (the chain's
structure), as every elementwise pipeline.
"""
from __future__ import annotations

import re

from webgrad import kernel_names as K
from webgrad import registry
from webgrad.dtypes import float32

from . import _bind
from .elementwise import FLOAT_BINARY, FLOAT_UNARY, elementwise, scalar_helpers
from .linalg import K_CHUNK, product
from .linalg_epilogue import Epilogue

_TRIG = ("sin_(", "cos_(", "tan_(")   # written for scalars: the elementwise shader lifts them for its EXPR only
_EXPRESSIONS = {**{k: v for k, v in FLOAT_UNARY.items() if not any(t in v for t in _TRIG) and "p0" not in v},
                **FLOAT_BINARY}
_OPERAND = re.compile(r"\bx([01])\b")


def fusible(name: str, attrs: dict, dtypes) -> bool:
    """Whether kernel ``name`` with ``attrs`` on inputs of ``dtypes`` can join a fused chain.

    >>> fusible("Mul", {}, [float32, float32]), fusible("Sum", {}, [float32])
    (True, False)
    """
    return name in _EXPRESSIONS and not attrs and all(d is float32 for d in dtypes)


def fused_source(ops) -> str:
    """The WGSL function of a chain (see the module's doc); its inputs are named x0, x1, ...

    >>> print(fused_source([("Mul", (("in", 0), ("in", 1))), ("Exp", (("op", 0),))]))
    fn fused_(x0: F, x1: F) -> F {
        let t0 = x0 * x1;
        let t1 = exp(t0);
        return t1;
    }
    """
    n_in = 1 + max(k for _, operands in ops for kind, k in operands if kind == "in")
    lines = [f"fn fused_({', '.join(f'x{k}: F' for k in range(n_in))}) -> F {{"]
    for j, (name, operands) in enumerate(ops):
        names = [f"x{k}" if kind == "in" else f"t{k}" for kind, k in operands]
        expr = _OPERAND.sub(lambda m: names[int(m.group(1))], _EXPRESSIONS[name]).replace("T0(", "F(")
        lines.append(f"    let t{j} = {expr};")
    lines.append(f"    return t{len(ops) - 1};\n}}")
    return "\n".join(lines)


def fusible_head(name: str, attrs: dict, metas) -> bool:
    """Whether kernel ``name`` with ``attrs`` on inputs of (shape, dtype) ``metas`` can take a fused chain
    as its epilogue: a float32 MatMul of matrices (or batches of them) whose K takes one dispatch.

    >>> fusible_head("MatMul", {"transpose_b": True}, [((128, 784), float32), ((256, 784), float32)])
    True
    """
    if name != K.MATMUL or any(d is not float32 or len(s) < 2 for s, d in metas):
        return False
    (sa, _), (sb, _) = metas
    k = sa[-2] if attrs.get("transpose_a") else sa[-1]
    return k <= K_CHUNK


def epilogue_kernel(backend_name: str, ops, name: str, attrs: dict):
    """The kernel function ``fn(a, b, *inputs) -> output`` of a MatMul (``name``, ``attrs``) whose results
    pass through the chain ``ops`` before they are stored: its input 0 is the product, inputs 1.. the
    arrays after ``a`` and ``b`` (see ``linalg_epilogue``)."""
    chain = fused_source(ops)
    source = scalar_helpers(chain) + chain
    label = "Fused" + name + "".join(op for op, _ in ops)[:40]
    ta, tb = attrs.get("transpose_a", False), attrs.get("transpose_b", False)

    def run(be, a, b, *arrays):
        return product(be, a, b, ta, tb, Epilogue(source, arrays))
    return _bind(run, backend_name, registry, label)


def fused_kernel(backend_name: str, ops, out_shape: tuple):
    """The kernel function of a chain on ``backend_name``: ``fn(*inputs) -> output`` (a GpuArray of
    ``out_shape``, float32), with the GPU kernels' error handling."""
    source = fused_source(ops)
    label = "Fused" + "".join(name for name, _ in ops)[:40]

    def run(be, *arrays):
        args = ", ".join(f"x{k}" for k in range(len(arrays)))
        return elementwise(be, label, f"fused_({args})", list(arrays), out_shape, float32, extra=source + "\n")
    return _bind(run, backend_name, registry, label)


__all__ = ["fusible", "fusible_head", "fused_source", "fused_kernel", "epilogue_kernel"]
