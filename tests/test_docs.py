"""Every ```python block of every guide in docs/ runs: the blocks of one document in order,
in one namespace, in a fresh interpreter. A line ``print(...)  # -> text`` promises that
``text`` is printed. A block whose first line is ``# requires: gpu`` runs only where a GPU
backend starts, and the test says when it left such blocks out.
"""
import re
import warnings
from pathlib import Path

import pytest

import webgrad as wg

from test_examples import run_script

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md"))
GPU_MARK = "# requires: gpu"
GPU_BACKENDS = ("wgpu", "webgpu")

# Runs in the child: exec each block with a file name that points at the document and line.
RUNNER = """
blocks = {blocks!r}
ns = {{"__name__": "__docs__"}}
for line, code in blocks:
    exec(compile(code, f"{path}, block at line {{line}}", "exec"), ns)
"""


def python_blocks(text: str) -> list:
    """[(first line number of the code, code)] for each ```python block of ``text``."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1))
            for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M)]


def expected_output(code: str) -> list:
    return [m.strip() for m in re.findall(r"print\(.*\)\s*# -> (.+)$", code, flags=re.M)]


def test_python_blocks_are_found():
    blocks = python_blocks("text\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\n```\n")
    assert blocks == [(3, "x = 1\n"), (9, "y = 2\n")]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_guide_code_runs(doc):
    blocks = python_blocks(doc.read_text())
    assert blocks, f"{doc.name} has no python code blocks"
    has_gpu = any(name in GPU_BACKENDS for name in wg.backends())
    run = [(line, code) for line, code in blocks if has_gpu or not code.startswith(GPU_MARK)]
    if len(run) < len(blocks):
        warnings.warn(f"{doc.name}: {len(blocks) - len(run)} block(s) marked '{GPU_MARK}' left out: "
                      f"no GPU backend starts here")
    out = run_script("-c", RUNNER.format(blocks=run, path=doc.relative_to(ROOT)))
    printed = [line.strip() for line in out.splitlines()]
    missing = [e for _, code in run for e in expected_output(code) if e not in printed]
    assert not missing, f"{doc.name} promises output it does not print: {missing}\nit printed:\n{out}"


def test_extending_guide_covers_the_concepts():
    text = (ROOT / "docs" / "extending.md").read_text()
    for heading in ("Custom ops from existing ops", "Custom kernels", "WGSL kernels (wgpu and webgpu)",
                    "Custom gradients", "A faster backward on one backend: a backward kernel",
                    "`custom_grad` and `Function`", "Custom backends", "Profiling"):
        assert f"## {heading}" in text or f"### {heading}" in text, heading
    for place in ("core/ops", "backends/", "core/gradients", "core/registry.py", "core/engine.py"):
        assert place in text, place
    assert len(expected_output(text)) >= 8, "the guide lost its '# -> output' checks"
