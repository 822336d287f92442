"""``torch.onnx``: importable, as scripts import it at the top; webgrad has no ONNX exporter.

``export`` raises, saying what to do instead; ``is_in_onnx_export`` (model code asks it) is False.

>>> import webgrad as wg
>>> wg.onnx.is_in_onnx_export()
False
"""
from __future__ import annotations

from .porting_table import module_getattr as _module_getattr

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """PyTorch's ONNX exporter error type (webgrad raises NotImplementedError from ``export``)."""


def is_in_onnx_export() -> bool:
    """False: no ONNX export ever runs here."""
    return False


def export(model, args=(), f=None, *, kwargs=None, **options):
    """Raises NotImplementedError: webgrad has no ONNX exporter (its weights save as safetensors, which
    PyTorch loads; export to ONNX from PyTorch with the same weights)."""
    raise NotImplementedError("torch.onnx.export: webgrad has no ONNX exporter; save the weights with "
                              "webgrad.save or model.state_dict() as safetensors, load them into the PyTorch "
                              "model and export from PyTorch")

__getattr__ = _module_getattr("webgrad.onnx")   # a PyTorch name webgrad lacks says why
