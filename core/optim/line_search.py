"""The strong-Wolfe line search LBFGS uses (PyTorch's port of minFunc's ``WolfeLineSearch``):
bracket a step ``t`` along direction ``d``, then zoom with cubic interpolation until the
sufficient-decrease and curvature conditions hold.

Scalars that PyTorch keeps as 0-d tensors (directional derivatives) stay 0-d tensors here too,
so float32 runs round where PyTorch's do; comparisons read them back.
"""
from __future__ import annotations


def cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through ``(x1, f1)``, ``(x2, f2)`` with slopes ``g1``, ``g2``,
    clamped to ``bounds`` (default: between the two points); their midpoint when the cubic has no
    real minimiser.

    >>> cubic_minimum(0.0, 1.0, -2.0, 2.0, 1.0, 2.0)
    1.0
    """
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (low + high) / 2.0
    d2 = d2_square ** 0.5
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


class _Point:
    """A trial step: ``t``, the loss ``f``, the gradient ``g`` and the slope ``gtd`` along ``d``."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Search along ``d`` from the parameters ``x`` (loss ``f``, gradient ``g``, slope ``gtd``),
    starting at step ``t``; ``evaluate(x, t, d)`` returns ``(loss, flat_grad)`` at ``x + t*d``.
    Returns ``(loss, flat_grad, t, evaluations)`` at the step chosen."""
    d_norm = d.abs().max()
    start = _Point(0, f, g, gtd)
    new, evals = _Point(t, *_probe(evaluate, x, t, d)), 1
    prev, ls_iter, bracket, done = start, 0, None, False
    while ls_iter < max_ls:                                  # bracketing phase
        if new.f > (f + c1 * new.t * gtd) or (ls_iter > 1 and new.f >= prev.f):
            bracket = [prev, new]
            break
        if abs(new.gtd) <= -c2 * gtd:
            bracket, done = [new], True
            break
        if new.gtd >= 0:
            bracket = [prev, new]
            break
        step = cubic_minimum(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                             bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev, new = new, _Point(step, *_probe(evaluate, x, step, d))
        evals += 1
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [start, new]
    low, high = _order(bracket)
    insufficient = False
    while not done and ls_iter < max_ls:                     # zoom phase
        if abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change:
            break
        step, insufficient = _zoom_step(bracket, insufficient)
        new = _Point(step, *_probe(evaluate, x, step, d))
        evals += 1
        ls_iter += 1
        if new.f > (f + c1 * step * gtd) or new.f >= bracket[low].f:
            bracket[high] = new
            low, high = _order(bracket)
        else:
            if abs(new.gtd) <= -c2 * gtd:
                done = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals


def _probe(evaluate, x, t, d):
    loss, grad = evaluate(x, t, d)
    return loss, grad, grad.dot(d)


def _order(bracket):
    """(index of the lower loss, index of the other) in a one- or two-point bracket."""
    return (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)


def _zoom_step(bracket, insufficient):
    """The next trial inside the bracket: the cubic's minimiser, moved 10% of the bracket in from
    an end it comes too close to twice in a row (or lands on or outside)."""
    a, b = bracket
    t = cubic_minimum(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
    top, bottom = max(a.t, b.t), min(a.t, b.t)
    eps = 0.1 * (top - bottom)
    if not min(top - t, t - bottom) < eps:
        return t, False
    if not (insufficient or t >= top or t <= bottom):
        return t, True
    return (top - eps if abs(t - top) < abs(t - bottom) else bottom + eps), False


__all__ = ["strong_wolfe", "cubic_minimum"]
