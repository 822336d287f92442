"""The floor for webgrad's design: a minimal closure-based autograd over numpy arrays
(micrograd with arrays instead of scalars). No dtypes, no broadcasting in backward, no
grad mode, no registries: just a closure per op (taking the output's gradient, so that
no reference cycle is made) and a topological sort. An autograd
that dispatches through registries cannot beat this per op; bench_cpu.py measures how
close webgrad gets.

>>> x, w = Value(np.ones(3)), Value(np.full(3, 2.0))
>>> (x * w + x).sum().backward(); x.grad.tolist()
[3.0, 3.0, 3.0]
"""
import numpy as np


class Value:
    __slots__ = ("data", "grad", "prev", "back")

    def __init__(self, data, prev=(), back=None):
        self.data, self.grad, self.prev, self.back = data, None, prev, back

    def _acc(self, g):
        self.grad = g if self.grad is None else self.grad + g

    def _unary(self, data, dfn):
        """A one-input node whose backward multiplies the incoming gradient by ``dfn()``."""
        out = Value(data, (self,))
        out.back = lambda g: self._acc(g * dfn())
        return out

    def __add__(self, o):
        out = Value(self.data + o.data, (self, o))
        out.back = lambda g: (self._acc(g), o._acc(g))
        return out

    def __sub__(self, o):
        out = Value(self.data - o.data, (self, o))
        out.back = lambda g: (self._acc(g), o._acc(-g))
        return out

    def __mul__(self, o):
        out = Value(self.data * o.data, (self, o))
        out.back = lambda g: (self._acc(g * o.data), o._acc(g * self.data))
        return out

    def relu(self): return self._unary(np.maximum(self.data, 0), lambda: self.data > 0)
    def exp(self):
        e = np.exp(self.data)
        return self._unary(e, lambda: e)

    def tanh(self):
        t = np.tanh(self.data)
        return self._unary(t, lambda: 1 - t * t)

    def sum(self):
        out = Value(self.data.sum(), (self,))
        out.back = lambda g: self._acc(np.full_like(self.data, g))
        return out

    def backward(self):
        topo, seen, stack = [], set(), [(self, False)]
        while stack:                       # iterative post-order DFS: children before parents
            v, children_done = stack.pop()
            if children_done:
                topo.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((p, False) for p in v.prev)
        self.grad = np.ones_like(self.data)
        for v in reversed(topo):
            if v.back is not None:
                v.back(v.grad)
