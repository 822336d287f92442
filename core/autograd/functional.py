"""PyTorch's ``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp``, ``vhp`` of a function of a tensor or a tuple
of tensors, with PyTorch's arguments, return structures and strict-mode errors.

``jvp`` and ``hvp`` use the double-backward trick, as PyTorch's own do. ``jacobian`` computes
one reverse pass per output element; ``vectorize=True`` (PyTorch batches those passes with vmap)
and ``strategy='forward-mode'`` (PyTorch's forward AD, which it allows only with
``vectorize=True``) give the same values here, computed the same way.
"""
from __future__ import annotations

from . import grad as _grad
from ..engine import _mode, enable_grad, set_grad_enabled
from ..tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]
_STRATEGIES = ("forward-mode", "reverse-mode")


def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple:
    """(whether ``inp`` was a tuple, ``inp`` as a tuple of tensors)."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """The inputs as the function sees them: joined to the outer graph (a clone: webgrad's
    same-shape view of a leaf is the leaf itself) when ``create_graph`` and they require grad,
    else fresh leaves (requiring grad when ``need_graph``)."""
    return tuple(inp.clone() if create_graph and inp.requires_grad else inp.detach().requires_grad_(need_graph)
                 for inp in inputs)


def _grad_postprocess(inputs, create_graph: bool) -> tuple:
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {tuple(el_other.shape)} but got "
                               f"{tuple(el_v.shape)}.")


_NO_GRAD = {
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. This "
               "is not allowed in strict mode. You should ensure that your function is thrice differentiable and that "
               "the hessian depends on the inputs.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed in "
               "a differentiable manner from the input when running in strict mode.",
}


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               f"allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_NO_GRAD[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """``autograd.grad`` of the outputs that require grad (None for every input if none does)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


_UNUSED = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    res = ()
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_UNUSED[stage].format(i=i))
            g = refs[i].new_zeros(tuple(refs[i].shape))
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               f"allowed in strict mode when create_graph=True.")
        res += (g,)
    return res


def _prepare_v(v, against, is_tuple, create_graph, fn_name, what):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, against, is_tuple)
    elif len(against) != 1 or against[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor with a single element.")
    return v


def _inputs(inputs, create_graph: bool, fn_name: str) -> tuple:
    """(whether ``inputs`` is a tuple, the inputs as the function sees them)."""
    is_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    return is_tuple, _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)


def _results(outputs, is_outputs_tuple: bool, result, is_result_tuple: bool, create_graph: bool) -> tuple:
    """(the function's outputs, the computed products) as the caller returns them."""
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_result_tuple))


def _last_pass(outs, wrt, v, refs, strict, create_graph, stage) -> tuple:
    """The final backward pass of ``vjp``/``jvp``/``vhp``/``hvp`` (recorded only with
    ``create_graph``), zeros for what it does not reach."""
    with set_grad_enabled(True if create_graph else _mode.enabled):
        grad_res = _autograd_grad(outs, wrt, v, create_graph=create_graph)
        return _fill_in_zeros(grad_res, refs, strict, create_graph, stage)


def _call(func, inputs, fn_name, strict):
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_tuple, outputs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)`` (PyTorch's ``torch.autograd.functional.vjp``): tensors or tuples,
    as the function's outputs and the inputs are.

    >>> import webgrad as wg
    >>> out, g = wg.autograd.functional.vjp(lambda x: x ** 2, wg.tensor([1.0, 2.0]), wg.ones(2))
    >>> g.tolist()
    [2.0, 4.0]
    """
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, create_graph, "vjp")
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp", "user-provided function returns")
    result = _last_pass(outputs, inputs, v, inputs, strict, create_graph, "back")
    return _results(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` (PyTorch's ``torch.autograd.functional.jvp``), by the
    double-backward trick as PyTorch computes it.

    >>> import webgrad as wg
    >>> out, jv = wg.autograd.functional.jvp(lambda x: x ** 2, wg.tensor([1.0, 2.0]), wg.ones(2))
    >>> jv.tolist()
    [2.0, 4.0]
    """
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, create_graph, "jvp")
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", "input to the user-provided function is")
        is_outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        grad_outputs = tuple(out.new_zeros(tuple(out.shape)).requires_grad_() for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    result = _last_pass(grad_inputs, grad_outputs, v, outputs, strict, create_graph, "back_trick")
    return _results(outputs, is_outputs_tuple, result, is_outputs_tuple, create_graph)


def _check_strategy(strategy, create_graph, strict, vectorize) -> None:
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                               'supported together (yet). Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                      "implemented for `vectorize=True`.")
    elif vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                           "together. Please either set `strict=False` or `vectorize=False`.")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (PyTorch's ``torch.autograd.functional.jacobian``):
    one tensor of shape ``out.shape + in.shape`` per (output, input) pair, nested as tuples where
    the outputs or inputs are tuples. Computed by one reverse pass per output element;
    ``vectorize`` (PyTorch's vmap over those passes) and ``strategy='forward-mode'`` (which PyTorch
    allows only with ``vectorize=True``) are accepted with PyTorch's checks and give the same values.

    >>> import webgrad as wg
    >>> wg.autograd.functional.jacobian(lambda x: x ** 2, wg.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    from ..ops.movement import stack
    _check_strategy(strategy, create_graph, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _inputs(inputs, create_graph, "jacobian")
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        jac = ()
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.numel()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        g = inp.new_zeros(tuple(inp.shape))
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           f"This is not allowed in strict mode when create_graph=True.")
                    row.append(g)
            jac += (tuple(stack(row).reshape(tuple(out.shape) + tuple(inp.shape)) if row else
                          inp.new_zeros(tuple(out.shape) + tuple(inp.shape)) for row, inp in zip(rows, inputs)),)
        jac = _grad_postprocess(jac, create_graph)
    if strategy == "forward-mode":    # PyTorch's forward-mode path nests lists where reverse mode has tuples
        jac = [list(row) for row in jac]
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning one element (PyTorch's
    ``torch.autograd.functional.hessian``): the Jacobian of its Jacobian, a tuple of tuples for a
    tuple of inputs. ``vectorize`` and ``outer_jacobian_strategy`` as ``jacobian``'s.

    >>> import webgrad as wg
    >>> wg.autograd.functional.hessian(lambda x: (x ** 3).sum(), wg.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _hessian_setup(func, inputs, v, create_graph, strict, fn_name):
    """(is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac) shared by ``vhp`` and ``hvp``."""
    is_inputs_tuple, inputs = _inputs(inputs, create_graph, fn_name)
    v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, fn_name, "input to the user-provided function is")
    is_outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a function returning one element (PyTorch's
    ``torch.autograd.functional.vhp``).

    >>> import webgrad as wg
    >>> out, r = wg.autograd.functional.vhp(lambda x: (x ** 3).sum(), wg.tensor([1.0, 2.0]), wg.ones(2))
    >>> r.tolist()
    [6.0, 12.0]
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _hessian_setup(func, inputs, v, create_graph,
                                                                                    strict, "vhp")
    result = _last_pass(jac, inputs, v, inputs, strict, create_graph, "double_back")
    return _results(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a function returning one element (PyTorch's
    ``torch.autograd.functional.hvp``), by the double-backward trick as PyTorch computes it.

    >>> import webgrad as wg
    >>> out, r = wg.autograd.functional.hvp(lambda x: (x ** 3).sum(), wg.tensor([1.0, 2.0]), wg.ones(2))
    >>> r.tolist()
    [6.0, 12.0]
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _hessian_setup(func, inputs, v, create_graph,
                                                                                    strict, "hvp")
        grad_jac = tuple(inp.new_zeros(tuple(inp.shape)).requires_grad_() for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    result = _last_pass(double_back, grad_jac, v, inputs, strict, create_graph, "double_back_trick")
    return _results(outputs, is_outputs_tuple, result, is_inputs_tuple, create_graph)
