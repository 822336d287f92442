"""PyTorch's documented signatures, read by introspection, and a check that a webgrad callable
accepts them: the parameter table behind ``test_api_parity.py``.

PyTorch's built-in functions carry their signatures in their docstrings (``matmul(input, other, *,
out=None) -> Tensor`` as the first line, more overloads as ``.. function::`` lines); Python-level ones
(``torch.nn.functional.*``, some Tensor methods) answer ``inspect.signature``.
"""
from __future__ import annotations

import inspect
import re
from typing import NamedTuple


class Param(NamedTuple):
    name: str
    kind: str          # "pos" (positional or keyword), "varpos" (*name), "kw" (keyword-only), "varkw" (**name)
    has_default: bool


def _split_top(text: str) -> list:
    """``text`` split at the commas outside brackets and quotes."""
    parts, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _parse_params(text: str) -> list:
    params, keyword_only = [], False
    for part in _split_top(text.replace("\\*", "*")):
        if part == "*":
            keyword_only = True
            continue
        if part == "/":
            continue
        name, _, default = part.partition("=")
        name = name.split(":")[0].strip()
        if name.startswith("**"):
            params.append(Param(name[2:], "varkw", False))
        elif name.startswith("*"):
            params.append(Param(name[1:], "varpos", False))
            keyword_only = True
        else:
            params.append(Param(name, "kw" if keyword_only else "pos", bool(default.strip())))
    return params


def _call_text(line: str, name: str):
    """The text between the parentheses of ``name(...)`` at the start of ``line``, or None."""
    m = re.match(r"\s*(?:\.\. (?:function|method):: )?(?:torch\.(?:Tensor\.)?)?" + re.escape(name) + r"\(", line)
    if not m:
        return None
    depth, start = 1, m.end()
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return line[start:i]
    return None


_KIND = {inspect.Parameter.POSITIONAL_ONLY: "pos", inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos",
         inspect.Parameter.VAR_POSITIONAL: "varpos", inspect.Parameter.KEYWORD_ONLY: "kw",
         inspect.Parameter.VAR_KEYWORD: "varkw"}


def python_params(fn, drop_self: bool = False) -> list:
    """The parameters ``inspect.signature`` gives for ``fn`` (``self`` dropped when ``drop_self``)."""
    sig = inspect.signature(fn)
    params = [Param(p.name, _KIND[p.kind], p.default is not inspect.Parameter.empty)
              for p in sig.parameters.values()]
    return params[1:] if drop_self and params and params[0].kind == "pos" else params


def torch_signatures(fn, name: str, method: bool = False) -> list:
    """Every documented signature (a list of Params) of PyTorch's ``fn`` called ``name``: from the
    docstring's signature lines, else from ``inspect.signature``; [] when neither gives one."""
    doc = getattr(fn, "__doc__", None) or ""
    found = [_call_text(line, name) for line in doc.splitlines()[:200]]
    sigs = [_parse_params(t) for t in found if t is not None]
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
