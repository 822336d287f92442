"""Gradients of the fused-loss kernels, written with ops (so they differentiate again)."""
from .. import kernel_names as K
from ..registry import register_gradient


@register_gradient(K.SOFTMAX_CROSS_ENTROPY, inputs_to_save=True, kernel=K.SOFTMAX_CROSS_ENTROPY_GRAD)
def _softmax_cross_entropy(dy, saved, attrs):
    """d loss_r / d x_r = softmax(x_r) - onehot(target_r), times the row's share of ``dy``: its own
    (reduction 'none'), all of it ('sum'), or ``dy`` over the kept-row count ('mean'). Ignored rows
    get exactly 0, as in PyTorch (even where that share is inf or NaN: 'mean' with no row kept)."""
    import webgrad as wg
    x, target = saved
    keep = target != attrs["ignore_index"]
    if attrs["reduction"] == "mean":
        dy = dy / keep.sum()
    classes = wg.arange(x.shape[1], backend=x._backend)
    onehot = (classes == wg.where(keep, target, 0).unsqueeze(1)).to(x.dtype)
    scale = wg.where(keep, dy, 0.0).unsqueeze(1)
    return (wg.nn.functional.softmax(x, 1) - onehot) * scale, None
