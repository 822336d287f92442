"""Flat parameter vectors (PyTorch's ``torch.nn.utils.convert_parameters``)."""
from __future__ import annotations

from ...engine import no_grad
from ...ops.movement import cat


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one vector.

    >>> import webgrad as wg
    >>> parameters_to_vector(wg.nn.Linear(2, 3).parameters()).shape
    webgrad.Size([9])
    """
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters) -> None:
    """Copy consecutive slices of ``vec`` into the parameters (in place).

    >>> import webgrad as wg
    >>> m = wg.nn.Linear(1, 1); vector_to_parameters(wg.tensor([2.0, 3.0]), m.parameters())
    >>> m.weight.item(), m.bias.item()
    (2.0, 3.0)
    """
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p._assign(vec[offset:offset + n].reshape(p.shape), "vector_to_parameters")
            offset += n


__all__ = ["parameters_to_vector", "vector_to_parameters"]
