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


def _product(a, b, scale, shift, group):
    """a b^T * scale - shift (per row, when given): [N, L, S] from a [N, L, E] and b [N / group, S, E],
    as one BLAS product. ``a`` is scaled on the way in (half the elements of the result), -shift rides
    along as an extra column of ``a`` against a row of ones under b^T, and b^T is laid out contiguous
    (numpy's stacked matmul takes a transposed right operand of these sizes ~2x slower than a copy)."""
    nk, S, E = b.shape
    n, L, _ = a.shape
    e = E + (shift is not None)
    a2, bt = np.empty((n, L, e), a.dtype), np.empty((nk, e, S), b.dtype)
    np.multiply(a, scale, out=a2[..., :E])
    bt[:, :E] = b.swapaxes(-1, -2)
    if shift is not None:
        np.negative(shift, out=a2[..., E])
        bt[:, E] = 1
    return np.matmul(a2.reshape(nk, group, L, e), bt[:, None]).reshape(n, L, S)


def _scores(q, k, masks, scale, causal, group, mask_div, lse=None):
    """q k^T * scale (- lse per row, when given) + mask (+ the causal cut): [N, L, S] in the working dtype."""
    s = _product(q, k, scale, lse, group)
    if masks:
        mask = _work(masks[0])
        _by_mask(s, mask, mask_div)[...] += mask[:, None]
    if causal:
        s += _causal(*s.shape[1:], s.dtype)
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


_SAFE_SCORE = 64.0   # |scores| below this: exp neither overflows nor leaves float32's normal range


def _needs_shift(q, k, masks, scale):
    """Whether the scores must be shifted by their row max before exp (softmax's usual guard). By
    Cauchy-Schwarz |q_i . k_j| * scale <= max |q_i| * max |k_j| * scale; below ``_SAFE_SCORE``
    (a transformer's scaled scores: tens at most) exp(s) is safe as it stands, and the shift's two
    passes over the scores (their max, the subtraction) are saved. A float mask may add anything,
    and a NaN or inf bound fails the test: both keep the shift."""
    if masks or not q.size or not k.size:
        return True
    bound = np.sqrt(np.einsum("...e,...e->...", q, q).max() * np.einsum("...e,...e->...", k, k).max())
    return not abs(scale) * bound < _SAFE_SCORE


@cpu_kernel(K.ATTENTION)
@_quiet
def attention(q, k, v, *masks, scale, causal, group, mask_div):
    """(softmax(q k^T * scale + mask) v, lse): rows that see no key get out 0 and lse -inf."""
    qw, kw = _work(q), _work(k)
    s = _scores(qw, kw, masks, scale, causal, group, mask_div)
    m = 0.0
    if _needs_shift(qw, kw, masks, scale):
        m = row_max(s) if s.shape[-1] else np.full(s.shape[:-1] + (1,), -np.inf, s.dtype)
        m[np.isneginf(m)] = 0                 # a row of -inf only: exp(-inf - 0) = 0 everywhere
        s -= m
    p = np.exp(s, out=s)
    total = row_sum(p)
    out = _grouped(p, _work(v), group)
    lse = (np.log(total) + m)[..., 0]
    total[total == 0] = np.inf                # out = 0 where no key was seen
    out /= total
    return out.astype(q.dtype, copy=False), lse.astype(_lse_dtype(q.dtype), copy=False)


@cpu_kernel(K.ATTENTION_GRAD)
@_quiet
def attention_grad(dout, q, k, v, out, lse, dlse, *masks, scale, causal, group, mask_div, mask_grad):
    """(dq, dk, dv[, dmask]) from the forward's out and lse: with p = exp(s - lse) and
    ds = p * (dout v^T - (sum(dout * out) - dlse)), dq = ds k * scale, dk = ds^T q * scale, dv = p^T dout."""
    qw, kw, vw, dw = _work(q), _work(k), _work(v), _work(dout)
    lse = np.where(np.isneginf(lse), np.inf, lse).astype(qw.dtype, copy=False)   # p = 0 where no key was seen
    s = _scores(qw, kw, masks, scale, causal, group, mask_div, lse)
    p = np.exp(s, out=s)
    n, L, S = p.shape
    nk, E, Ev = len(kw), qw.shape[-1], vw.shape[-1]
    dv = _group_sum(np.matmul(p.reshape(nk, group, L, S).swapaxes(-1, -2), dw.reshape(nk, group, L, Ev)))
    ds = _product(dw, vw, 1.0, np.einsum("nle,nle->nl", dw, _work(out)) - _work(dlse), group)
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
