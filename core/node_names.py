"""The names PyTorch gives backward nodes (``grad_fn``), for webgrad's nodes: ``MulBackward0``,
``MmBackward0``, ``NllLossBackward0`` ... A node is named by its op when the op labelled it (an
op composed of several kernels, such as ``mean``: ``MeanBackward0``), else by its kernel through
``KERNELS`` (a kernel whose PyTorch name depends on its attributes or shapes has a function there),
else ``<kernel>Backward0``; a custom ``Function``'s node is ``<Class>Backward``, as in PyTorch.

>>> import webgrad as wg
>>> x = wg.ones(2, 3, requires_grad=True)
>>> (x * 2).grad_fn.name(), (x @ x.t()).grad_fn.name(), x.sum(1).grad_fn.name(), x.mean().grad_fn.name()
('MulBackward0', 'MmBackward0', 'SumBackward1', 'MeanBackward0')
"""
from __future__ import annotations

from . import kernel_names as K


def _matmul(node) -> str:
    a, b = node.shapes
    return "MmBackward0" if len(a) == len(b) == 2 else "BmmBackward0"


def _transpose(node) -> str:
    perm = node.attrs["perm"]
    moved = [i for i, p in enumerate(perm) if i != p]
    if len(perm) == 2 and len(moved) == 2:
        return "TBackward0"
    return "TransposeBackward0" if len(moved) == 2 else "PermuteBackward0"


def _sum(node) -> str:
    return "SumBackward0" if len(node.attrs["axes"]) == len(node.shapes[0]) and not node.attrs["keepdim"] \
        else "SumBackward1"


def _reshape(node) -> str:
    before, after = tuple(node.shapes[0]), tuple(node.attrs["shape"])
    if len(after) == len(before) + 1 and tuple(s for s in after if s != 1) == tuple(s for s in before if s != 1):
        return "UnsqueezeBackward0"
    if len(after) < len(before) and tuple(s for s in after if s != 1) == tuple(s for s in before if s != 1):
        return "SqueezeBackward1"
    return "ViewBackward0"


KERNELS = {   # kernel -> PyTorch's node name (a str, or a function of the node)
    K.LU_FACTOR: "LinalgLuFactorExBackward0", K.TRIANGULAR_SOLVE: "LinalgSolveTriangularBackward0",
    K.CHOLESKY: "LinalgCholeskyExBackward0",
    K.MATMUL: _matmul, K.TRANSPOSE: _transpose, K.SUM: _sum, K.RESHAPE: _reshape,
    K.CAST: "ToCopyBackward0", K.IDENTITY: "CloneBackward0", K.CONCAT: "CatBackward0", K.PAD: "ConstantPadNdBackward0",
    K.CLAMP: "ClampBackward1", K.LAYER_NORM: "NativeLayerNormBackward0", K.SOFTMAX_CROSS_ENTROPY: "NllLossBackward0",
    K.SQUARE: "PowBackward0", K.LOG1P: "Log1PBackward0", K.ATTENTION: "ScaledDotProductFlashAttentionForCpuBackward0",
    K.INDEX_COPY: "IndexPutBackward0", K.SCATTER_ADD: "ScatterAddBackward0", K.AS_STRIDED: "AsStridedBackward0",
    K.LOG_SOFTMAX_GRAD: "LogSoftmaxBackwardDataBackward0", K.SOFTMAX_GRAD: "SoftmaxBackwardDataBackward0",
    K.GELU_GRAD: "GeluBackwardBackward0", K.LAYER_NORM_GRAD: "NativeLayerNormBackwardBackward0",
}


def node_name(node) -> str:
    """PyTorch's name for ``node`` (what ``grad_fn.name()`` and its repr show)."""
    if node.label is not None:
        return node.label
    named = KERNELS.get(node.kernel)
    if named is None:
        return f"{node.kernel}Backward0"
    return named if type(named) is str else named(node)


class AccumulateGrad:
    """What ``next_functions`` shows for a leaf tensor (PyTorch's ``AccumulateGrad``: ``variable``
    is the leaf, whose ``.grad`` it fills).

    >>> import webgrad as wg
    >>> w = wg.ones(2, requires_grad=True)
    >>> acc = (w * 2).grad_fn.next_functions[0][0]
    >>> acc.name(), acc.variable is w
    ('torch::autograd::AccumulateGrad', True)
    """

    __slots__ = ("variable",)
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def next_functions(node) -> tuple:
    """PyTorch's ``grad_fn.next_functions``: per input, (node, output index), (AccumulateGrad, 0)
    for a leaf that requires grad, or (None, 0)."""
    return tuple([(None, 0) if e is None else (AccumulateGrad(e[0]), 0) if e[1] < 0 else e for e in node.next])


def labelled(t, label: str):
    """``t`` with its node (if it has one) named ``label``: how an op made of several kernels
    gives its result PyTorch's node name (``mean``: ``MeanBackward0``). Returns ``t``."""
    node = t.grad_fn
    if node is not None:
        node.label = label
    return t


__all__ = ["node_name", "AccumulateGrad", "next_functions", "labelled", "KERNELS"]
