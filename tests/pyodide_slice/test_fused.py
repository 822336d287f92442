"""The fused transformer kernels (Softmax, LogSoftmax, LayerNorm, Gelu, Attention and their backward
kernels) run on the backend under test (``webgpu`` in the page), seen in the profile, with results
checked against closed forms that need no stored result."""
import math

import webgrad as wg
import webgrad.nn.functional as F

K = wg.kernel_names
FUSED = (K.SOFTMAX, K.SOFTMAX_GRAD, K.LOG_SOFTMAX, K.LOG_SOFTMAX_GRAD, K.LAYER_NORM, K.LAYER_NORM_GRAD, K.GELU,
         K.GELU_GRAD, K.ATTENTION, K.ATTENTION_GRAD)


def test_fused_kernels_run_on_the_backend(slice_backend):
    q = wg.tensor([[[0.1 * (i + 2 * j) - 0.5 for j in range(4)] for i in range(5)]], requires_grad=True)
    with wg.profile() as prof:
        y = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        z = F.layer_norm(F.gelu(y), (4,))
        (F.softmax(z, -1) + F.log_softmax(z, 0)).sum().backward()
    for name in FUSED:
        assert prof.stats[name].calls >= 1 and slice_backend in prof.stats[name].backends, name
    # the first query sees only itself: its output is its own value
    assert all(abs(a - b) < 1e-6 for a, b in zip(y[0, 0].tolist(), q[0, 0].tolist()))
    # layer_norm's rows have mean 0 and variance 1 (less eps: within 5e-3 here); log_softmax along dim 0 of one row is 0
    for row in z[0].tolist():
        assert abs(sum(row)) < 1e-5 and abs(sum(v * v for v in row) / 4 - 1) < 5e-3
    assert all(abs(v) < 1e-6 for v in F.log_softmax(z, 0).reshape(-1).tolist())
    assert all(math.isfinite(v) for row in q.grad[0].tolist() for v in row)


def test_attention_uniform_when_keys_agree(slice_backend):
    """Equal keys give equal weights: each output is the mean of the values it may see."""
    q = wg.tensor([[[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]])
    k = wg.ones(1, 3, 2)
    v = wg.tensor([[[1.0], [2.0], [6.0]]])
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True).reshape(-1).tolist()
    assert all(abs(a - b) < 1e-5 for a, b in zip(out, [1.0, 1.5, 3.0]))
