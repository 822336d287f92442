"""PyTorch's ``torch.func``: function transforms (``grad``, ``vjp``, ``jvp``, ``jacrev``,
``jacfwd``, ``hessian``, ``vmap``, ``linearize``) and modules as functions of their tensors
(``functional_call``, ``stack_module_state``) -- per-sample gradients, model ensembles, MAML.

webgrad has reverse-mode AD only and no batching rules: forward-mode products come from the
double-backward trick, ``jacfwd`` from reverse mode, and ``vmap`` runs the function once per batch
element and stacks the results. The values are PyTorch's (tests/test_func.py compares them);
``vmap``'s speed is a loop's.

>>> import webgrad as wg
>>> from webgrad.func import grad, vmap
>>> per_sample = vmap(grad(lambda w, x: (w * x).sum() ** 2), in_dims=(None, 0))
>>> per_sample(wg.tensor([1.0, 1.0]), wg.tensor([[1.0, 2.0], [0.0, 1.0]])).tolist()
[[6.0, 12.0], [0.0, 2.0]]
"""
from .aliasing import debug_unwrap, functionalize
from .batching import vmap
from .modules import functional_call, replace_all_batch_norm_modules_, stack_module_state
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp

__all__ = ["grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_", "functionalize", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "vjp", "functional_call", "stack_module_state", "debug_unwrap"]
