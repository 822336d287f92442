"""``torch.autograd.variable``: ``Variable``, kept by PyTorch for old code; it makes a tensor.

>>> from webgrad.autograd.variable import Variable
>>> import webgrad as wg
>>> Variable(wg.ones(2), requires_grad=True).requires_grad
True
"""
from ..variable import Variable

__all__ = ["Variable"]
