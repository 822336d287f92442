"""What a new user meets first: a quiet, quick first tensor (no GPU probe unless a GPU could be
there, no driver noise on stderr), and the README's two commands in a fresh clone."""
import os
import re
import shutil
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
wg.set_printoptions(precision=3)
print("wgpu imported before a backend is chosen:", "wgpu" in sys.modules)
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
    assert "wgpu imported before a backend is chosen: False" in proc.stdout, proc.stdout
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
    code = "import sys\nsys.modules['wgpu'] = None\n" + PROBE_COUNTER.format(nodes=(str(node),))
    assert "backend: cpu" in run_python(code).stdout


# ---------------------------------------------------------------- the README's two commands, fresh

def fresh_clone(dest: Path) -> Path:
    """The checkout's files as a commit would hold them (tracked, or new and not ignored), in ``dest``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def base_interpreter() -> str:
    """The interpreter under this test's virtual environment (a system or pyenv Python)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return str(Path(sys.base_prefix) / "bin" / version)


def site_packages_state(python: str) -> tuple:
    """What an install into ``python`` would change: its distributions and its site-packages listing."""
    code = ("import sysconfig, os, importlib.metadata as m\n"
            "d = sysconfig.get_paths()['purelib']\n"
            "print(sorted((x.metadata['Name'], x.version) for x in m.distributions()))\n"
            "print(sorted(os.listdir(d)), os.stat(d).st_mtime_ns)\n")
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout


def run_command(clone: Path, script: str, *args, timeout: int, **env) -> str:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("VIRTUAL_ENV", "PYTHONPATH", "WEBGRAD_PLOT_DIR", "WEBGRAD_SKIP_INSTALL", "WEBGRAD_BACKEND")}
    proc = subprocess.run(["bash", f".ci/{script}", *args], cwd=clone, capture_output=True, text=True, timeout=timeout,
                          env={**clean, "PYTHON": base_interpreter(), **env})
    assert proc.returncode == 0, f".ci/{script} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.mark.slow
def test_the_two_commands_in_a_fresh_clone_use_a_project_venv(tmp_path):
    """``bash .ci/main.sh`` in a fresh clone makes ``.venv`` with venv, installs only the main job's
    packages there, trains and names its plot; ``bash .ci/test.sh`` adds the test pieces to the
    same ``.venv``; re-running either installs nothing; the base interpreter is never written to."""
    base = base_interpreter()
    before = site_packages_state(base)
    clone = fresh_clone(tmp_path / "clone")
    try:
        out = run_command(clone, "main.sh", "--quick", timeout=900)
        assert "creating the virtual environment .venv" in out, out
        venv_python = clone / ".venv" / "bin" / "python"
        prefix = subprocess.run([str(venv_python), "-c", "import sys, webgrad, tqdm, matplotlib, sklearn; "
                                 "print(sys.prefix); print(webgrad.__file__)"],
                                capture_output=True, text=True, check=True).stdout.split()
        assert prefix == [str(clone / ".venv"), str(clone / "core" / "__init__.py")]
        absent = subprocess.run([str(venv_python), "-c", "import torch"], capture_output=True)
        assert absent.returncode != 0, "the main job installed PyTorch: that is the test command's"
        assert re.search(r"^test accuracy: 0\.9", out, re.M), out
        plot = clone / "examples" / "digits_mlp.png"
        assert f"plot: {plot}" in out and plot.read_bytes().startswith(b"\x89PNG")

        again = run_command(clone, "main.sh", "--quick", timeout=300)
        assert "pip install" not in again and "creating" not in again, again

        out = run_command(clone, "test.sh", timeout=1500, WEBGRAD_INSTALL_ONLY="1")
        assert "pip install" in out and "torch==2.13.0" in out, out
        check = "import torch, pytest, playwright; print(torch.__version__)"
        assert subprocess.run([str(venv_python), "-c", check], capture_output=True, text=True,
                              check=True).stdout.startswith("2.13.0")
        again = run_command(clone, "test.sh", timeout=300, WEBGRAD_INSTALL_ONLY="1")
        assert not re.search(r"pip install|pip download|npm ci|apt-get install", again), again
        assert site_packages_state(base) == before, f"an install reached {base}"
    finally:
        shutil.rmtree(clone / ".venv", ignore_errors=True)       # 1.5 GB with PyTorch: not kept in pytest's tmp


def test_ci_scripts_keep_pyprojects_requirements():
    """The scripts check the installed packages against their own lists before calling pip: those
    lists hold pyproject.toml's runtime dependencies (main.sh) and every extra's requirements (test.sh)."""
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env_sh, test_sh = (ROOT / ".ci" / "env.sh").read_text(), (ROOT / ".ci" / "test.sh").read_text()

    def listed(text, name):
        return re.search(rf"^{name}=\((.*)\)", text, re.M).group(1).replace('"', "").split()

    def names(reqs):
        return {re.split(r"[;<>=! ]", r, maxsplit=1)[0].strip() for r in reqs}
    assert names(project["dependencies"]) == set(listed(env_sh, "RUNTIME_PACKAGES"))
    extras = {req for group in project["optional-dependencies"].values() for req in group}
    assert extras == set(listed(test_sh, "TEST_PACKAGES")), "test.sh installs every extra's requirements"
    assert {"scikit-learn", "matplotlib", "tqdm"} == set(listed(env_sh, "MAIN_PACKAGES"))
