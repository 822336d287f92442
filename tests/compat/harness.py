"""Run a PyTorch program as written and as ported to webgrad by rewriting its import lines only.

The port is a text rewrite of the import statements that name ``torch`` (found with ``ast``):

    import torch                          -> import webgrad as torch
    import torch.nn as nn                 -> import webgrad.nn as nn
    import torch.utils.data               -> import webgrad.utils.data, webgrad as torch
    from torch.utils.data import X        -> from webgrad.utils.data import X

and ``check_imports_only`` proves that no other line changed. ``load(program, "torch")`` and
``load(program, "webgrad")`` give the two modules; their ``main(...)`` return what the test compares.

The protocol every program in this folder follows: ``main(steps, device=None, init=None, ...)``
returns a dict with ``"losses"`` (one float per step) and ``"init"`` (a dict of the library's
tensors: the initial weights, a ``state_dict`` for models); when ``init`` is given (the other
run's initial weights converted with ``as_init``), the program starts from it. Data and noise
are drawn with numpy from fixed seeds inside the program, so both runs see the same.

>>> ported = port_source("import torch\\nfrom torch import nn\\nx = torch.ones(2)\\n")
>>> print(ported, end="")
import webgrad as torch
from webgrad import nn
x = torch.ones(2)
"""
from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _torch_imports(tree):
    """The import statements of ``tree`` whose module is torch or a submodule of it."""
    def names_torch(node):
        if isinstance(node, ast.Import):
            return any(a.name == "torch" or a.name.startswith("torch.") for a in node.names)
        return isinstance(node, ast.ImportFrom) and node.level == 0 and (
            node.module == "torch" or node.module.startswith("torch."))
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)) and names_torch(node)]


def _port_alias(alias):
    """One name of an ``import`` statement, ported: the same local name, bound to webgrad's module."""
    if alias.name.split(".")[0] != "torch":
        return alias.name + (f" as {alias.asname}" if alias.asname else "")
    ours = "webgrad" + alias.name[len("torch"):]
    if alias.asname:
        return f"{ours} as {alias.asname}"
    # `import torch.utils.data` binds `torch` (with the submodule loaded): so does the port
    return "webgrad as torch" if alias.name == "torch" else f"{ours}, webgrad as torch"


def _port_import(node, text):
    """One import statement (its exact text) with torch's module paths replaced by webgrad's."""
    if isinstance(node, ast.ImportFrom):
        return re.sub(r"^from\s+torch\b", "from webgrad", text)
    return "import " + ", ".join(_port_alias(a) for a in node.names)


def port_source(source):
    """``source`` with each torch import statement rewritten to import webgrad (nothing else changes)."""
    lines = source.splitlines(keepends=True)
    for node in sorted(_torch_imports(ast.parse(source)), key=lambda n: (n.lineno, n.col_offset), reverse=True):
        if node.end_lineno != node.lineno:
            raise ValueError(f"port: keep torch imports on one line (line {node.lineno})")
        line, start, end = lines[node.lineno - 1], node.col_offset, node.end_col_offset
        lines[node.lineno - 1] = line[:start] + _port_import(node, line[start:end]) + line[end:]
    return "".join(lines)


def changed_lines(before, after):
    """Line numbers (1-based) where the two sources differ; they must have as many lines."""
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b), "the port added or removed lines"
    return [i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y]


def check_imports_only(before, after):
    """Assert that every line the port changed is a torch import statement of ``before``, and that
    each such statement now names webgrad instead."""
    import_lines = {node.lineno for node in _torch_imports(ast.parse(before))}
    changed = changed_lines(before, after)
    outside = [n for n in changed if n not in import_lines]
    assert not outside, f"the port changed lines that are not torch imports: {outside}"
    assert changed == sorted(import_lines), "a torch import was left unported"
    assert not _torch_imports(ast.parse(after)), "the ported source still imports torch"


def load(program, library):
    """The program ``tests/compat/<program>.py`` as a fresh module importing ``library``
    ("torch": as written; "webgrad": ported)."""
    path = HERE / f"{program}.py"
    source = path.read_text()
    if library == "webgrad":
        ported = port_source(source)
        check_imports_only(source, ported)
        source = ported
    name = f"compat_{program}_{library}"
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[name] = module     # dataclasses and pickling look modules up by name
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module


def run(module, **kwargs):
    """``module.main(**kwargs)``, leaving no default-device mode of PyTorch's behind: a program that
    calls ``torch.set_default_device(d)``, even to restore the device it found, leaves a
    TorchFunctionMode on (only ``set_default_device(None)`` removes it), and with one on, later
    code in the process runs differently (``TransformerEncoder`` skips its fast path)."""
    try:
        return module.main(**kwargs)
    finally:
        if module.torch.__name__ == "torch":
            module.torch.set_default_device(None)


def to_numpy(tree):
    """Tensors (of either library) in a nest of dicts/lists/tuples as numpy arrays."""
    if isinstance(tree, dict):
        return {k: to_numpy(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(to_numpy(v) for v in tree)
    return tree.detach().cpu().numpy() if hasattr(tree, "detach") else tree


def as_init(module, arrays):
    """numpy arrays as the program module's library tensors (its ``torch`` name), for ``init``."""
    return {k: module.torch.tensor(v) for k, v in arrays.items()}


def max_rel_diff(got, want):
    """The largest |got - want| / max(|want|, 1e-12) over two equal-length lists of floats."""
    assert len(got) == len(want), f"{len(got)} losses against {len(want)}"
    return max(abs(g - w) / max(abs(w), 1e-12) for g, w in zip(got, want))
