"""The seed examples (issue 2) and the README's Python code run, and print the right numbers.

Each seed example runs as a subprocess, as a user would run it, once per backend that starts
here (``WEBGRAD_BACKEND``); its output lines ``label: value`` (value a Python literal) are
collected and checked.
"""
import ast
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from backends_under_test import BACKENDS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_script(*args, timeout=120, env=None):
    """Run ``python *args`` from the repository root (``env`` added to the environment);
    return its stdout, failing with its stderr."""
    proc = subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})})
    assert proc.returncode == 0, f"python {str(args)[:200]} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def printed_values(out: str) -> dict:
    """{label: value} for every output line ``label: <python literal>``."""
    values = {}
    for line in out.splitlines():
        m = re.match(r"^([^:]+): (.+)$", line)
        if m:
            try:
                values[m.group(1)] = ast.literal_eval(m.group(2).strip())
            except (ValueError, SyntaxError):
                pass
    return values


on_every_backend = pytest.mark.parametrize("backend_name", BACKENDS)


def seed(backend_name, script):
    return printed_values(run_script(EXAMPLES / script, env={"WEBGRAD_BACKEND": backend_name}))


@on_every_backend
def test_seed_mean_backward(backend_name):
    v = seed(backend_name, "seed_mean_backward.py")
    assert v["out"] == pytest.approx(27.0)
    assert v["x.grad"] == [[pytest.approx(4.5)] * 2] * 2


@on_every_backend
def test_seed_two_scalars(backend_name):
    v = seed(backend_name, "seed_two_scalars.py")
    assert v["z"] == pytest.approx(-5.0)
    assert v["x.grad"] == pytest.approx(4.0)
    assert v["y.grad"] == pytest.approx(-6.0)


@on_every_backend
def test_seed_vectors(backend_name):
    v = seed(backend_name, "seed_vectors.py")
    assert v["a.grad"] == pytest.approx([5.0, 6.0])
    assert v["b.grad"] == pytest.approx([4.0, 5.0])
    assert v["x.grad"] == pytest.approx([1.0, 1.0, 1.0])
    assert v["y.grad"] == pytest.approx([1.0, 1.0, 1.0])
    assert v["x.grad after a second backward"] == pytest.approx([2.0, 2.0, 2.0])
    assert v["x.grad after zero_()"] == [0.0, 0.0, 0.0]


@on_every_backend
def test_seed_two_layer_net_loss_falls(backend_name):
    v = seed(backend_name, "seed_two_layer_net.py")
    first, last = v["first loss"], v["last loss"]
    assert first > 0.5, f"first loss {first} is suspiciously small: the test would prove nothing"
    assert last < 0.01 * first, f"loss fell only from {first} to {last}"


def readme_python_blocks() -> list:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_readme_python_code_runs():
    """Every ```python block of the README, run in order in one fresh interpreter on the cpu
    backend (the page's dtype and custom-kernel examples are about cpu); each
    ``print(...)  # -> text`` line promises that ``text`` is printed."""
    blocks = readme_python_blocks()
    assert len(blocks) >= 3, "the README lost its code examples"
    script = "\n".join(f"# --- README block {i}\n{b}" for i, b in enumerate(blocks))
    out = run_script("-c", script, env={"WEBGRAD_BACKEND": "cpu"})
    expected = [m.strip() for b in blocks for m in re.findall(r"print\(.*\)\s*# -> (.+)$", b, flags=re.M)]
    assert len(expected) >= 5, "the README's examples lost their '# -> output' checks"
    printed = [line.strip() for line in out.splitlines()]
    missing = [e for e in expected if e not in printed]
    assert not missing, f"README promises output it does not print: {missing}\nit printed:\n{out}"


def test_bench_quick_run_prints_its_table():
    """The README's benchmark command works (a short run; numbers are not checked here)."""
    out = run_script(ROOT / "bench" / "bench_cpu.py", "--quick", timeout=600)
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert rows[0].startswith("| benchmark") and len(rows) >= 5, out
    assert any("chain" in r for r in rows) and any("MLP" in r for r in rows), out
    if platform.libc_ver()[0] == "glibc":   # every contender timed with malloc's thresholds fixed
        assert "malloc thresholds pinned" in out, out


@pytest.mark.parametrize("row", ["chain", "add", "mlp128", "cnn"])
def test_instruction_count_steps_run(row):
    """The steps bench/count_instructions.py counts build and run for each of its contenders, in a
    process that imports no PyTorch, as under valgrind (valgrind itself is not run here)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("count_instructions", ROOT / "bench" / "count_instructions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for contender in module.ROWS[row][3]:
        run_script(ROOT / "bench" / "count_instructions.py", "--child", row, contender, 2,
                   env={"WEBGRAD_BENCH_RSS_CHILD": "webgrad"})


# ---------------------------------------------------------------- what every example tells its user

TRAINING = {"digits_mlp.py": "epochs", "digits_cnn.py": "epochs", "regression_sgd.py": "steps",
            "char_transformer.py": "steps", "torch_port.py": "epochs", "custom_kernel.py": "steps"}
DURATION = re.compile(r"(about \d+ (s|minutes)|under a second)")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.name)
def test_every_example_says_how_long_it_runs(path):
    if path.name == "common.py":
        return
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc and DURATION.search(doc), f"{path.name}'s docstring does not say how long its default run takes"


@pytest.mark.parametrize("name", sorted(TRAINING))
def test_training_examples_have_quick_and_say_their_time_at_start(name):
    assert "--quick" in run_script(EXAMPLES / name, "--help")
    source = (EXAMPLES / name).read_text()
    assert re.search(rf'print\(f"{name[:-3]}: .*{TRAINING[name]}.*\(the default .*about \d+ (s|minutes)', source), \
        f"{name} does not print its run's length when it starts"


def test_char_transformer_says_it_takes_minutes():
    doc = ast.get_docstring(ast.parse((EXAMPLES / "char_transformer.py").read_text()))
    assert re.search(r"about \d+ minutes", doc), "the longest example must warn that it takes minutes"


PROGRESS_LINE = re.compile(r"^train (\d+)/(\d+) \[(\d\d:\d\d)<(\d\d:\d\d), [0-9.]+ (epoch/s|s/epoch)\] loss [0-9.]+")


def test_progress_in_a_log_is_whole_lines_with_rate_and_times(tmp_path):
    """Not a terminal (a pipe, as in CI): about ten plain lines, each with elapsed<remaining and the
    rate, and no carriage returns."""
    out = run_script(EXAMPLES / "digits_mlp.py", "--quick", env={"WEBGRAD_BACKEND": "cpu",
                                                                 "WEBGRAD_PLOT_DIR": str(tmp_path)})
    assert "\r" not in out
    lines = [PROGRESS_LINE.match(line) for line in out.splitlines() if line.startswith("train ")
             and "/" in line.split()[1]]
    assert lines and all(lines), out
    assert [int(m.group(1)) for m in lines] == list(range(1, 9)) and lines[-1].group(4) == "00:00", out


def test_progress_on_a_terminal_is_tqdm(tmp_path):
    """On a terminal with tqdm installed, the bar is tqdm's, redrawn in place."""
    pytest.importorskip("tqdm", reason="tqdm is installed by the README's commands")
    import fcntl
    import pty
    import struct
    import termios
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    env = {**os.environ, "WEBGRAD_BACKEND": "cpu", "WEBGRAD_PLOT_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, str(EXAMPLES / "regression_sgd.py"), "--quick"], cwd=ROOT,
                            stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:          # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    out = b"".join(chunks).decode()
    assert "\r" in out and "100%|" in out and "150/150 [" in out and "step/s" in out, out


def test_plots_need_matplotlib_and_say_so(tmp_path):
    code = ("import sys; sys.path.insert(0, 'examples'); sys.modules['matplotlib'] = None\n"
            "from common import save_plot\n"
            "print('returned:', save_plot([1.0, 0.5], 'x.png'))\n")
    out = run_script("-c", code, env={"WEBGRAD_PLOT_DIR": str(tmp_path)})
    assert "matplotlib is not installed (pip install matplotlib)" in out and "returned: None" in out
    assert not (tmp_path / "x.png").exists()


def test_plots_go_beside_the_examples_or_to_the_plot_dir(tmp_path):
    pytest.importorskip("matplotlib", reason="the README's commands install matplotlib")
    code = ("import sys; sys.path.insert(0, 'examples')\n"
            "from common import save_plot, plot_path\n"
            "print('default:', repr(plot_path('x.png')))\n"
            "save_plot({'loss': [1.0, 0.5, 0.25], 'accuracy': [0.5, 0.7, 0.9]}, 'curves.png', title='t')\n")
    out = run_script("-c", code, env={"WEBGRAD_PLOT_DIR": ""})
    assert printed_values(out)["default"] == str(EXAMPLES / "x.png")
    (EXAMPLES / "curves.png").unlink()
    out = run_script("-c", code, env={"WEBGRAD_PLOT_DIR": str(tmp_path)})
    assert f"plot: {tmp_path / 'curves.png'}" in out
    assert (tmp_path / "curves.png").read_bytes().startswith(b"\x89PNG")


def test_progress_by_step_number_draws_one_bar_per_run():
    """``progress(step, total, text)``, for loops that report by step number: a bar per run."""
    code = ("import sys; sys.path.insert(0, 'examples')\n"
            "from common import progress\n"
            "for run in range(2):\n"
            "    for step in range(1, 4):\n"
            "        progress(step, 3, f'loss {run}.{step}')\n")
    lines = run_script("-c", code).splitlines()
    assert [line.split(" [")[0] for line in lines] == ["train 1/3", "train 2/3", "train 3/3"] * 2, lines
    assert lines[2].endswith("] loss 0.3") and lines[5].endswith("] loss 1.3"), lines
