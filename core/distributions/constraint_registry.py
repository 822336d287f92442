"""``biject_to`` and ``transform_to`` (PyTorch's ``torch.distributions.constraint_registry``): from a
constraint to a transform taking unconstrained reals into it, for optimising constrained parameters.
``biject_to(c)`` is bijective (HMC); ``transform_to(c)`` may not be (``simplex`` -> softmax).

>>> import webgrad as wg
>>> from webgrad.distributions import constraints
>>> t = transform_to(constraints.positive)
>>> [round(v, 4) for v in t(wg.tensor([0.0, 1.0])).tolist()]
[1.0, 2.7183]
>>> biject_to(constraints.simplex)(wg.zeros(2)).shape
webgrad.Size([3])
"""
from __future__ import annotations

from numbers import Number

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

# the constraints webgrad makes with functions (PyTorch's are classes): registered by name
_FACTORIES = {constraints.interval: "Interval", constraints.half_open_interval: "HalfOpenInterval",
              constraints.greater_than: "GreaterThan", constraints.greater_than_eq: "GreaterThanEq",
              constraints.less_than: "LessThan", constraints.integer_interval: "IntegerInterval",
              constraints.independent: constraints._Independent}


def _kind(constraint):
    """What a registration is keyed by: a constraint class, or the name of a webgrad constraint kind."""
    if isinstance(constraint, constraints.Constraint):
        return getattr(constraint, "_name", None) or type(constraint)
    if constraint in _FACTORIES:
        return _FACTORIES[constraint]
    if isinstance(constraint, type) and issubclass(constraint, constraints.Constraint):
        return constraint
    raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")


class ConstraintRegistry:
    """A table from constraint kinds to functions making a transform for a constraint of that kind.

    >>> from webgrad.distributions import constraints
    >>> registry = ConstraintRegistry()
    >>> @registry.register(constraints.positive)
    ... def _to_positive(constraint):
    ...     return transforms.ExpTransform()
    >>> registry(constraints.positive)
    ExpTransform()
    """

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Register ``factory(constraint) -> Transform`` for ``constraint``'s kind (a decorator when
        ``factory`` is not given)."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        self._registry[_kind(constraint)] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[_kind(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(*kinds):
    def decorator(factory):
        for kind in kinds:
            biject_to.register(kind, factory)
            transform_to.register(kind, factory)
        return factory
    return decorator


@_both(constraints.real)
def _to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return transforms.IndependentTransform(biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return transforms.IndependentTransform(transform_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@_both(constraints.greater_than, constraints.greater_than_eq)
def _to_greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _to_less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval, constraints.half_open_interval)
def _to_interval(constraint):
    low, high = constraint.lower_bound, constraint.upper_bound
    if isinstance(low, Number) and low == 0 and isinstance(high, Number) and high == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(low, high - low)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
