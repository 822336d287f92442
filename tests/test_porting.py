"""docs/porting.md is generated from torch's names and webgrad's code (``python -m webgrad.porting``)
and cannot go stale: this test regenerates it and compares. The statuses it prints are checked
against what webgrad does: a name "no effect" exists, a refused one raises with its reason, a
missing one raises AttributeError, and each keyword's example behaves as the table says."""
import difflib
import io
import pathlib
import re

import pytest
import torch

import webgrad as wg
from webgrad import porting
from webgrad.porting_table import KEYWORDS, NAME_CLASHES, NO_EFFECT, REFUSED

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "porting.md"
HOOKED = ("webgrad", "webgrad.nn", "webgrad.nn.functional", "webgrad.Tensor")   # with __getattr__ that says why


@pytest.fixture(scope="module")
def table():
    return porting.table()


def test_the_page_is_the_generated_one():
    committed = PAGE.read_text()
    version = re.search(r"from torch (\S+);", committed).group(1)
    assert torch.__version__ == version, (f"docs/porting.md was generated with torch {version}, this is "
                                          f"{torch.__version__}: regenerate it with CI's torch")
    generated = porting.render()
    changed = [line for line in difflib.unified_diff(committed.splitlines(), generated.splitlines(), lineterm="", n=0)
               if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert not changed, ("docs/porting.md is stale: regenerate it with `python -m webgrad.porting > docs/porting.md`; "
                         "changed lines:\n" + "\n".join(changed[:40]))


def test_every_group_and_many_names_are_listed(table):
    groups = {t for t, _, _ in table}
    for name in ("torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.optim", "torch.optim.lr_scheduler",
                 "torch.utils.data", "torch.cuda", "torch.amp", "torch.backends.cudnn", "torch.distributed"):
        assert name in groups, name
    assert sum(len(rows) for _, _, rows in table) > 2000


def test_statuses_agree_with_webgrad(table):
    for torch_path, webgrad_path, rows in table:
        ours = porting._webgrad(webgrad_path)
        for name, status, note in rows:
            present = porting._present(ours, name)
            if status == porting.SUPPORTED or status == porting.NO_EFFECT_:
                assert present, f"{torch_path}.{name} is listed as {status} but webgrad has no {webgrad_path}.{name}"
            elif status == porting.NOT_YET:
                assert not present
            if webgrad_path in HOOKED and not present:
                obj = wg.ones(1) if webgrad_path == "webgrad.Tensor" else ours
                with pytest.raises(AttributeError) as info:
                    getattr(obj, name)
                assert (note if status == porting.RAISES else "docs/porting.md") in str(info.value), (torch_path, name)


def test_no_effect_names_exist():
    for qualname in NO_EFFECT:
        module, _, name = qualname.rpartition(".")
        assert porting._present(porting._webgrad("webgrad" + module[len("torch"):]), name), qualname


def test_refused_names_that_webgrad_has_raise_when_called():
    for qualname in REFUSED:
        module, _, name = qualname.rpartition(".")
        ours = porting._webgrad("webgrad" + module[len("torch"):])
        if not porting._present(ours, name):
            continue
        if qualname in NAME_CLASHES:
            assert type(getattr(ours, name)).__name__ == "module", qualname
            continue
        with pytest.raises((RuntimeError, NotImplementedError)):
            getattr(ours, name)()


def test_keyword_examples_behave_as_listed():
    saved = io.BytesIO()
    wg.save({"w": wg.ones(2)}, saved)
    scope = {"webgrad": wg, "io": io, "saved": saved.getvalue()}
    for keyword, (status, why, example) in KEYWORDS.items():
        if status == porting.RAISES:
            with pytest.raises(TypeError, match=keyword):
                eval(example, scope)
        else:
            with pytest.warns(UserWarning) if keyword == "size_average" else _nothing():
                eval(example, scope)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_missing_names_say_where_to_look():
    with pytest.raises(AttributeError, match="no complex32"):
        wg.chalf
    with pytest.raises(AttributeError, match="no quantized tensors"):
        wg.quantize_per_tensor
    with pytest.raises(AttributeError, match="docs/porting.md"):
        wg.nn.functional.no_such_function
    with pytest.raises(AttributeError, match="no sparse layouts"):
        wg.ones(1).to_dense()
    with pytest.raises(AttributeError) as info:
        wg.ones(1)._private_name
    assert "porting" not in str(info.value)
    assert not hasattr(wg, "uint16") and hasattr(wg, "uint8")
