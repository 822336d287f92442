"""The op cases of the in-Pyodide slice: plain Python (no numpy), deterministic inputs.

Each case is ``fn(wg) -> (output, leaves)``. ``run_case`` records the output and, for a
differentiable float output, the gradients of ``sum(output * weights)`` for each leaf.
The host runs every case on ``cpu`` (``expected()``) and the page compares ``webgpu`` with it.
"""
import math

# every family: unary, binary, reduce, linalg, movement, indexing, creation, nn windows and
# functional, losses, modules and optimisers; a few cases are large (several workgroups)


def vals(n, seed=0, lo=None):
    """``n`` deterministic floats in about [-1.5, 1.5], none within 0.05 of 0 (or >= ``lo``)."""
    out = []
    for i in range(n):
        v = math.sin(seed * 7.31 + i * 1.713 + 0.5) * 1.5
        if lo is not None:
            v = lo + abs(v)
        elif abs(v) < 0.05:
            v += 0.1
        out.append(round(v, 4))
    return out


def nested(flat, shape):
    """``flat`` as nested lists of ``shape`` (an empty list when the shape has a 0)."""
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    return [nested(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def leaf(wg, shape, seed=0, lo=None):
    return wg.tensor(nested(vals(numel(shape), seed, lo), tuple(shape)), requires_grad=True)


def const(wg, shape, seed=0, lo=None):
    return wg.tensor(nested(vals(numel(shape), seed, lo), tuple(shape)))


def unary(op, shape=(3, 4), lo=None):
    def case(wg):
        x = leaf(wg, shape, 1, lo)
        return op(wg, x), [x]
    return case


def binary(op, sa=(3, 4), sb=(3, 4), lo=None):
    def case(wg):
        a, b = leaf(wg, sa, 2, lo), leaf(wg, sb, 3, lo)
        return op(wg, a, b), [a, b]
    return case


def _attention(op):
    """Queries [2, 6, 8], keys and values [2, 70, 8] (more keys than one tile holds), all leaves."""
    def case(wg):
        q, k, v = leaf(wg, (2, 6, 8), 4), leaf(wg, (2, 70, 8), 5), leaf(wg, (2, 70, 8), 6)
        return op(wg, q, k, v), [q, k, v]
    return case


def _put(y, index, value):
    y[index] = value
    return y


def F(wg):
    import webgrad.nn.functional as functional
    return functional


def _mlp_step(opt_name):
    def case(wg):
        wg.manual_seed(0)
        w1, b1 = leaf(wg, (4, 6), 11), leaf(wg, (6,), 12)
        w2, b2 = leaf(wg, (6, 2), 13), leaf(wg, (2,), 14)
        params = [w1, b1, w2, b2]
        x, target = const(wg, (5, 4), 15), wg.tensor([0, 1, 1, 0, 1])
        opt = getattr(wg.optim, opt_name)(params, lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            loss = F(wg).cross_entropy(wg.relu(x @ w1 + b1) @ w2 + b2, target)
            loss.backward()
            opt.step()
        out = wg.cat([p.detach().reshape(-1) for p in params])
        return out, []
    return case


CASES = {
    # ---------------------------------------------------------------- unary
    "neg": unary(lambda wg, x: -x),
    "abs": unary(lambda wg, x: x.abs()),
    "exp": unary(lambda wg, x: x.exp()),
    "exp_large": unary(lambda wg, x: x.exp(), shape=(1537,)),
    "log": unary(lambda wg, x: x.log(), lo=0.2),
    "log1p": unary(lambda wg, x: wg.log1p(x), lo=0.0),
    "expm1": unary(lambda wg, x: wg.expm1(x)),
    "sqrt": unary(lambda wg, x: x.sqrt(), lo=0.2),
    "rsqrt": unary(lambda wg, x: wg.rsqrt(x), lo=0.3),
    "square": unary(lambda wg, x: wg.square(x)),
    "reciprocal": unary(lambda wg, x: wg.reciprocal(x), lo=0.3),
    "sin": unary(lambda wg, x: x.sin()),
    "cos": unary(lambda wg, x: x.cos()),
    "tan": unary(lambda wg, x: wg.tan(x * 0.5)),
    "tanh": unary(lambda wg, x: x.tanh()),
    "sigmoid": unary(lambda wg, x: x.sigmoid()),
    "relu": unary(lambda wg, x: x.relu()),
    "leaky_relu": unary(lambda wg, x: F(wg).leaky_relu(x, 0.1)),
    "elu": unary(lambda wg, x: F(wg).elu(x, 0.7)),
    "gelu": unary(lambda wg, x: F(wg).gelu(x)),
    "gelu_tanh": unary(lambda wg, x: F(wg).gelu(x, approximate="tanh")),
    "silu": unary(lambda wg, x: F(wg).silu(x)),
    "softplus": unary(lambda wg, x: F(wg).softplus(x, beta=2.0)),
    "erf": unary(lambda wg, x: wg.erf(x)),
    "clamp": unary(lambda wg, x: x.clamp(-0.5, 0.8)),
    "sign_floor_ceil_round": unary(lambda wg, x: wg.stack([wg.sign(x), wg.floor(x * 3), wg.ceil(x * 3),
                                                            wg.round(x * 3)])),
    "pow_scalar": unary(lambda wg, x: x ** 3),
    "scalar_0d": lambda wg: (lambda x: ((x * 3.0).exp(), [x]))(wg.tensor(0.5, requires_grad=True)),
    "empty": lambda wg: (lambda x: (x.exp() * 2, [x]))(wg.zeros(0, 3, requires_grad=True)),
    "int_to_float": lambda wg: (wg.tensor([[1, -2, 3], [4, 5, -6]]).exp(), []),
    "cast_logical_not": lambda wg: (wg.logical_not(wg.tensor([[0, 2], [3, 0]])), []),
    # ---------------------------------------------------------------- binary
    "add_broadcast": binary(lambda wg, a, b: a + b, (3, 1, 4), (2, 4)),
    "sub": binary(lambda wg, a, b: a - b),
    "mul_broadcast": binary(lambda wg, a, b: a * b, (4, 1), (1, 5)),
    "div": binary(lambda wg, a, b: a / b, lo=0.3),
    "pow": binary(lambda wg, a, b: a ** b, lo=0.3),
    "maximum_minimum": binary(lambda wg, a, b: wg.maximum(a, b) * 2 + wg.minimum(a, b)),
    "atan2": binary(lambda wg, a, b: wg.atan2(a, b)),
    "scalar_ops": unary(lambda wg, x: 2.0 - x * 3 + 1 / (x * x + 1)),
    "compare": binary(lambda wg, a, b: wg.stack([a < b, a <= b, a > b, a >= b, a == a, a != b])),
    "logical": lambda wg: (lambda a, b: (wg.stack([wg.logical_and(a, b), wg.logical_or(a, b), wg.logical_xor(a, b)]), []))(
        wg.tensor([True, False, True, False]), wg.tensor([True, True, False, False])),
    "where": binary(lambda wg, a, b: wg.where(a > b, a * 2, b)),
    "int_arith": lambda wg: (lambda a, b: (wg.stack([a + b, a * b, a - b, wg.remainder(a, b), wg.floor_divide(a, b)]), []))(
        wg.tensor([7, -7, 9, 3]), wg.tensor([2, 3, -4, 5])),
    "add_large": binary(lambda wg, a, b: a * b + a, (40, 37), (37,)),
    # ---------------------------------------------------------------- reductions
    "sum_all": unary(lambda wg, x: x.sum()),
    "sum_axis_keepdim": unary(lambda wg, x: x.sum(1, keepdim=True), shape=(2, 3, 4)),
    "sum_large": unary(lambda wg, x: x.sum(0), shape=(2100, 3)),
    "mean": unary(lambda wg, x: x.mean((0, 2)), shape=(2, 3, 4)),
    "prod": unary(lambda wg, x: x.prod(1)),
    "max_min": unary(lambda wg, x: x.max(1).values * 2 + x.min(0, keepdim=True).values.sum() + x.max()),
    "amax": unary(lambda wg, x: wg.amax(x, 0)),
    "argmax_argmin": lambda wg: (lambda x: (wg.stack([x.argmax(1), x.argmin(1)]), []))(const(wg, (4, 5), 4)),
    "all_any": lambda wg: (lambda x: (wg.stack([wg.all(x > 0, 1), wg.any(x > 1, 1)]), []))(const(wg, (3, 5), 5)),
    "cumsum": unary(lambda wg, x: wg.cumsum(x, 1)),
    "logsumexp": unary(lambda wg, x: wg.logsumexp(x, 1)),
    "var_std": unary(lambda wg, x: wg.var(x, 1) + wg.std(x, 0).sum()),
    "norm": unary(lambda wg, x: wg.norm(x)),
    # ---------------------------------------------------------------- sorting (the GPU's three paths: counting,
    # one block, blocks and merge steps)
    "sort": unary(lambda wg, x: x.sort(1, descending=True).values * wg.arange(4.0)),
    "sort_block": unary(lambda wg, x: x.sort(0).values, shape=(300, 2)),
    "sort_merge": unary(lambda wg, x: x.sort(1, descending=True).values, shape=(2, 700)),
    "argsort_topk_indices": lambda wg: (lambda x: (wg.cat([x.argsort(0).reshape(-1), x.topk(2).indices.reshape(-1)]),
                                                   []))(const(wg, (5, 6), 6)),
    "median_kthvalue_quantile": unary(lambda wg, x: x.median(1).values + x.kthvalue(2, 1).values + x.quantile(0.3, 1),
                                      shape=(3, 5)),
    # ---------------------------------------------------------------- linear algebra
    "matmul": binary(lambda wg, a, b: a @ b, (3, 5), (5, 4)),
    "matmul_batched_broadcast": binary(lambda wg, a, b: a @ b, (2, 1, 3, 4), (3, 4, 2)),
    "matmul_large": binary(lambda wg, a, b: a @ b, (33, 47), (47, 65)),
    "matvec_dot_outer": binary(lambda wg, a, b: (a @ b[0]).sum() * wg.dot(a[0], b[1]) + wg.outer(a[1], b[2]).sum(),
                               (3, 4), (4, 4)),
    "einsum": binary(lambda wg, a, b: wg.einsum("ij,kj->ik", a, b), (3, 4), (2, 4)),
    # ---------------------------------------------------------------- movement
    "reshape_transpose": unary(lambda wg, x: x.reshape(4, 6).transpose(0, 1) * wg.arange(4.0), shape=(2, 3, 4)),
    "permute": unary(lambda wg, x: x.permute(2, 0, 1) * 1.5, shape=(2, 3, 4)),
    "expand": unary(lambda wg, x: x.expand(3, 2, 4) * wg.arange(4.0), shape=(2, 1)),
    "slice_step": unary(lambda wg, x: x[1:, ::2] * 2, shape=(4, 5)),
    "index_int_neg": unary(lambda wg, x: x[-1] + x[:, 0].sum(), shape=(3, 4)),
    "flip_roll": unary(lambda wg, x: wg.flip(x, (0,)) * wg.roll(x, 1, 1)),
    "cat_stack": binary(lambda wg, a, b: wg.cat([a, b * 2], 0) + wg.stack([a, b]).sum(0).repeat(2, 1)),
    "pad": unary(lambda wg, x: wg.pad(x, (1, 2, 0, 1), value=0.5) * 3),
    "squeeze_unsqueeze": unary(lambda wg, x: x.unsqueeze(0).squeeze(2) * 2, shape=(3, 1, 4)),
    "tile_tril": unary(lambda wg, x: wg.tril(wg.tile(x, (1, 2)))),
    # ---------------------------------------------------------------- indexing
    "gather": unary(lambda wg, x: wg.gather(x, 1, wg.tensor([[0, 3], [2, 2], [1, 0]]))),
    "scatter_add": binary(lambda wg, a, b: wg.scatter_add(a, 1, wg.tensor([[0, 3, 0], [1, 1, 2], [2, 0, 3]]), b[:, :3])),
    "index_select": unary(lambda wg, x: wg.index_select(x, 0, wg.tensor([2, 0, 2]))),
    "masked_fill": unary(lambda wg, x: wg.masked_fill(x, x > 0.5, -1.0) * x),
    "take_along_dim": unary(lambda wg, x: wg.take_along_dim(x, x.argmax(1, keepdim=True), 1)),
    "tensor_index": unary(lambda wg, x: x[wg.tensor([2, 0, 0])] * 3),
    "mask_getitem": unary(lambda wg, x: x[x > 0.2] * 2 + x[:, wg.tensor([True, False, True, True])].sum()),
    "mask_setitem": binary(lambda wg, a, b: _put(a * 1, a > 0, b[a > 0] * 3)),
    "index_put_last_wins": binary(lambda wg, a, b: a.index_put((wg.tensor([2, 0, 2]),), b * 2) +
                                  a.index_put((wg.tensor([1, 1]), wg.tensor([3, 0])), b[0, :2], accumulate=True)),
    "masked_select_scatter": binary(lambda wg, a, b: wg.masked_select(a, b > 0).sum() +
                                    a.masked_scatter(a < 0, b.reshape(-1))),
    "nonzero_where": lambda wg: (wg.cat([wg.nonzero(const(wg, (3, 4), 5) > 0).reshape(-1),
                                         wg.stack(wg.where(const(wg, (70,), 6) > 0.3)).reshape(-1),
                                         wg.count_nonzero(const(wg, (2, 5), 7) > 0, dim=1)]), []),
    # ---------------------------------------------------------------- creation
    "creation": lambda wg: (wg.cat([wg.zeros(3), wg.ones(2), wg.full((2,), 2.5), wg.arange(0.0, 3.0, 0.5),
                                    wg.linspace(-1.0, 1.0, 5), wg.eye(3).reshape(-1)]), []),
    "arange_int": lambda wg: (wg.arange(10) * 3 - 4, []),
    # ---------------------------------------------------------------- nn functional and windows
    "softmax_log_softmax": unary(lambda wg, x: F(wg).softmax(x, 1) + F(wg).log_softmax(x, 0)),
    "layer_norm": binary(lambda wg, a, b: F(wg).layer_norm(a, (4,), b[0], b[1])),
    # the fused kernels' other launches: a workgroup per row (rows of 64 and more), attention's tiles
    "softmax_long_rows": unary(lambda wg, x: F(wg).softmax(x * 3, 1) + F(wg).log_softmax(x, 1), shape=(3, 300)),
    "layer_norm_long_rows": binary(lambda wg, a, b: F(wg).layer_norm(a, (300,), b[0], b[1]), (4, 300), (2, 300)),
    "sdpa_causal": _attention(lambda wg, q, k, v: F(wg).scaled_dot_product_attention(q, k, v, is_causal=True)),
    "sdpa_masks": _attention(lambda wg, q, k, v: F(wg).scaled_dot_product_attention(q, k, v, const(wg, (6, 70), 9))
                             + F(wg).scaled_dot_product_attention(q, k, v, const(wg, (2, 1, 70), 10) > -1.0)),
    "linear": binary(lambda wg, a, b: F(wg).linear(a, b), (5, 4), (3, 4)),
    "conv2d": binary(lambda wg, a, b: F(wg).conv2d(a, b, stride=1, padding=1), (2, 2, 5, 5), (3, 2, 3, 3)),
    "conv2d_stride": binary(lambda wg, a, b: F(wg).conv2d(a, b, stride=2), (1, 1, 7, 6), (2, 1, 2, 2)),
    "conv_transpose2d": binary(lambda wg, a, b: F(wg).conv_transpose2d(a, b, stride=2), (1, 2, 3, 3), (2, 1, 2, 2)),
    "max_pool2d": unary(lambda wg, x: F(wg).max_pool2d(x, 2), shape=(1, 2, 4, 6)),
    "avg_pool2d": unary(lambda wg, x: F(wg).avg_pool2d(x, 2, stride=1), shape=(1, 2, 4, 5)),
    "embedding": unary(lambda wg, x: F(wg).embedding(wg.tensor([[1, 3], [0, 1]]), x), shape=(4, 3)),
    # ---------------------------------------------------------------- losses
    "cross_entropy": unary(lambda wg, x: F(wg).cross_entropy(x, wg.tensor([1, 0, 3]))),
    "mse_loss": binary(lambda wg, a, b: F(wg).mse_loss(a, b)),
    "bce_with_logits": binary(lambda wg, a, b: F(wg).binary_cross_entropy_with_logits(a, (b > 0).float())),
    # ---------------------------------------------------------------- nn modules and optimisers
    "sgd_steps": _mlp_step("SGD"),
    "adam_steps": _mlp_step("Adam"),
}


def weights(shape):
    """The deterministic cotangent of a case's output."""
    return nested([round(0.5 + 0.25 * math.cos(i * 0.77), 4) for i in range(numel(shape))], tuple(shape))


def run_case(wg, name):
    """{"out", "dtype", "shape", "grads"} of case ``name`` on the default backend."""
    out, leaves = CASES[name](wg)
    result = {"out": out.tolist(), "dtype": out.dtype.name, "shape": list(out.shape), "grads": None}
    if out.requires_grad and leaves:
        (out * wg.tensor(weights(out.shape)).reshape(out.shape)).sum().backward()
        result["grads"] = [None if x.grad is None else x.grad.tolist() for x in leaves]
    return result


def expected():
    """Every case's result on ``cpu`` (run on the host; JSON-ready)."""
    import webgrad as wg
    previous = wg.get_backend().name
    wg.set_backend("cpu")
    try:
        return {name: run_case(wg, name) for name in CASES}
    finally:
        wg.set_backend(previous)
