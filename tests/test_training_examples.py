"""The training examples run as a user runs them (a subprocess) and reach their metric:
the README's digits MLP at full size (>= 95% test accuracy on every backend), the others reduced."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from backends_under_test import BACKENDS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture(autouse=True)
def plot_dir(tmp_path, monkeypatch):
    """The examples save their plots here (WEBGRAD_PLOT_DIR), not into the checkout."""
    monkeypatch.setenv("WEBGRAD_PLOT_DIR", str(tmp_path))
    return tmp_path


def run_example(name, *args, env=None, timeout=300):
    """stdout of ``python examples/<name> args`` on cpu; the test fails with its stderr if it fails."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "WEBGRAD_BACKEND": "cpu", "MPLBACKEND": "Agg",
                                                **(env or {})})
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def says_its_length(out, name):
    """The run's first line names the example, the length of this run and how long the default takes."""
    first = out.splitlines()[0]
    assert re.match(rf"{name}: \d+ (epochs|steps).*\(the default \d+ take about \d+ (s|minutes)", first), first


def metric(out, label):
    m = re.search(rf"^{label}: ([-+0-9.e]+)$", out, re.M)
    assert m, f"no '{label}:' line in the output:\n{out}"
    return float(m.group(1))


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_digits_mlp_reaches_95_percent(backend, plot_dir):
    """The README's main job, on every backend with the same seed (wgpu on lavapipe takes ~20 s)."""
    pytest.importorskip("matplotlib", reason="the main job's plot needs matplotlib (.ci/main.sh installs it)")
    out = run_example("digits_mlp.py", "--backend", backend)
    assert f"backend: '{backend}'" in out and re.search(r"^train 30/30 \[", out, re.M)   # its backend, its progress
    assert metric(out, "test accuracy") >= 0.95
    assert f"plot: {plot_dir / 'digits_mlp.png'}" in out
    assert (plot_dir / "digits_mlp.png").read_bytes().startswith(b"\x89PNG")


def test_digits_mlp_quick():
    out = run_example("digits_mlp.py", "--quick")
    says_its_length(out, "digits_mlp")
    assert metric(out, "test accuracy") >= 0.9


def test_digits_cnn_quick():
    out = run_example("digits_cnn.py", "--quick")
    says_its_length(out, "digits_cnn")
    assert metric(out, "test accuracy") >= 0.85


def test_regression_sgd():
    out = run_example("regression_sgd.py", "--quick")
    says_its_length(out, "regression_sgd")
    assert metric(out, "final mse") < 1e-3


def test_char_transformer_quick():
    out = run_example("char_transformer.py", "--quick")
    says_its_length(out, "char_transformer")
    uniform = float(re.search(r"uniform loss ([0-9.]+)", out).group(1))
    assert metric(out, "final loss") < uniform - 0.7
    assert re.search(r"^sample: 'The ", out, re.M)


def test_torch_port_runs_on_webgrad_and_on_torch(tmp_path):
    """The example's only webgrad-specific lines are its imports: swapped back, it runs on PyTorch."""
    out = run_example("torch_port.py")
    says_its_length(out, "torch_port")
    assert metric(out, "test accuracy") >= 0.9
    pytest.importorskip("torch")
    source = (EXAMPLES / "torch_port.py").read_text()
    swaps = {"import webgrad as torch": "import torch", "import webgrad.nn as nn": "import torch.nn as nn",
             "import webgrad.nn.functional as F": "import torch.nn.functional as F"}
    for line in source.splitlines():
        if "webgrad" in line and line.startswith(("import", "from")):
            assert line in swaps, f"torch_port.py changes more than its imports: {line!r}"
    for ours, theirs in swaps.items():
        source = source.replace(ours + "\n", theirs + "\n")
    assert "webgrad" not in source.split('"""', 2)[2]
    script = tmp_path / "torch_port_on_torch.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert metric(proc.stdout, "test accuracy") >= 0.9
