"""L-BFGS: quasi-Newton steps from a short history of gradient and step differences."""
from __future__ import annotations

import functools

from ..engine import no_grad
from ..ops.creation import zeros_like
from ..ops.movement import cat
from ._checks import check_ranges, to_scalar
from .line_search import strong_wolfe
from .optimizer import Optimizer, _evaluate


class LBFGS(Optimizer):
    """PyTorch's ``torch.optim.LBFGS`` (one parameter group, real parameters): each ``step(closure)``
    runs up to ``max_iter`` iterations, each a two-loop-recursion direction from the last
    ``history_size`` pairs, and a step of ``lr`` (the first ever ``min(1, 1/|g|_1) * lr``) or one
    chosen by ``line_search_fn='strong_wolfe'``; it stops early on ``tolerance_grad`` (max |g|),
    ``tolerance_change`` (loss or step change) or ``max_eval`` closure calls (default
    ``max_iter * 5 // 4``). The closure re-evaluates the loss with gradients and returns it;
    ``step`` returns its first loss. State (``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``al``,
    ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``func_evals``, ``n_iter``) lives under the first
    parameter, as in PyTorch.

    >>> import webgrad as wg
    >>> x = wg.nn.Parameter(wg.tensor([1.5, -0.5]))
    >>> opt = LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((x - wg.tensor([1.0, 2.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in x.tolist()]
    [1.0, 2.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_ranges("LBFGS", lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError(f"LBFGS doesn't support per-parameter options (parameter groups); got "
                             f"{len(self.param_groups)} groups")
        self._params = self.param_groups[0]["params"]

    @no_grad()
    def step(self, closure):
        """Run up to ``max_iter`` iterations; ``closure()`` re-evaluates the loss (with gradients)
        and returns it. Returns the loss before the first iteration."""
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = _evaluate(closure)
        loss, evals = float(orig_loss), 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= group["tolerance_grad"]:
            return orig_loss
        d, t, prev_flat_grad, prev_loss = (state.get(k) for k in ("d", "t", "prev_flat_grad", "prev_loss"))
        for n_iter in range(1, group["max_iter"] + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                state.update(old_dirs=[], old_stps=[], ro=[], H_diag=1)
            else:
                _remember(state, flat_grad - prev_flat_grad, d * t, group["history_size"])
                d = _direction(state, flat_grad, group["history_size"])
            prev_flat_grad, prev_loss = flat_grad, loss
            lr = to_scalar(group["lr"])
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -group["tolerance_change"]:
                break
            loss, flat_grad, t, calls = self._move(closure, group, n_iter, evals, loss, flat_grad, t, d, gtd)
            evals += calls
            state["func_evals"] += calls
            if (n_iter == group["max_iter"] or evals >= group["max_eval"]
                    or flat_grad.abs().max() <= group["tolerance_grad"]
                    or (d * t).abs().max() <= group["tolerance_change"]
                    or abs(loss - prev_loss) < group["tolerance_change"]):
                break
        state.update(d=d, t=t, prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    def _move(self, closure, group, n_iter, evals, loss, flat_grad, t, d, gtd):
        """Step the parameters along ``d``: by ``t``, or by the step a strong-Wolfe search picks.
        Returns the new ``(loss, flat_grad, t, closure calls)``."""
        search = group["line_search_fn"]
        if search is not None:
            if search != "strong_wolfe":
                raise RuntimeError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, got {search!r}")
            start = [p.clone() for p in self._params]
            loss, flat_grad, t, calls = strong_wolfe(functools.partial(self._evaluate_at, closure), start, t, d,
                                                     loss, flat_grad, gtd, max_ls=group["max_eval"] - evals)
            self._add_grad(t, d)
            return loss, flat_grad, t, calls
        self._add_grad(t, d)
        if n_iter == group["max_iter"]:        # the last iteration: PyTorch does not re-evaluate
            return loss, flat_grad, t, 0
        loss = float(_evaluate(closure))
        return loss, self._gather_flat_grad(), t, 1

    def _gather_flat_grad(self):
        return cat([(zeros_like(p) if p.grad is None else p.grad).reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].reshape(p.shape) * step_size)
            offset += n

    def _evaluate_at(self, closure, x, t, d):
        """``(loss, flat_grad)`` at ``x + t*d``, leaving the parameters at ``x``."""
        self._add_grad(t, d)
        loss = float(_evaluate(closure))
        flat_grad = self._gather_flat_grad()
        for p, value in zip(self._params, x):
            p.copy_(value)
        return loss, flat_grad


def _remember(state, y, s, history_size):
    """Add the pair ``(y, s)`` (gradient change, step) when its curvature ``y.s`` is positive enough,
    dropping the oldest beyond ``history_size``, and rescale the initial Hessian guess."""
    ys = y.dot(s)
    if not ys > 1e-10:
        return
    if len(state["old_dirs"]) == history_size:
        for key in ("old_dirs", "old_stps", "ro"):
            state[key].pop(0)
    state["old_dirs"].append(y)
    state["old_stps"].append(s)
    state["ro"].append(1.0 / ys)
    state["H_diag"] = ys / y.dot(y)


def _direction(state, flat_grad, history_size):
    """The two-loop recursion: ``-H g`` for the L-BFGS inverse-Hessian estimate ``H``."""
    dirs, stps, ro = state["old_dirs"], state["old_stps"], state["ro"]
    al = state.setdefault("al", [None] * history_size)
    q = -flat_grad
    for i in reversed(range(len(dirs))):
        al[i] = stps[i].dot(q) * ro[i]
        q = q - dirs[i] * al[i]
    r = q * state["H_diag"]
    for i in range(len(dirs)):
        be_i = dirs[i].dot(r) * ro[i]
        r = r + stps[i] * (al[i] - be_i)
    return r


__all__ = ["LBFGS"]
