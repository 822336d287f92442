"""The examples run as a user runs them (a subprocess) and reach their metric: every example with
``--quick``, and the README's digits MLP at full size (>= 95% test accuracy on every backend)."""
import ast
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


def run(name, *args, env=None, timeout=300) -> subprocess.CompletedProcess:
    """``python examples/<name> args`` on cpu, run to its end; the test fails with its stderr if it fails."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "WEBGRAD_BACKEND": "cpu", "MPLBACKEND": "Agg",
                                                "PYTHONDONTWRITEBYTECODE": "1", **(env or {})})
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def run_example(name, *args, env=None, timeout=300) -> str:
    """stdout of :func:`run`."""
    return run(name, *args, env=env, timeout=timeout).stdout


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


def char_transformer_learns(out):
    uniform = float(re.search(r"uniform loss ([0-9.]+)", out).group(1))
    return metric(out, "final loss") < uniform - 0.7 and re.search(r"^sample: 'The ", out, re.M)


def custom_kernel_trains(out):
    losses = re.findall(r"^(\S+) \(.*\) (first|last) loss: ([0-9.e+-]+)$", out, re.M)
    firsts = {b: float(v) for b, which, v in losses if which == "first"}
    lasts = {b: float(v) for b, which, v in losses if which == "last"}
    return (metric(out, "gradient max error") < 1e-6 and "cpu" in firsts
            and all(lasts[b] < 0.5 * firsts[b] for b in firsts))


QUICK_RESULTS = {    # what a --quick run must reach, beyond running cleanly
    "digits_mlp.py": lambda out: metric(out, "test accuracy") >= 0.9,
    "digits_cnn.py": lambda out: metric(out, "test accuracy") >= 0.85,
    "ddp_digits.py": lambda out: metric(out, "test accuracy") >= 0.9,
    "regression_sgd.py": lambda out: metric(out, "final mse") < 1e-3,
    "char_transformer.py": char_transformer_learns,
    "torch_port.py": lambda out: metric(out, "test accuracy") >= 0.9,
    "custom_kernel.py": custom_kernel_trains,
}
EVERY_EXAMPLE = sorted(p.name for p in EXAMPLES.glob("*.py") if p.name != "common.py")


@pytest.mark.parametrize("name", EVERY_EXAMPLE)
def test_every_example_runs_quick(name, plot_dir):
    """``python examples/NAME --quick`` for every example (those whose docstring says they run in
    under a second take no options and run as they are): it exits cleanly with nothing on stderr
    (no warnings, no driver noise), its first line says how long the default run takes, its plot,
    if it draws one, lands in WEBGRAD_PLOT_DIR (not in the checkout) and is named, and it reaches
    its figure."""
    source = (EXAMPLES / name).read_text()
    takes_quick = '"--quick"' in source
    if not takes_quick:
        assert "under a second" in ast.get_docstring(ast.parse(source)), f"{name} has no --quick"
    before = sorted(EXAMPLES.iterdir())
    proc = run(name, *(["--quick"] if takes_quick else []))
    assert proc.stderr == "", proc.stderr
    if takes_quick:
        says_its_length(proc.stdout, name[:-3])
    if "save_plot(" in source:
        plot = re.search(r"^plot: (.+\.png)$", proc.stdout, re.M)
        assert plot and Path(plot.group(1)).parent == plot_dir, proc.stdout
        assert Path(plot.group(1)).read_bytes().startswith(b"\x89PNG")
    assert sorted(EXAMPLES.iterdir()) == before, "the example wrote into examples/"
    assert QUICK_RESULTS.get(name, bool)(proc.stdout), proc.stdout


def test_torch_port_runs_on_webgrad_and_on_torch(tmp_path):
    """The example's only webgrad-specific lines are its imports: swapped back, it runs on PyTorch."""
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
