"""Constraints: what a distribution's parameters and values must satisfy (PyTorch's
``torch.distributions.constraints``). ``check(value)`` returns a bool tensor, one entry per
event (an event of ``event_dim`` rightmost dimensions is valid when all its entries are).

>>> import webgrad as wg
>>> from webgrad.distributions import constraints
>>> constraints.positive.check(wg.tensor([1.0, -1.0])).tolist()
[True, False]
>>> constraints.simplex.check(wg.tensor([0.25, 0.75])).item()
True
"""
from __future__ import annotations

from ..dtype_info import finfo
from ..dtypes import to_dtype
from ..linalg import cholesky_ex, eigvalsh
from ..ops.comparison import isclose
from ..ops.creation import full
from ..ops.movement import cat as cat_tensors
from ..ops.movement import stack as stack_tensors

__all__ = ["Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky", "dependent",
           "dependent_property", "greater_than", "greater_than_eq", "half_open_interval", "independent",
           "integer_interval", "interval", "is_dependent", "less_than", "lower_cholesky", "lower_triangular",
           "multinomial", "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
           "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex", "square", "stack",
           "symmetric", "unit_interval"]


class Constraint:
    """A region of values: ``check(value)`` says, per event, whether ``value`` lies in it.

    >>> import webgrad as wg
    >>> from webgrad.distributions.constraints import real
    >>> real.check(wg.tensor([0.0, float("nan")])).tolist()
    [True, False]
    """
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A constraint that depends on other parameters: it cannot be checked on its own."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """Whether ``constraint`` depends on other parameters (so validation skips it).

    >>> is_dependent(dependent), is_dependent(real)
    (True, False)
    """
    return isinstance(constraint, _Dependent)


class dependent_property(property, _Dependent):
    """A property that is also a dependent constraint (for a ``support`` that depends on parameters)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _Element(Constraint):
    """An elementwise constraint given by a test on the value."""

    def __init__(self, name, test, is_discrete=False):
        self._name, self._test, self.is_discrete = name, test, is_discrete

    def check(self, value):
        return self._test(value)

    def __repr__(self):
        return self._name + "()"


class _Bounded(Constraint):
    """A constraint with bounds (numbers or tensors): interval, greater_than, integer_interval, ..."""

    def __init__(self, name, test, is_discrete=False, **bounds):
        self._name, self._test, self.is_discrete, self._bounds = name, test, is_discrete, bounds
        for key, bound in bounds.items():
            setattr(self, key, bound)

    def check(self, value):
        return self._test(value, **self._bounds)

    def __repr__(self):
        return f"{self._name}({', '.join(f'{k}={v}' for k, v in self._bounds.items())})"


class _Independent(Constraint):
    """``base`` with ``reinterpreted_batch_ndims`` more rightmost dimensions taken as the event."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Simplex(Constraint):
    """Non-negative along the rightmost dimension, summing to 1 (within 1e-6)."""
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(Constraint):
    """0s and 1s along the rightmost dimension, summing to 1."""
    is_discrete, event_dim = True, 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Multinomial(Constraint):
    """Non-negative counts along the rightmost dimension summing to at most ``upper_bound`` (PyTorch
    checks this weaker condition too)."""
    is_discrete, event_dim = True, 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


def _all_matrix(test):
    """Per matrix: whether ``test`` holds at every entry."""
    return test.all(-1).all(-1)


class _LowerTriangular(Constraint):
    """Square matrices with zeros above the diagonal."""
    event_dim = 2

    def check(self, value):
        return _all_matrix(value.tril() == value)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        return _all_matrix(value.tril() == value) & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: each row of unit length (within 10 n eps)."""
    event_dim = 2

    def check(self, value):
        tol = finfo(value.dtype).eps * value.shape[-1] * 10
        rows = (value.detach() ** 2).sum(-1).sqrt()
        return lower_cholesky.check(value) & ((rows - 1.0).abs() <= tol).all(-1)


class _Square(Constraint):
    """Square matrices (a shape test: one answer for every matrix of the batch)."""
    event_dim = 2

    def check(self, value):
        return full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=to_dtype("bool"),
                    backend=value._backend)


class _Symmetric(_Square):
    """Symmetric square matrices (entries equal to their transposes' within atol 1e-6)."""

    def check(self, value):
        square = super().check(value)
        if not square.all().item():
            return square
        return _all_matrix(isclose(value, value.mT, atol=1e-6))


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with non-negative eigenvalues."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all().item():
            return symmetric
        return (eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factor."""

    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all().item():
            return symmetric
        return cholesky_ex(value).info == 0


class _Cat(Constraint):
    """Constraints ``cseq`` on consecutive pieces (of ``lengths``) of dimension ``dim``, as ``cat`` joins them."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq, self.dim = list(cseq), dim
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if not all(isinstance(c, Constraint) for c in self.cseq) or len(self.lengths) != len(self.cseq):
            raise ValueError(f"constraints.cat: expected Constraints and one length each, got {self.cseq!r} and "
                             f"lengths {self.lengths}")

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return cat_tensors([c.check(value.narrow(self.dim, s, n)) for c, s, n in zip(self.cseq, starts, self.lengths)],
                    self.dim)


class _Stack(Constraint):
    """Constraints ``cseq`` on the slices of dimension ``dim``, as ``stack`` joins them."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim
        if not all(isinstance(c, Constraint) for c in self.cseq):
            raise ValueError(f"constraints.stack: expected Constraints, got {self.cseq!r}")

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        return stack_tensors([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """The component distribution's constraint, checked for every component of a mixture's value.

    >>> import webgrad as wg
    >>> MixtureSameFamilyConstraint(real).check(wg.zeros(2)).tolist()
    [True, True]
    """

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"MixtureSameFamilyConstraint: base_constraint must be a Constraint, got "
                            f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        if value.ndim < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        kept = value.ndim - self.event_dim
        return result.reshape(tuple(result.shape[:kept]) + (-1,)).all(-1)

    def __repr__(self):
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


def _whole(value):
    return value % 1 == 0


def interval(lower_bound, upper_bound):
    """``lower_bound <= value <= upper_bound``."""
    return _Bounded("Interval", lambda v, lower_bound, upper_bound: (lower_bound <= v) & (v <= upper_bound),
                    lower_bound=lower_bound, upper_bound=upper_bound)


def half_open_interval(lower_bound, upper_bound):
    """``lower_bound <= value < upper_bound``."""
    return _Bounded("HalfOpenInterval", lambda v, lower_bound, upper_bound: (lower_bound <= v) & (v < upper_bound),
                    lower_bound=lower_bound, upper_bound=upper_bound)


def integer_interval(lower_bound, upper_bound):
    """Whole numbers in ``[lower_bound, upper_bound]``."""
    return _Bounded("IntegerInterval",
                    lambda v, lower_bound, upper_bound: _whole(v) & (lower_bound <= v) & (v <= upper_bound),
                    is_discrete=True, lower_bound=lower_bound, upper_bound=upper_bound)


def greater_than(lower_bound):
    """``value > lower_bound``."""
    return _Bounded("GreaterThan", lambda v, lower_bound: lower_bound < v, lower_bound=lower_bound)


def greater_than_eq(lower_bound):
    """``value >= lower_bound``."""
    return _Bounded("GreaterThanEq", lambda v, lower_bound: lower_bound <= v, lower_bound=lower_bound)


def less_than(upper_bound):
    """``value < upper_bound``."""
    return _Bounded("LessThan", lambda v, upper_bound: v < upper_bound, upper_bound=upper_bound)


def independent(base_constraint, reinterpreted_batch_ndims):
    """``base_constraint`` holding over ``reinterpreted_batch_ndims`` more rightmost dimensions."""
    return _Independent(base_constraint, reinterpreted_batch_ndims)


dependent = _Dependent()
real = _Element("Real", lambda v: v == v)                          # not NaN
boolean = _Element("Boolean", lambda v: (v == 0) | (v == 1), is_discrete=True)
nonnegative_integer = _Element("IntegerGreaterThan", lambda v: _whole(v) & (v >= 0), is_discrete=True)
positive_integer = _Element("IntegerGreaterThan", lambda v: _whole(v) & (v >= 1), is_discrete=True)
positive = greater_than(0.0)
nonnegative = greater_than_eq(0.0)
unit_interval = interval(0.0, 1.0)
real_vector = independent(real, 1)
simplex = _Simplex()
one_hot = _OneHot()
multinomial = _Multinomial
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
