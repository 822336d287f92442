"""PyTorch's top-level names that are webgrad's ops under other signatures, made from three tables by
one mechanism (a signature, checked as Python checks a call, and an adapter):

* ``COPIES``: the ``*_copy`` forms of the view ops (``view_copy``, ``permute_copy``, ``split_copy`` ...),
  the view's values in new storage (a differentiable copy of each output);
* ``IN_PLACE``: ``torch.abs_(x)``, ``torch.relu_(x)``, ``torch.fill_(x, v)`` ...: ``x.abs_()`` under the
  function's name (``input`` for ``self``), for the in-place methods webgrad has;
* ``FUNCTIONAL``: ``torch.batch_norm``, ``torch.kl_div``, ``torch.max_pool2d`` ...: ``nn.functional``'s
  under the positional signatures of PyTorch's ATen functions (``reduction`` an int there: 0 none,
  1 mean, 2 sum, and 0 when not given, as torch 2.13 runs them (its type stubs say 1); ``embedding(weight,
  indices)``; ``dropout(input, p, train)``; the in-place ones through ``inplace``, which reads an alias).

>>> import webgrad as wg
>>> x = wg.arange(6.0).view(2, 3)
>>> y = wg.transpose_copy(x, 0, 1); _ = y.zero_(); x.tolist()[0]
[0.0, 1.0, 2.0]
>>> wg.kl_div(wg.zeros(2), wg.full((2,), 0.5), 2).item() < 0
True
"""
from __future__ import annotations

import ast
import inspect
from types import SimpleNamespace

from ..tensor import Tensor
from . import movement as M
from .binary import inplace
from .common import check_tensor
from .restriding import as_strided, unfold


def _parameters(spec: str) -> list:
    """``inspect.Parameter`` objects from ``"input, dim=0, *, keepdim=False"``."""
    params, kind = [], inspect.Parameter.POSITIONAL_OR_KEYWORD
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        if item == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        name, _, default = item.partition("=")
        params.append(inspect.Parameter(name, kind, default=ast.literal_eval(default) if default else
                                        inspect.Parameter.empty))
    return params


def _function(name: str, signature: inspect.Signature, adapter, doc: str):
    """A function ``name`` taking ``signature`` (unknown or missing arguments: Python's TypeError) that
    calls ``adapter`` with the bound arguments as attributes."""
    names = set(signature.parameters)

    def function(*args, **kwargs):
        unknown = sorted(set(kwargs) - names)
        if unknown:
            raise TypeError(f"{name}() got an unexpected keyword argument {unknown[0]!r}")
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}(): {e}") from None
        bound.apply_defaults()
        return adapter(SimpleNamespace(**bound.arguments))
    function.__name__ = function.__qualname__ = name
    function.__signature__, function.__doc__ = signature, doc
    return function


# ---------------------------------------------------------------- *_copy: the views, copied


def _slice_copy(a):
    d = M.normalize_axis(a.dim, a.input.ndim, "slice_copy")
    if a.step <= 0:
        raise RuntimeError(f"slice_copy: slice step must be positive, got {a.step}")
    return a.input[(slice(None),) * d + (slice(a.start, a.end, a.step),)]


def _squeeze(a):
    return M.squeeze(a.input) if a.dim is None else M.squeeze(a.input, a.dim)


COPIES = {   # name: (PyTorch's parameters, the view)
    "view_copy": ("input, size", lambda a: M.view(a.input, a.size)),
    "permute_copy": ("input, dims", lambda a: M.permute(a.input, a.dims)),
    "transpose_copy": ("input, dim0, dim1", lambda a: M.transpose(a.input, a.dim0, a.dim1)),
    "t_copy": ("input", lambda a: M.t(a.input)),
    "expand_copy": ("input, size, *, implicit=False", lambda a: M.expand(a.input, a.size)),
    "squeeze_copy": ("input, dim=None", _squeeze),
    "unsqueeze_copy": ("input, dim", lambda a: M.unsqueeze(a.input, a.dim)),
    "select_copy": ("input, dim, index", lambda a: M.select(a.input, a.dim, a.index)),
    "slice_copy": ("input, dim=0, start=None, end=None, step=1", _slice_copy),
    "split_copy": ("input, split_size, dim=0", lambda a: M.split(a.input, a.split_size, a.dim)),
    "split_with_sizes_copy": ("input, split_sizes, dim=0", lambda a: M.split(a.input, list(a.split_sizes), a.dim)),
    "unbind_copy": ("input, dim=0", lambda a: M.unbind(a.input, a.dim)),
    "diagonal_copy": ("input, offset=0, dim1=0, dim2=1",
                      lambda a: M.diagonal(a.input, a.offset, a.dim1, a.dim2)),
    "detach_copy": ("input", lambda a: check_tensor("detach_copy", a.input).detach()),
    "narrow_copy": ("input, dim, start, length", lambda a: M.narrow(a.input, a.dim, a.start, a.length)),
    "alias_copy": ("input", lambda a: check_tensor("alias_copy", a.input)),
    "as_strided_copy": ("input, size, stride, storage_offset=None",
                        lambda a: as_strided(a.input, a.size, a.stride, a.storage_offset)),
    "unfold_copy": ("input, dimension, size, step", lambda a: unfold(a.input, a.dimension, a.size, a.step)),
}


def _copied(view):
    def copy(a):
        out = view(a)
        return tuple(M.clone(t) for t in out) if isinstance(out, tuple) else M.clone(out)
    return copy


def _copy_function(name, spec, view):
    doc = (f"``{name[:-5]}``'s result in new storage (PyTorch's ``torch.{name}``): a copy, so changing it leaves "
           f"the input alone.")
    return _function(name, inspect.Signature(_parameters(spec)), _copied(view), doc)


# ---------------------------------------------------------------- torch.abs_(x) and the like: x.abs_()


IN_PLACE = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
            "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
            "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
            "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
            "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_",
            "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")


def _in_place_function(name):
    method = getattr(Tensor, name)
    params = list(inspect.signature(method).parameters.values())[1:]
    signature = inspect.Signature([inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + params)

    def adapter(a):
        args = vars(a)
        x = check_tensor(name, args.pop("input"))
        positional = [args.pop(p.name) for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = [p.name for p in params if p.kind is p.VAR_POSITIONAL]
        return method(x, *positional, *(args.pop(star[0]) if star else ()), **args)
    return _function(name, signature, adapter, f"``input.{name}()`` (PyTorch's ``torch.{name}``): in place.")


def fill(input, value) -> Tensor:
    """A tensor of ``input``'s shape and dtype filled with ``value`` (differentiable: no gradient reaches
    ``input``), as ``torch.fill``.

    >>> import webgrad as wg
    >>> wg.fill(wg.zeros(2), 3).tolist()
    [3.0, 3.0]
    """
    return M.clone(check_tensor("fill", input)).fill_(value)


# ---------------------------------------------------------------- nn.functional under ATen's signatures


def _reduction(op, value):
    names = {0: "none", 1: "mean", 2: "sum"}
    if isinstance(value, bool) or value not in names:
        raise TypeError(f"{op}(): argument 'reduction' must be an int (0: none, 1: mean, 2: sum), got {value!r}")
    return names[value]


def _f(name):
    from .. import nn
    return getattr(nn.functional, name)


def _feature_dropout(input, p, train):
    """Dropout of whole channels (dim 1) of [N, C, ...], as ``torch.feature_dropout``."""
    from ..nn.functional.dropout import _channel_dropout
    check_tensor("feature_dropout", input)
    if input.ndim < 2:
        raise RuntimeError(f"feature_dropout: Feature dropout requires at least 2 dimensions in the input, got "
                           f"shape {tuple(input.shape)}")
    return _channel_dropout("feature_dropout", input, p, train, False, input.ndim - 2)


def _embedding_renorm_(a):
    from ..nn.functional.sparse import _renorm_rows_
    check_tensor("embedding_renorm_", a.input)
    _renorm_rows_(a.input, M.reshape(a.indices, -1), a.max_norm, a.norm_type)
    return a.input


def _conv_tbc(a):
    """A 1-d convolution over [time, batch, channels] with a [kernel, in, out] weight."""
    x = M.permute(check_tensor("conv_tbc", a.input), (1, 2, 0))
    w = M.permute(check_tensor("conv_tbc", a.weight, "weight"), (2, 1, 0))
    return M.permute(_f("conv1d")(x, w, a.bias, 1, a.pad), (2, 0, 1))


def _convolution(a):
    """``nn.functional``'s convolution (transposed or not) of the rank the weight has."""
    n = check_tensor("convolution", a.weight, "weight").ndim - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a weight of 3, 4 or 5 dims, got shape {tuple(a.weight.shape)}")
    if a.transposed:
        return _f(f"conv_transpose{n}d")(a.input, a.weight, a.bias, a.stride, a.padding, a.output_padding, a.groups,
                                         a.dilation)
    return _f(f"conv{n}d")(a.input, a.weight, a.bias, a.stride, a.padding, a.dilation, a.groups)


_REDUCED = {   # the losses: (PyTorch's parameters, F's name, the arguments passed on by position)
    "kl_div": ("input, target, reduction=0, *, log_target=False", "kl_div", ("input", "target")),
    "margin_ranking_loss": ("input1, input2, target, margin=0.0, reduction=0", "margin_ranking_loss",
                            ("input1", "input2", "target", "margin")),
    "triplet_margin_loss": ("anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=0",
                            "triplet_margin_loss", ("anchor", "positive", "negative", "margin", "p", "eps", "swap")),
    "hinge_embedding_loss": ("input, target, margin=1.0, reduction=0", "hinge_embedding_loss",
                             ("input", "target", "margin")),
    "cosine_embedding_loss": ("input1, input2, target, margin=0.0, reduction=0", "cosine_embedding_loss",
                              ("input1", "input2", "target", "margin")),
    "poisson_nll_loss": ("input, target, log_input, full, eps, reduction", "poisson_nll_loss",
                         ("input", "target", "log_input", "full")),
    "binary_cross_entropy_with_logits": ("input, target, weight=None, pos_weight=None, reduction=0",
                                         "binary_cross_entropy_with_logits", ("input", "target", "weight")),
}


def _loss(name, f_name, passed):
    def run(a):
        args = vars(a)
        reduction = _reduction(name, args.pop("reduction"))
        extra = {k: v for k, v in args.items() if k not in passed}
        return _f(f_name)(*(args[k] for k in passed), reduction=reduction, **extra)
    return run


FUNCTIONAL = {   # name: (PyTorch's parameters, the call into nn.functional)
    "batch_norm": ("input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled",
                   lambda a: _f("batch_norm")(a.input, a.running_mean, a.running_var, a.weight, a.bias, a.training,
                                              a.momentum, a.eps)),
    "instance_norm": ("input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, "
                      "cudnn_enabled",
                      lambda a: _f("instance_norm")(a.input, a.running_mean, a.running_var, a.weight, a.bias,
                                                    a.use_input_stats, a.momentum, a.eps)),
    "layer_norm": ("input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True",
                   lambda a: _f("layer_norm")(a.input, a.normalized_shape, a.weight, a.bias, a.eps)),
    "embedding": ("weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False",
                  lambda a: _f("embedding")(a.indices, a.weight, None if a.padding_idx == -1 else a.padding_idx,
                                            scale_grad_by_freq=a.scale_grad_by_freq, sparse=a.sparse)),
    "conv_transpose1d": ("input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
                         lambda a: _f("conv_transpose1d")(*vars(a).values())),
    "avg_pool1d": ("input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True",
                   lambda a: _f("avg_pool1d")(a.input, a.kernel_size, a.stride or None, a.padding, a.ceil_mode,
                                              a.count_include_pad)),
    **{f"max_pool{n}d": ("input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False",
                         (lambda f: lambda a: _f(f)(a.input, a.kernel_size, a.stride or None, a.padding, a.dilation,
                                                    a.ceil_mode))(f"max_pool{n}d")) for n in (1, 2, 3)},
    "adaptive_avg_pool1d": ("input, output_size", lambda a: _f("adaptive_avg_pool1d")(a.input, a.output_size)),
    "adaptive_max_pool1d": ("input, output_size",
                            lambda a: _f("adaptive_max_pool1d")(a.input, a.output_size, return_indices=True)),
    "pixel_shuffle": ("input, upscale_factor", lambda a: _f("pixel_shuffle")(a.input, a.upscale_factor)),
    "pixel_unshuffle": ("input, downscale_factor", lambda a: _f("pixel_unshuffle")(a.input, a.downscale_factor)),
    "channel_shuffle": ("input, groups", lambda a: _f("channel_shuffle")(a.input, a.groups)),
    "celu": ("input, alpha=1.0", lambda a: _f("celu")(a.input, a.alpha)),
    "celu_": ("input, alpha=1.0", lambda a: inplace(a.input, "celu_", _f("celu"), a.alpha)),
    "selu": ("input", lambda a: _f("selu")(a.input)),
    "selu_": ("input", lambda a: inplace(a.input, "selu_", _f("selu"))),
    "rrelu": ("input, lower=0.125, upper=0.3333333333333333, training=False, generator=None",
              lambda a: _f("rrelu")(a.input, a.lower, a.upper, a.training)),
    "rrelu_": ("input, lower=0.125, upper=0.3333333333333333, training=False, generator=None",
               lambda a: inplace(a.input, "rrelu_", _f("rrelu"), a.lower, a.upper, a.training)),
    "threshold": ("input, threshold, value", lambda a: _f("threshold")(a.input, a.threshold, a.value)),
    "threshold_": ("input, threshold, value",
                   lambda a: inplace(a.input, "threshold_", _f("threshold"), a.threshold, a.value)),
    "hardshrink": ("input, lambd=0.5", lambda a: _f("hardshrink")(a.input, a.lambd)),
    "prelu": ("input, weight", lambda a: _f("prelu")(a.input, a.weight)),
    "cosine_similarity": ("x1, x2, dim=1, eps=1e-08", lambda a: _f("cosine_similarity")(a.x1, a.x2, a.dim, a.eps)),
    "pairwise_distance": ("x1, x2, p=2, eps=1e-06, keepdim=False",
                          lambda a: _f("pairwise_distance")(a.x1, a.x2, a.p, a.eps, a.keepdim)),
    "constant_pad_nd": ("input, pad, value=0", lambda a: M.pad(a.input, tuple(a.pad), "constant", a.value)),
    "conv3d": ("input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
               lambda a: _f("conv3d")(*vars(a).values())),
    "conv_transpose3d": ("input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
                         lambda a: _f("conv_transpose3d")(*vars(a).values())),
    "dropout": ("input, p, train", lambda a: _f("dropout")(a.input, a.p, a.train)),
    "dropout_": ("input, p, train", lambda a: inplace(a.input, "dropout_", _f("dropout"), a.p, a.train)),
    "alpha_dropout": ("input, p, train", lambda a: _f("alpha_dropout")(a.input, a.p, a.train)),
    "alpha_dropout_": ("input, p, train", lambda a: inplace(a.input, "alpha_dropout_", _f("alpha_dropout"), a.p,
                                                            a.train)),
    "feature_alpha_dropout": ("input, p, train", lambda a: _f("feature_alpha_dropout")(a.input, a.p, a.train)),
    "feature_alpha_dropout_": ("input, p, train",
                               lambda a: inplace(a.input, "feature_alpha_dropout_", _f("feature_alpha_dropout"), a.p,
                                                 a.train)),
    "feature_dropout": ("input, p, train", lambda a: _feature_dropout(a.input, a.p, a.train)),
    "feature_dropout_": ("input, p, train", lambda a: inplace(a.input, "feature_dropout_", _feature_dropout, a.p,
                                                              a.train)),
    "max_pool1d_with_indices": ("input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False",
                                lambda a: _f("max_pool1d")(a.input, a.kernel_size, a.stride or None, a.padding,
                                                           a.dilation, a.ceil_mode, return_indices=True)),
    "rms_norm": ("input, normalized_shape, weight=None, eps=None",
                 lambda a: _f("rms_norm")(a.input, a.normalized_shape, a.weight, a.eps)),
    "conv_tbc": ("input, weight, bias, pad=0", _conv_tbc),
    "convolution": ("input, weight, bias, stride, padding, dilation, transposed, output_padding, groups",
                    _convolution),
    "embedding_renorm_": ("input, indices, max_norm, norm_type", _embedding_renorm_),
    **{name: (spec, _loss(name, f_name, passed)) for name, (spec, f_name, passed) in _REDUCED.items()},
}


# names whose nn.functional op may not exist yet: made (by ``with_functional``) only once it does
WHEN_PRESENT = {
    "group_norm": ("input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True",
                   lambda a: _f("group_norm")(a.input, a.num_groups, a.weight, a.bias, a.eps)),
    "bilinear": ("input1, input2, weight, bias=None",
                 lambda a: _f("bilinear")(a.input1, a.input2, a.weight, a.bias)),
    "pdist": ("input, p=2", lambda a: _f("pdist")(a.input, a.p)),
}


def with_functional(functional) -> dict:
    """The ``WHEN_PRESENT`` names whose op ``functional`` (``webgrad.nn.functional``) has, made."""
    return {name: _functional(name, spec, call) for name, (spec, call) in WHEN_PRESENT.items()
            if hasattr(functional, name)}


def _functional(name, spec, call):
    doc = f"PyTorch's ``torch.{name}``: ``nn.functional``'s op under ATen's positional signature."
    return _function(name, inspect.Signature(_parameters(spec)), call, doc)


_MADE = {
    **{name: _copy_function(name, spec, view) for name, (spec, view) in COPIES.items()},
    **{name: _in_place_function(name) for name in IN_PLACE if hasattr(Tensor, name)},
    **{name: _functional(name, spec, call) for name, (spec, call) in FUNCTIONAL.items()},
}
globals().update(_MADE)

METHODS = {name: _MADE[name] for name in ("narrow_copy", "hardshrink", "prelu")}

__all__ = list(_MADE) + ["fill"]
