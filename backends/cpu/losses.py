"""cpu fused-loss kernels: SoftmaxCrossEntropy (a row's log-sum-exp minus its target logit), reduced.

It runs on tiny batches as often as on big ones, where each numpy call (~0.5-1 µs) is most of
the cost: the common case (every target a class, none ignored) takes no masking calls at all.
"""
import numpy as np

from webgrad import kernel_names as K

from .elementwise import _ZERO, _quiet
from .reduce import _SHORT_ROW
from .registry import cpu_kernel


def kept_targets(target, ignore_index, n_classes):
    """``(t, keep)``: the target indices safe to index with (ignored rows pointed at class 0) and
    the mask of kept rows, None when every row is kept. A target out of range raises IndexError."""
    in_range = _in_range(target, n_classes)
    if in_range and not 0 <= ignore_index < n_classes:
        return target, None                 # every target a class, so none equals ignore_index
    keep = target != ignore_index
    t = np.where(keep, target, 0)
    if not in_range and not _in_range(t, n_classes):
        bad = t[(t < 0) | (t >= n_classes)][0]
        raise IndexError(f"{K.SOFTMAX_CROSS_ENTROPY}: target {bad} is out of bounds for {n_classes} classes")
    return t, keep


def _unsigned(t):
    """The integer array ``t`` read as unsigned integers of its width (negatives become huge)."""
    return t.view(_UNSIGNED[t.dtype.itemsize])


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def picked_targets(z, target, ignore_index):
    """``(z[r, target[r]] per row r, keep)``: the target classes' entries, and the mask of kept rows
    (None when every row is kept). A target out of range raises IndexError."""
    t, keep = kept_targets(target, ignore_index, z.shape[1])
    return z[row_indices(len(z)), t], keep


def _in_range(t, n_classes):
    """Whether every index in ``t`` (int32 or int64) is in [0, n_classes): one numpy call, as unsigned
    (a negative index reads as a huge one)."""
    return not t.size or np.maximum.reduce(_unsigned(t)) < n_classes


def _bad_reduction(reduction):
    """The ValueError of an unknown ``reduction`` (core's own check, which names the kernel)."""
    from webgrad.nn.functional._utils import check_reduction
    check_reduction(reduction, K.SOFTMAX_CROSS_ENTROPY)


def shifted(x):
    """Logits ``x`` [N, C] minus each row's max (class-major when rows are short: ``class_major``,
    whose layout numpy's reduce over the classes walks fast)."""
    x = class_major(x)
    return x - np.maximum.reduce(x, axis=1, keepdims=True)


_ROWS: dict = {}   # n -> np.arange(n), read-only: the row indices of a batch (batch sizes recur)


def row_indices(n):
    """``np.arange(n)``, kept for the batch sizes seen (at most 64), to pick one class per row."""
    rows = _ROWS.get(n)
    if rows is None:
        rows = np.arange(n)
        rows.flags.writeable = False
        if len(_ROWS) < 64:
            _ROWS[n] = rows
    return rows


_EYES: dict = {}   # (n_classes, dtype) -> the identity, read-only: its rows are the one-hot vectors


def subtract_one_hot(p, target, ignore_index):
    """``p[r, target[r]] -= 1`` in place for each kept row r (a softmax gradient's one-hot term; the
    forward checked the targets), and the mask of kept rows (None when every row is kept), found
    as ``picked_targets`` finds it."""
    t, keep = kept_targets(target, ignore_index, p.shape[1])   # (an ignored row points at class 0; its dy is 0)
    _subtract_one_hot(p, t)
    return keep


def _subtract_one_hot(p, target):
    """``p[rows, target] -= 1``, or an IndexError before anything is written. With few classes (as
    ``class_major``'s), as ``p -= eye[target]`` with a kept identity, taken class-major as ``p`` is
    laid out there: a take and a subtract, ~40% of the fancy-index assignment's cost on small
    batches. With many classes the identity would be too big."""
    n_classes = p.shape[1]
    if n_classes > _SHORT_ROW:
        p[row_indices(len(p)), target] -= 1
        return
    eye = _EYES.get((n_classes, p.dtype))
    if eye is None:
        eye = _EYES[n_classes, p.dtype] = np.eye(n_classes, dtype=p.dtype)
        eye.flags.writeable = False
    np.subtract(p, eye.take(target, axis=1).T, out=p)   # (eye is symmetric: its columns are its rows)


def class_major(x):
    """Logits ``x`` [N, C] laid out class by class when their rows are short (C <= 32): numpy reduces
    a short last axis at ~80 ns a row but vectorises across rows when they are the contiguous axis,
    so the row max, the exp and the row sum run 2-5x faster on the copy (128x10: 19 -> 8 µs)."""
    return np.asfortranarray(x) if x.shape[1] <= _SHORT_ROW else x


@cpu_kernel(K.SOFTMAX_CROSS_ENTROPY)
@_quiet
def softmax_cross_entropy(x, target, *, ignore_index, reduction):
    """Per-row losses [N] ('none', 0 at ignored rows), their sum, or their mean over the kept rows
    ('mean': NaN when none is kept, as in PyTorch); 'sum' and 'mean' give 0-d arrays."""
    z = shifted(x)
    return reduced_loss(z, np.add.reduce(np.exp(z), axis=1), target, ignore_index, reduction)


def reduced_loss(z, sums, target, ignore_index, reduction):
    """The kernel's result from the shifted logits ``z`` and their rows' sums of ``exp`` (``sums``, [N])."""
    picked, keep = picked_targets(z, target, ignore_index)
    loss = np.log(sums) - picked
    if keep is not None:
        loss = np.where(keep, loss, _ZERO[z.dtype])
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(np.add.reduce(loss), dtype=z.dtype)
    if reduction == "mean":
        kept = len(loss) if keep is None else np.count_nonzero(keep)
        return np.asarray(np.add.reduce(loss) / kept, dtype=z.dtype)
    _bad_reduction(reduction)


def softmax_cross_entropy_grad(dy, e, sums, target, attrs):
    """The kernel's backward kernel (backward_kernels.py) from ``e``, the exp of the shifted logits, and its rows' sums
    (``sums``, [N, 1]): (softmax - onehot(target)) times each row's share of dy (dy / kept rows for
    'mean'), 0 at ignored rows; the masking is skipped when no row is ignored (the common case)."""
    p = e / sums                                             # softmax, ours to write into
    keep = subtract_one_hot(p, target, attrs["ignore_index"])
    if attrs["reduction"] == "mean":
        dy = dy / (len(p) if keep is None else np.count_nonzero(keep))
    if keep is not None:
        dy = np.where(keep, dy, _ZERO[e.dtype])
    p *= dy.reshape(-1, 1) if dy.ndim else dy               # a row's dy, or the one dy of a reduction
    return p


@_quiet
def softmax_cross_entropy_joint(x, target, dy, *, ignore_index, reduction):
    """The kernel and its backward kernel at once (a compiled plan's joint step, ``core/compiler/joint.py``): the
    loss, the gradient of the logits for ``dy``, and None (the target's); one shift, exp and row sum
    for both, the same numbers as each alone."""
    z = shifted(x)
    e = np.exp(z)
    sums = np.add.reduce(e, axis=1, keepdims=True)
    attrs = {"ignore_index": ignore_index, "reduction": reduction}
    loss = reduced_loss(z, sums.reshape(len(sums)), target, ignore_index, reduction)
    return loss, softmax_cross_entropy_grad(dy, e, sums, target, attrs), None
