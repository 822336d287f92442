"""Gradients of the fused-loss kernels, written with ops (so they differentiate again)."""
from .. import kernel_names as K
from ..registry import register_gradient


@register_gradient(K.SOFTMAX_CROSS_ENTROPY, inputs_to_save=[0, 1])
def _softmax_cross_entropy(dy, saved, attrs):
    """d loss_r / d x_r = softmax(x_r) - onehot(target_r), for the rows that are kept."""
    import webgrad as wg
    x, target = saved
    keep = target != attrs["ignore_index"]
    classes = wg.arange(x.shape[1], backend=x._backend)
    onehot = (classes == wg.where(keep, target, 0).unsqueeze(1)).to(x.dtype)
    scale = (dy * keep.to(x.dtype)).unsqueeze(1)
    return (wg.nn.functional.softmax(x, 1) - onehot) * scale, None
