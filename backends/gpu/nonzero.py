"""NonZero (torch.nonzero): the coordinates of a tensor's nonzero elements, row-major, as int64
[count, ndim]. The count depends on the data, so it is read back, as PyTorch synchronises here too:
0/1 flags, their inclusive prefix sum (the Cumsum kernel this backend registers), a readback of the
last sum (4 bytes), then one dispatch in which each nonzero element writes its coordinates at row
``prefix - 1`` (``kernels/nonzero.wgsl``)."""
from __future__ import annotations

from webgrad import kernel_names as K
from webgrad.dtypes import int32, int64
from webgrad.registry import get_kernel

from .elementwise import WG, View, elementwise
from .program import WGSL_TYPES, Program
from .runtime import GpuArray


def _test(t: str, x: str, alias: str) -> str:
    """WGSL for "x (of WGSL type ``t``, named ``alias`` in the shader) is nonzero": a float on its bits
    (NaN is nonzero, -0.0 is not; a compiler may assume no NaN in a comparison)."""
    return f"(bitcast<u32>({x}) & 0x7fffffffu) != 0u" if t == "f32" else f"{x} != {alias}(0)"


def _count(be, prefix, n) -> int:
    last = elementwise(be, K.NONZERO, "x0", [View(prefix, n - 1, [0])], (1,), int32)
    return memoryview(be.read_bytes(last)).cast("i")[0]


def nonzero(be, x):
    n, rank = x.size, len(x.shape)
    if n == 0:
        return be.alloc((0, rank), int64)
    flat = GpuArray(x.storage, (n,), x.dtype)
    t = WGSL_TYPES[x.dtype.name]
    flag = f"select(O(0), O(1), {_test(t, 'x0', 'T0')})"
    flags = elementwise(be, K.NONZERO, flag, [flat], (n,), int32, vec4=t != "f32")   # floats tested on their bits
    prefix = get_kernel(K.CUMSUM, be.name)(flags, axis=0)
    out = be.alloc((_count(be, prefix, n), rank), int64)
    if out.size == 0:
        return out
    be.run(("nonzero", t, rank), lambda: Program(K.NONZERO, "nonzero", inputs=[("x", t), ("prefix", "i32")],
                                                 outputs=[("out", "i32")], wg=WG,
                                                 subs={"RANK": str(rank), "NONZERO": _test(t, "x[i]", t)},
                                                 uniforms=[("n", "u32", 1), ("shape", "u32", rank)]),
           [flat, prefix], [out], [n, *x.shape], -(-n // WG))
    return out


KERNELS = {K.NONZERO: nonzero}
