"""PyTorch's Python signatures, read from torch itself, and a check that a webgrad callable accepts
them: the parameter table behind ``test_api_parity.py``.

Python-level torch callables (``torch.nn.functional.*``, ``torch.split``, ``Tensor.split`` ...)
answer ``inspect.signature``. Built-in ones are read from the type stubs torch ships
(``torch/_C/_VariableFunctions.pyi``, ``_nn.pyi``, and ``class TensorBase`` in ``__init__.pyi``),
which are generated from the same table as PyTorch's argument parser: one ``@overload`` per
signature Python accepts. The deprecated overloads (``add(input, alpha, other)``, ``addcmul(input,
value, tensor1, tensor2)``: a positional ``alpha``/``beta``/``value`` before another operand, or a
function whose first parameter is ``self``) are left out, as PyTorch warns on them.
"""
from __future__ import annotations

import ast
import functools
import inspect
import os
from typing import NamedTuple

import torch


class Param(NamedTuple):
    name: str
    kind: str          # "pos" (positional or keyword), "varpos" (*name), "kw" (keyword-only), "varkw" (**name)
    has_default: bool


_KIND = {inspect.Parameter.POSITIONAL_ONLY: "pos", inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos",
         inspect.Parameter.VAR_POSITIONAL: "varpos", inspect.Parameter.KEYWORD_ONLY: "kw",
         inspect.Parameter.VAR_KEYWORD: "varkw"}


def python_params(fn, drop_self: bool = False) -> list:
    """The parameters ``inspect.signature`` gives for ``fn`` (``self`` dropped when ``drop_self``)."""
    sig = inspect.signature(fn)
    params = [Param(p.name, _KIND[p.kind], p.default is not inspect.Parameter.empty)
              for p in sig.parameters.values()]
    return params[1:] if drop_self and params and params[0].kind == "pos" else params


def _stub_params(node: ast.FunctionDef, method: bool) -> list:
    a = node.args
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    params = [Param(p.arg, "pos", i >= first_default) for i, p in enumerate(positional)]
    if a.vararg:
        params.append(Param(a.vararg.arg, "varpos", False))
    params += [Param(p.arg, "kw", d is not None) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        params.append(Param(a.kwarg.arg, "varkw", False))
    return params[1:] if method else params


def _deprecated(params: list) -> bool:
    positional = [p for p in params if p.kind == "pos"]
    for i, p in enumerate(positional):
        if p.name in ("alpha", "beta", "value") and any(not q.has_default for q in positional[i + 1:]):
            return True
    return False


@functools.lru_cache(maxsize=None)
def _stubs(method: bool) -> dict:
    """{name: [signature, ...]} from torch's stubs: TensorBase's methods, or the functions."""
    root = os.path.join(os.path.dirname(torch.__file__), "_C")
    files = ["__init__.pyi"] if method else ["_VariableFunctions.pyi", "_nn.pyi"]
    out = {}
    for file in files:
        with open(os.path.join(root, file)) as f:
            tree = ast.parse(f.read())
        body = tree.body
        if method:
            body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")
        for node in body:
            if not isinstance(node, ast.FunctionDef):
                continue
            params = _stub_params(node, method)
            if (not method and node.args.args and node.args.args[0].arg == "self") or _deprecated(params):
                continue
            sigs = out.setdefault(node.name, [])
            if params not in sigs:
                sigs.append(params)
    return out


def doc_params(fn) -> list:
    """The parameters in the first line of a built-in's docstring, ``linalg.det(A, *, out=None) -> Tensor``
    (torch.linalg's built-ins have no stubs of their own; type words such as ``bool pivot`` are dropped)."""
    head = (fn.__doc__ or "").strip().split("\n")[0]
    parts, depth, word = [], 0, ""
    for ch in head[head.find("(") + 1:] if "(" in head else "":
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if depth < 0:
            break
        if ch == "," and depth == 0:
            parts.append(word)
            word = ""
        else:
            word += ch
    params, kind = [], "pos"
    for part in (p.strip() for p in parts + [word] if p.strip()):
        if part == "*":
            kind = "kw"
            continue
        if part == "/":
            continue
        name, _, default = part.partition("=")
        params.append(Param(name.split()[-1].lstrip("*"), kind, bool(default)))
    return params


def torch_signatures(fn, name: str, method: bool = False) -> list:
    """Every signature (a list of Params) Python accepts for PyTorch's ``fn`` called ``name``:
    ``inspect.signature``'s for a Python function, else the stubs' overloads; [] when neither has one."""
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return [python_params(fn, drop_self=method)]
    sigs = _stubs(method).get(name)
    if sigs:
        return sigs
    try:
        return [python_params(fn, drop_self=method)]
    except (TypeError, ValueError):
        return []


def mismatches(torch_sig: list, ours: list, exempt=frozenset()) -> list:
    """What ``ours`` (webgrad's Params) lacks of one torch signature: a positional parameter not at
    its position, a keyword not accepted. Names in ``exempt`` are not checked."""
    problems = []
    has_varkw = any(p.kind == "varkw" for p in ours)
    positional = [p for p in ours if p.kind in ("pos", "varpos")]
    names = {p.name for p in ours if p.kind in ("pos", "kw")}
    for i, p in enumerate(tp for tp in torch_sig if tp.kind in ("pos", "varpos")):
        if p.name in exempt:
            continue
        have = positional[i] if i < len(positional) else (positional[-1] if positional and
                                                           positional[-1].kind == "varpos" else None)
        if p.kind == "varpos":
            if have is None or have.kind != "varpos":
                problems.append(f"*{p.name} at position {i}")
        elif have is None or not (have.name == p.name or (have.kind == "varpos" and (p.name in names or has_varkw))):
            problems.append(f"{p.name} at position {i} (webgrad has {have.name if have else 'nothing'})")
    for p in torch_sig:
        if p.kind == "kw" and p.name not in exempt and p.name not in names and not has_varkw:
            problems.append(f"keyword {p.name}")
    return problems
