"""cpu Attention and AttentionGrad: the scores of all keys at once (``q k^T`` per batch, a few numpy
calls), with the scale, the mask and the causal cut applied in place; half precision in float32
(the log-sum-exp stays float32 for it, as in PyTorch's kernels).

Batch n of the queries reads keys and values n // group (grouped-query attention) and adds mask
(n // mask_div) % M: both are views of the scores ``[N, L, S]``, as ``[N / group, group, L, S]``
and ``[A, M, mask_div, L, S]``."""
import numpy as np

from webgrad import kernel_names as K

from .elementwise import _quiet
from .registry import cpu_kernel
from .softmax import _work, row_max, row_sum

_CAUSAL: dict = {}   # (L, S, dtype) -> [L, S] additive mask, 0 where j <= i and -inf above, read-only


def _causal(L, S, dtype):
    m = _CAUSAL.get((L, S, dtype))
    if m is None:
        m = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, 0).astype(dtype)
        m.flags.writeable = False
        if len(_CAUSAL) < 32:
            _CAUSAL[L, S, dtype] = m
    return m


def _by_mask(s, mask, div):
    """``s`` [N, L, S] as [A, M, div, L, S]: ``mask`` [M, L, S] meets it as ``mask[:, None]``."""
    n, L, S = s.shape
    return s.reshape(n // (len(mask) * div), len(mask), div, L, S)


def _scores(q, k, masks, scale, causal, group, mask_div):
    """q k^T * scale + mask (+ the causal cut): [N, L, S] in the working dtype."""
    nk, S, E = k.shape
    n, L, _ = q.shape
    s = np.matmul(q.reshape(nk, group, L, E), k[:, None].swapaxes(-1, -2)).reshape(n, L, S)
    s *= scale
    if masks:
        mask = _work(masks[0])
        _by_mask(s, mask, mask_div)[...] += mask[:, None]
    if causal:
        s += _causal(L, S, s.dtype)
    return s


def _grouped(p, v, group):
    """p [N, L, S] @ v [N / group, S, Ev] -> [N, L, Ev]."""
    n, L, S = p.shape
    return np.matmul(p.reshape(len(v), group, L, S), v[:, None]).reshape(n, L, v.shape[-1])


def _group_sum(x):
    """[N / group, group, ...] summed over the group (a key's or value's share from each query reading
    it); without grouping the one entry itself (a view: numpy's sum over a length-1 axis copies)."""
    return x[:, 0] if x.shape[1] == 1 else x.sum(axis=1)


def _lse_dtype(dtype):
    return dtype if dtype.itemsize >= 4 else np.dtype(np.float32)


@cpu_kernel(K.ATTENTION)
@_quiet
def attention(q, k, v, *masks, scale, causal, group, mask_div):
    """(softmax(q k^T * scale + mask) v, lse): rows that see no key get out 0 and lse -inf."""
    s = _scores(_work(q), _work(k), masks, scale, causal, group, mask_div)
    if s.shape[-1]:
        m = row_max(s)
    else:
        m = np.full(s.shape[:-1] + (1,), -np.inf, s.dtype)
    m[np.isneginf(m)] = 0                     # a row of -inf only: exp(-inf - 0) = 0 everywhere
    s -= m
    p = np.exp(s, out=s)
    total = row_sum(p)
    out = _grouped(p, _work(v), group)
    lse = (m + np.log(total))[..., 0]
    total[total == 0] = np.inf                # out = 0 where no key was seen
    out /= total
    return out.astype(q.dtype, copy=False), lse.astype(_lse_dtype(q.dtype), copy=False)


@cpu_kernel(K.ATTENTION_GRAD)
@_quiet
def attention_grad(dout, q, k, v, out, lse, dlse, *masks, scale, causal, group, mask_div, mask_grad):
    """(dq, dk, dv[, dmask]) from the forward's out and lse: with p = exp(s - lse) and
    ds = p * (dout v^T - (sum(dout * out) - dlse)), dq = ds k * scale, dk = ds^T q * scale, dv = p^T dout."""
    qw, kw, vw, dw = _work(q), _work(k), _work(v), _work(dout)
    s = _scores(qw, kw, masks, scale, causal, group, mask_div)
    lse = np.where(np.isneginf(lse), np.inf, lse).astype(s.dtype, copy=False)   # p = 0 where no key was seen
    s -= lse[..., None]
    p = np.exp(s, out=s)
    n, L, S = p.shape
    nk, E, Ev = len(kw), qw.shape[-1], vw.shape[-1]
    dv = _group_sum(np.matmul(p.reshape(nk, group, L, S).swapaxes(-1, -2), dw.reshape(nk, group, L, Ev)))
    ds = np.matmul(dw.reshape(nk, group, L, Ev), vw[:, None].swapaxes(-1, -2)).reshape(n, L, S)
    ds -= (np.einsum("nle,nle->nl", dw, _work(out)) - _work(dlse))[..., None]
    ds *= p
    dq = _grouped(ds, kw, group)
    dq *= scale
    dk = _group_sum(np.matmul(ds.reshape(nk, group, L, S).swapaxes(-1, -2), qw.reshape(nk, group, L, E)))
    dk *= scale
    grads = [dq.astype(q.dtype, copy=False), dk.astype(k.dtype, copy=False), dv.astype(v.dtype, copy=False)]
    if mask_grad:
        mask = masks[0]
        grads.append(_by_mask(ds, mask, mask_div).sum(axis=(0, 2)).astype(mask.dtype, copy=False))
    return tuple(grads)
