"""What the machine's GPU drivers need from webgrad, found without loading wgpu-native.

* :func:`hardware_gpu_possible`: whether any GPU hardware is reachable here. On Linux a Vulkan
  driver reaches a GPU only through a device node (a DRM render node, NVIDIA's own nodes, WSL's
  ``/dev/dxg``, Android's ``kgsl``/``mali``); with none of them, the only adapter wgpu could give
  is a software one (Mesa's lavapipe), which never outranks ``cpu``. Looking for the nodes costs
  microseconds; asking wgpu-native costs ~0.6 s (it starts every Vulkan driver installed, and
  lavapipe compiles with LLVM). Other systems (macOS's Metal, Windows' D3D12) report True.
* :func:`quiet_vulkan_loader`: Mesa's device-selection layer connects to Wayland while listing
  adapters, and libwayland prints ``error: XDG_RUNTIME_DIR is invalid or not set`` to the
  process's stderr when that variable is unset (as in containers, CI and ssh sessions). Around
  an adapter request it points the variable at a private empty folder, which makes the
  connection fail quietly as it would on a desktop without Wayland, and then restores the
  environment. (Redirecting file descriptor 2 instead would also swallow real driver errors and
  any other thread's output during the call.)
"""
from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager

GPU_DEVICE_NODES = ("/dev/dri/renderD*", "/dev/nvidia[0-9]*", "/dev/dxg", "/dev/kgsl-3d0", "/dev/mali[0-9]*")


def hardware_gpu_possible(nodes=None) -> bool:
    """True unless this is Linux with none of the device ``nodes`` (glob patterns, by default
    ``GPU_DEVICE_NODES``): then only a software adapter could answer.

    >>> hardware_gpu_possible(nodes=()) == (not sys.platform.startswith("linux"))
    True
    """
    if not sys.platform.startswith("linux"):
        return True
    return any(glob.glob(pattern) for pattern in (GPU_DEVICE_NODES if nodes is None else nodes))


@contextmanager
def quiet_vulkan_loader():
    """Inside the block ``XDG_RUNTIME_DIR`` names a private empty folder when it was unset or not
    an absolute path; afterwards the environment is as before and the folder is gone.

    >>> with quiet_vulkan_loader():
    ...     os.path.isabs(os.environ["XDG_RUNTIME_DIR"])
    True
    """
    current = os.environ.get("XDG_RUNTIME_DIR")
    if current and os.path.isabs(current):
        yield
        return
    folder = tempfile.mkdtemp(prefix="webgrad-xdg-")     # mode 0700, as the XDG spec asks
    os.environ["XDG_RUNTIME_DIR"] = folder
    try:
        yield
    finally:
        if current is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = current
        shutil.rmtree(folder, ignore_errors=True)
