"""PyTorch's ``nn.DataParallel`` as it behaves without CUDA devices: the wrapped module runs as is."""
from __future__ import annotations

from ..module import Module


class DataParallel(Module):
    """Wraps ``module`` (as ``self.module``, so state_dict keys start with ``module.``) and calls it
    directly. PyTorch's DataParallel splits a batch across CUDA devices; without CUDA it runs the
    module unchanged and keeps ``device_ids`` empty, which is what webgrad does (its GPU backend is
    one device). Results are the same as PyTorch's; for several processes use DistributedDataParallel.

    >>> import webgrad as wg
    >>> dp = DataParallel(wg.nn.Linear(2, 1))
    >>> dp(wg.ones(3, 2)).shape, list(dp.state_dict())
    (webgrad.Size([3, 1]), ['module.weight', 'module.bias'])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module, self.dim = module, dim
        self.device_ids, self.output_device, self.src_device_obj = [], None, None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


__all__ = ["DataParallel"]
