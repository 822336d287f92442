"""What webgrad does with each PyTorch name: the generator of docs/porting.md, and the
AttributeError that a missing name gives.

``python -m webgrad.porting > docs/porting.md`` writes the page (it needs torch, whose names it
lists: the public names of ``torch``, ``torch.Tensor``, ``torch.nn``, ``torch.nn.functional``,
``torch.optim``, ``torch.utils.data``, ``torch.cuda`` ...). Each name gets one status, read from
webgrad's code and ``porting_table``: **supported** (webgrad has it), **no effect** (accepted and
ignored, with the reason), **raises** (refused, with the reason and what to do instead), or **not
yet** (webgrad does not have it; using it raises AttributeError, see ``porting_table.missing_attribute``).
tests/test_porting.py checks that the committed page is this output, so it follows the code.

>>> from webgrad import porting
>>> porting.status("torch.chalf", False)[0], porting.status("torch.zeros", True)[0]
('raises', 'supported')
"""
from __future__ import annotations

import importlib
import sys
import types

from .porting_table import KEYWORDS, NO_EFFECT, SUPPORTED_NOTES, refusal

# (PyTorch's module or class, webgrad's), in the page's order
GROUPS = [
    ("torch", "webgrad"), ("torch.Tensor", "webgrad.Tensor"), ("torch.nn", "webgrad.nn"),
    ("torch.nn.functional", "webgrad.nn.functional"), ("torch.nn.init", "webgrad.nn.init"),
    ("torch.nn.utils", "webgrad.nn.utils"), ("torch.nn.utils.rnn", "webgrad.nn.utils.rnn"),
    ("torch.optim", "webgrad.optim"), ("torch.optim.lr_scheduler", "webgrad.optim.lr_scheduler"),
    ("torch.utils.data", "webgrad.utils.data"), ("torch.autograd", "webgrad.autograd"),
    ("torch.autograd.functional", "webgrad.autograd.functional"), ("torch.func", "webgrad.func"),
    ("torch.linalg", "webgrad.linalg"), ("torch.fft", "webgrad.fft"), ("torch.special", "webgrad.special"),
    ("torch.random", "webgrad.random"), ("torch.amp", "webgrad.amp"), ("torch.cuda", "webgrad.cuda"),
    ("torch.cuda.amp", "webgrad.cuda.amp"), ("torch.accelerator", "webgrad.accelerator"),
    ("torch.backends", "webgrad.backends"), ("torch.backends.cuda", "webgrad.backends.cuda"),
    ("torch.backends.cudnn", "webgrad.backends.cudnn"), ("torch.backends.mps", "webgrad.backends.mps"),
    ("torch.distributed", "webgrad.distributed"), ("torch.utils.checkpoint", "webgrad.utils.checkpoint"),
    ("torch.serialization", "webgrad.serialization"), ("torch.jit", "webgrad.jit"), ("torch.onnx", "webgrad.onnx"), ("torch.hub", "webgrad.hub"),
    ("torch.distributions", "webgrad.distributions"),
    ("torch.distributions.constraints", "webgrad.distributions.constraints"),
]
# the submodules listed as names of a group (fixed here: which ones ``dir`` shows depends on what
# the process has imported so far)
SUBMODULES = {
    "torch": ("nn", "optim", "utils", "autograd", "cuda", "amp", "backends", "linalg", "fft", "special", "random",
              "distributed", "accelerator", "jit", "onnx", "hub", "distributions", "multiprocessing", "testing",
              "export", "fx", "profiler", "compiler", "library", "func", "nested", "masked", "sparse", "quantization",
              "ao", "mps", "xpu", "serialization", "overrides", "package", "futures", "monitor", "signal", "types"),
    "torch.nn": ("functional", "init", "utils", "parallel", "attention", "modules", "parameter"),
    "torch.nn.utils": ("rnn", "parametrize", "parametrizations", "prune", "stateless"),
    "torch.autograd": ("function", "grad_mode", "anomaly_mode", "variable", "functional", "forward_ad", "graph",
                       "profiler"),
    "torch.backends": ("cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum", "nnpack", "mha",
                       "miopen", "quantized", "cusparselt", "kleidiai", "python_native"),
}
SUPPORTED, NO_EFFECT_, RAISES, NOT_YET = "supported", "no effect", "raises", "not yet"


def status(qualname: str, present: bool) -> tuple:
    """(status, note) of the PyTorch name ``qualname`` given whether webgrad has it."""
    if qualname in NO_EFFECT:
        return NO_EFFECT_, NO_EFFECT[qualname]
    why = refusal(qualname)
    if why is not None:
        return RAISES, why
    return (SUPPORTED, SUPPORTED_NOTES.get(qualname, "")) if present else (NOT_YET, "")


# ---------------------------------------------------------------- the page (needs torch)


def _resolve(path: str):
    if path.endswith(".Tensor"):
        return importlib.import_module(path[:-len(".Tensor")]).Tensor
    try:
        return importlib.import_module(path)
    except ImportError:
        return None


def _webgrad(path: str):
    obj = sys.modules["webgrad"]
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _public(path: str, obj) -> list:
    """PyTorch's public names in ``obj``: ``__all__``, what ``dir`` shows that torch defines (not
    the modules and typing helpers a torch module imports), and the submodules ``SUBMODULES`` lists."""
    listed = set(getattr(obj, "__all__", ()) or ()) | set(_submodules(path))
    names = set(dir(obj)) | listed
    inner = getattr(obj, "m", None)
    if isinstance(inner, types.ModuleType):       # torch.backends.cudnn: a module behind properties
        names |= set(dir(inner)) | {n for n in dir(type(obj)) if type(getattr(type(obj), n)).__name__ == "ContextProp"}
        names.discard("m")
    out = []
    for name in sorted(names):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:   # noqa: BLE001  (a lazy attribute that fails to load is not a name users meet)
            continue
        if name in listed or path.endswith(".Tensor") or _defined_by_torch(path, value):
            out.append(name)
    return out


def _submodules(path: str) -> list:
    found = []
    for name in SUBMODULES.get(path, ()):
        try:
            importlib.import_module(f"{path}.{name}")
            found.append(name)
        except ImportError:
            continue
    return found


def _defined_by_torch(path: str, value) -> bool:
    if isinstance(value, types.ModuleType):
        return False   # a submodule counts when SUBMODULES lists it
    module = getattr(value, "__module__", None) if isinstance(value, (type, types.FunctionType)) else None
    module = module or getattr(value, "__module__", None) or type(value).__module__
    return isinstance(module, str) and module.startswith("torch")


def _present(webgrad_obj, name: str) -> bool:
    if webgrad_obj is None:
        return False
    try:
        getattr(webgrad_obj, name)
        return True
    except AttributeError:
        return False


def table() -> list:
    """[(torch group, webgrad group, [(name, status, note), ...]), ...] from torch and webgrad."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # reading torch's deprecated attributes warns
        return _table()


def _table() -> list:
    out = []
    for torch_path, webgrad_path in GROUPS:
        obj = _resolve(torch_path)
        if obj is None:
            continue
        ours = _webgrad(webgrad_path)
        rows = [(n, *status(f"{torch_path}.{n}", _present(ours, n))) for n in _public(torch_path, obj)]
        out.append((torch_path, webgrad_path, rows))
    return out


_EXAMPLE = """\
```python
import webgrad as torch                  # was: import torch
import webgrad.nn as nn                  # was: import torch.nn as nn
import webgrad.nn.functional as F        # was: import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)   # fused=: accepted, no effect
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
loss = F.cross_entropy(model(x), y)
loss.backward()
opt.step()
print(loss.item() > 0)  # -> True
try:
    torch.quantize_per_tensor            # refused: the error says why
except AttributeError as e:
    print("no quantized tensors" in str(e))  # -> True
```
"""

_LEGEND = f"""\
Each PyTorch name has one status:

- **{SUPPORTED}**: webgrad has it, with PyTorch's signature and results (tests compare against torch).
- **{NO_EFFECT_}**: accepted and ignored, because it cannot change webgrad's results (the reason follows).
- **{RAISES}**: refused with an error that says why and what to do instead.
- **{NOT_YET}**: webgrad does not have it; using it raises AttributeError.
"""


def render() -> str:
    """docs/porting.md as text."""
    import torch
    groups = table()
    lines = ["# Porting PyTorch programs to webgrad", "",
             f"<!-- generated by `python -m webgrad.porting > docs/porting.md` from torch {torch.__version__}; "
             f"tests/test_porting.py checks it. Do not edit by hand. -->", "",
             "A PyTorch program runs on webgrad by changing its imports (`import webgrad as torch`, "
             "`import webgrad.nn as nn`, ...). This page lists every public name of the PyTorch modules "
             "below and what webgrad does with it.", "", _EXAMPLE, _LEGEND,
             "| PyTorch | webgrad | supported | no effect | raises | not yet |", "|---|---|---|---|---|---|"]
    for torch_path, webgrad_path, rows in groups:
        counts = [sum(1 for r in rows if r[1] == s) for s in (SUPPORTED, NO_EFFECT_, RAISES, NOT_YET)]
        lines.append(f"| [`{torch_path}`](#{_anchor(torch_path)}) | `{webgrad_path}` | " +
                     " | ".join(map(str, counts)) + " |")
    lines += ["", "## Keyword arguments", "", "| keyword | status | why |", "|---|---|---|"]
    lines += [f"| `{k}=` | {s} | {why} |" for k, (s, why, _) in KEYWORDS.items()]
    for torch_path, webgrad_path, rows in groups:
        lines += ["", f"## {torch_path}", "", f"webgrad: `{webgrad_path}`", "", "| name | status | note |",
                  "|---|---|---|"]
        lines += [f"| `{n}` | {s} | {note} |" for n, s, note in rows]
    return "\n".join(lines) + "\n"


def _anchor(path: str) -> str:
    return path.replace(".", "")


if __name__ == "__main__":
    sys.stdout.write(render())
