"""What a new user meets first: a quiet, quick first tensor (no GPU probe unless a GPU could be
there, no driver noise on stderr), and the README's two commands in a fresh clone."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOISE = "XDG_RUNTIME_DIR"


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """``python -c code`` in a fresh process whose environment lacks XDG_RUNTIME_DIR (as in CI,
    containers and ssh sessions, where Mesa's Vulkan layer complains about it)."""
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "WEBGRAD_BACKEND")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**base, **env})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


PROBE_COUNTER = """
import sys
import webgrad as wg
from webgrad.backends.gpu import host
host.GPU_DEVICE_NODES = {nodes!r}          # the machine as the test describes it
wg.ones(1)
print("backend:", wg.get_backend().name)
print("wgpu imported:", "wgpu" in sys.modules)
"""


def test_first_tensor_loads_no_gpu_runtime_where_no_gpu_is_reachable():
    """With no GPU device node (this machine, CI), choosing the default backend asks wgpu nothing:
    ``import webgrad; wg.ones(1)`` costs what it costs without wgpu installed."""
    out = run_python(PROBE_COUNTER.format(nodes=())).stdout
    assert "backend: cpu" in out and "wgpu imported: False" in out, out


def test_first_tensor_probes_the_adapter_where_a_gpu_could_be(tmp_path, gpu):
    """Where a device node is present the adapter is asked for once (a software adapter keeps
    cpu the default), quietly; the node is simulated with a file the test makes."""
    node = tmp_path / "renderD128"
    node.touch()
    proc = run_python(PROBE_COUNTER.format(nodes=(str(node),)))
    assert "wgpu imported: True" in proc.stdout, proc.stdout
    assert f"backend: {'cpu' if gpu.device.is_cpu else 'wgpu'}" in proc.stdout, proc.stdout
    assert NOISE not in proc.stderr, proc.stderr


def test_no_driver_noise_on_stderr(gpu):
    """Neither the first cpu tensor nor a wgpu tensor (adapter, device, kernels, readback) writes to
    stderr, and XDG_RUNTIME_DIR is unset again afterwards (nothing leaks into child processes)."""
    assert run_python("import webgrad as wg; wg.ones(1)").stderr == ""
    code = ("import os, webgrad as wg\n"
            "x = wg.ones(3, device='wgpu')\n"
            "print((x * 2).sum().item(), wg.backends())\n"
            "print('left set:', 'XDG_RUNTIME_DIR' in os.environ)\n")
    proc = run_python(code)
    assert proc.stderr == "", proc.stderr
    assert "6.0" in proc.stdout and "'wgpu'" in proc.stdout and "left set: False" in proc.stdout, proc.stdout
    assert run_python(code, WEBGRAD_BACKEND="wgpu").stderr == ""


def test_runtime_dir_set_by_the_user_is_left_alone(tmp_path):
    from webgrad.backends.gpu.host import quiet_vulkan_loader
    before = os.environ.get("XDG_RUNTIME_DIR")
    try:
        os.environ["XDG_RUNTIME_DIR"] = str(tmp_path)
        with quiet_vulkan_loader():
            assert os.environ["XDG_RUNTIME_DIR"] == str(tmp_path)
        os.environ.pop("XDG_RUNTIME_DIR")
        with quiet_vulkan_loader():
            private = os.environ["XDG_RUNTIME_DIR"]
            assert os.path.isdir(private) and os.stat(private).st_mode & 0o777 == 0o700
        assert "XDG_RUNTIME_DIR" not in os.environ and not os.path.exists(private)
    finally:
        os.environ.pop("XDG_RUNTIME_DIR", None)
        if before is not None:
            os.environ["XDG_RUNTIME_DIR"] = before


def test_without_wgpu_the_default_is_cpu_even_where_a_gpu_could_be(tmp_path):
    """wgpu-py missing is not an error at the first tensor (it used to raise ModuleNotFoundError
    from the priority probe)."""
    node = tmp_path / "nvidia0"
    node.touch()
    code = PROBE_COUNTER.format(nodes=(str(node),)).replace("import sys\n", "import sys\nsys.modules['wgpu'] = None\n", 1)
    assert "backend: cpu" in run_python(code).stdout
