"""Adam and AdamW (decoupled weight decay), with AMSGrad."""
from __future__ import annotations

from .. import kernel_names as K
from ..engine import run_kernel
from ..per_step import per_step
from ..ops.binary import inplace, maximum
from ..ops.creation import zeros_like
from ._checks import check_betas, check_flags, check_ranges, to_scalar
from ._updates import lerp, square_average, with_weight_decay, write_state
from .optimizer import Optimizer


class Adam(Optimizer):
    """PyTorch's ``torch.optim.Adam``: moment estimates ``m``, ``v`` with bias correction;
    ``weight_decay`` adds ``wd*p`` to the gradient (L2), or with ``decoupled_weight_decay``
    scales the parameter by ``1 - lr*wd`` first (AdamW); ``amsgrad`` keeps the running max of ``v``.
    Each parameter's update is one ``AdamStep`` kernel call (the parameter and both moments, in
    PyTorch's single-tensor order of operations), or with ``amsgrad`` a few elementwise ops.
    ``foreach``, ``fused`` and ``capturable`` have no effect here; ``differentiable=True`` is refused.

    >>> import webgrad as wg
    >>> w = wg.nn.Parameter(wg.tensor([1.0]))
    >>> opt = Adam([w], lr=0.1)
    >>> (w * 3).sum().backward(); opt.step()
    >>> round(w.item(), 4)
    0.9
    """

    per_step_numbers = True   # its step's Python numbers come from per_step (a compiled step replays them)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        name = type(self).__name__
        check_ranges(name, lr=lr, eps=eps, weight_decay=weight_decay)
        betas = check_betas(name, betas, same_type=True)
        check_flags(name, differentiable=differentiable, fused=fused, foreach=foreach)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    @staticmethod
    def _scalars(group, state):
        """This step's numbers (Python, re-run by a compiled step; see ``per_step``): the step count
        goes up by one; (decoupled decay factor, sqrt of the second bias correction, step size)."""
        lr, (beta1, beta2), wd = to_scalar(group["lr"]), group["betas"], group["weight_decay"]
        state["step"] = step = state["step"] + 1
        return 1 - lr * wd, (1 - beta2 ** step) ** 0.5, lr / (1 - beta1 ** step)

    def _step_param(self, p, group):
        """One kernel (``AdamStep``) updates the parameter and both moments, where the update is Adam's own
        (not a subclass's ``_update``) and without amsgrad; otherwise the composed ``_update``."""
        if group["amsgrad"] or type(self)._update is not Adam._update:
            return super()._step_param(p, group)
        state = self.state[p]
        self._init_state(p, group, state)
        decay, correction2, step_size = per_step(self._scalars, group, state)
        (beta1, beta2), wd = group["betas"], group["weight_decay"]
        decoupled = group["decoupled_weight_decay"]

        def update(param):   # the new parameter; the moments go to the state
            new, m, v = run_kernel(
                K.ADAM_STEP, param, p.grad, state["exp_avg"], state["exp_avg_sq"],
                decay=decay if decoupled and wd != 0 else 1.0, weight_decay=0.0 if decoupled else float(wd),
                beta1=beta1, beta2=beta2, eps=group["eps"], correction2=correction2, step_size=step_size,
                maximize=bool(group["maximize"]))
            write_state(state, "exp_avg", m)
            write_state(state, "exp_avg_sq", v)
            return new
        inplace(p, f"{type(self).__name__}.step", update)

    @staticmethod
    def _init_state(p, group, state):
        if not state:
            state.update(step=0.0, exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_like(p)

    def _update(self, p, grad, group, state):
        """The step as ops (amsgrad, and subclasses that change it): ``AdamStep``'s computation."""
        (beta1, beta2), wd = group["betas"], group["weight_decay"]
        self._init_state(p, group, state)
        decay, correction2, step_size = per_step(self._scalars, group, state)
        if wd != 0 and group["decoupled_weight_decay"]:
            p.mul_(decay)             # the decoupled decay scales the parameter itself (in place)
        else:
            grad = with_weight_decay(grad, p, wd)
        m = write_state(state, "exp_avg", lerp(state["exp_avg"], grad, 1 - beta1))
        v = write_state(state, "exp_avg_sq", square_average(state["exp_avg_sq"], grad, beta2))
        if group["amsgrad"]:
            v = write_state(state, "max_exp_avg_sq", maximum(state["max_exp_avg_sq"], v))
        denom = v.sqrt() / correction2 + group["eps"]
        return m / denom * step_size


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr*wd`` before the Adam step); default wd 0.01.

    >>> import webgrad as wg
    >>> AdamW([wg.nn.Parameter(wg.ones(1))]).defaults["weight_decay"]
    0.01
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


__all__ = ["Adam", "AdamW"]
