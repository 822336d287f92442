"""``FractionalMaxPool2d`` and ``FractionalMaxPool3d``: the modules of ``F.fractional_max_pool2d/3d``."""
from __future__ import annotations

from .. import functional as F
from ..functional._utils import ntuple
from ..module import Module


class _FractionalMaxPoolNd(Module):
    dims = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        name, n = type(self).__name__, self.dims
        self.kernel_size = ntuple(kernel_size, n, name, "kernel_size")
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else ntuple(output_size, n, name, "output_size")
        self.output_ratio = None if output_ratio is None else \
            ((output_ratio,) * n if isinstance(output_ratio, (int, float)) else tuple(output_ratio))
        if self.output_size is None and self.output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if self.output_size is not None and self.output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self.dims == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                  _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over [N, C, H, W] (``F.fractional_max_pool2d``).

    >>> import webgrad as wg
    >>> FractionalMaxPool2d(2, output_ratio=0.5)(wg.randn(1, 3, 8, 8)).shape
    webgrad.Size([1, 3, 4, 4])
    """


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over [N, C, D, H, W] (``F.fractional_max_pool3d``).

    >>> import webgrad as wg
    >>> FractionalMaxPool3d(2, output_size=3)(wg.randn(1, 2, 6, 6, 6)).shape
    webgrad.Size([1, 2, 3, 3, 3])
    """

    dims = 3


__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]
