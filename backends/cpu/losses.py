"""cpu fused-loss kernels: SoftmaxCrossEntropy (a row's log-sum-exp minus its target logit)."""
import numpy as np

from webgrad import kernel_names as K

from .elementwise import _ZERO, _quiet
from .reduce import max_kernel
from .registry import cpu_kernel


def safe_targets(target, keep, n_classes):
    """The target indices with ignored rows pointed at class 0; an index out of range raises."""
    t = np.where(keep, target, 0)
    if t.size and (t.min() < 0 or t.max() >= n_classes):
        bad = t[(t < 0) | (t >= n_classes)][0]
        raise IndexError(f"{K.SOFTMAX_CROSS_ENTROPY}: target {bad} is out of bounds for {n_classes} classes")
    return t


@cpu_kernel(K.SOFTMAX_CROSS_ENTROPY)
@_quiet
def softmax_cross_entropy(x, target, *, ignore_index):
    keep = target != ignore_index
    t = safe_targets(target, keep, x.shape[1])
    z = x - max_kernel(x, axes=(1,), keepdim=True)
    loss = np.log(np.add.reduce(np.exp(z), axis=1)) - z[np.arange(len(z)), t]
    return np.where(keep, loss, _ZERO[x.dtype])
