"""``torch.hub``: importable, as scripts import it at the top; webgrad downloads nothing at run time.

Every function raises NotImplementedError saying what to do instead: fetch the file yourself and
load it with ``webgrad.load`` (webgrad checkpoints, and safetensors files PyTorch wrote).

>>> import webgrad as wg
>>> wg.hub.load_state_dict_from_url("https://example.com/w.pth")
Traceback (most recent call last):
  ...
NotImplementedError: torch.hub.load_state_dict_from_url: webgrad downloads nothing at run time; ...
"""
from __future__ import annotations

from .porting_table import module_getattr as _module_getattr

__all__ = ["load", "load_state_dict_from_url", "download_url_to_file", "list", "help", "get_dir", "set_dir"]

_INSTEAD = ("webgrad downloads nothing at run time; download the file yourself and load it with webgrad.load "
            "(webgrad checkpoints and safetensors files, PyTorch's included)")


def _refuse(name: str):
    def refused(*args, **kwargs):
        raise NotImplementedError(f"torch.hub.{name}: {_INSTEAD}")
    refused.__name__ = refused.__qualname__ = name
    refused.__doc__ = f"Raises NotImplementedError: {_INSTEAD}."
    return refused


load = _refuse("load")
load_state_dict_from_url = _refuse("load_state_dict_from_url")
download_url_to_file = _refuse("download_url_to_file")
list = _refuse("list")   # noqa: A001  (PyTorch's name)
help = _refuse("help")   # noqa: A001
get_dir = _refuse("get_dir")
set_dir = _refuse("set_dir")

__getattr__ = _module_getattr("webgrad.hub")   # a PyTorch name webgrad lacks says why
