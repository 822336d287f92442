"""webgrad.utils.tensorboard against torch.utils.tensorboard. Both need the optional ``tensorboard``
package: without it both raise ImportError (checked everywhere, tensorboard hidden); with it, the
writer's event files hold the same events as PyTorch's, read back with tensorboard's own loader.
The writer tests exist only where tensorboard is installed (CI's test packages do not list it yet:
until they do, those tests run on machines that have it)."""
import doctest
import importlib
import importlib.util
import sys

import numpy as np
import pytest

import webgrad as wg


@pytest.mark.parametrize("module", ["torch.utils.tensorboard", "webgrad.utils.tensorboard"])
def test_import_error_without_tensorboard(module, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ImportError):
        importlib.import_module(module)


if importlib.util.find_spec("tensorboard") is not None:
    import torch
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from webgrad.utils.tensorboard import SummaryWriter

    def read(path):
        """The events of one event file, as written (no conversion of old-style values)."""
        return [Event.FromString(record) for record in RawEventFileLoader(str(path)).Load()]

    def events(log_dir):
        """(step, tag, value or text) of every summary value in the event files under ``log_dir``."""
        found = []
        for path in sorted(p for p in log_dir.rglob("events.out.tfevents.*")):
            run = str(path.parent.relative_to(log_dir))
            for event in read(path):
                for v in event.summary.value:
                    data = (v.simple_value if v.WhichOneof("value") == "simple_value"
                            else list(v.tensor.float_val) + list(v.tensor.double_val) + list(v.tensor.string_val))
                    found.append((run, event.step, v.tag, data, v.metadata.plugin_data.plugin_name))
        return sorted(found, key=repr)

    def write(lib, writer_type, log_dir, device="cpu"):
        with writer_type(str(log_dir)) as w:
            w.add_scalar("Loss/train", lib.tensor(0.25, device=device), 1)
            w.add_scalar("Loss/test", 1.5, 2, new_style=True)
            w.add_scalar("lr", np.float32(3e-4), 3, new_style=True, double_precision=True)
            w.add_scalars("loss", {"train": lib.tensor([0.5], device=device), "test": 0.75}, 4)
            w.add_text("note", "step **five**", 5)
            w.flush()
            w.add_scalar("after_flush", lib.ones(1, 1, device=device).sum() * 2, 6)
        assert w.get_logdir() == str(log_dir)

    def test_summary_writer_writes_pytorchs_events(backend, tmp_path):
        write(torch, TorchWriter, tmp_path / "torch")
        write(wg, SummaryWriter, tmp_path / "webgrad", backend)
        got, want = events(tmp_path / "webgrad"), events(tmp_path / "torch")
        assert len(want) == 7 and got == want

    def test_summary_writer_refuses_many_numbers_as_pytorch(backend, tmp_path):
        with pytest.raises(AssertionError):
            TorchWriter(str(tmp_path / "t")).add_scalar("x", torch.ones(2), 0)
        with pytest.raises(AssertionError, match="add_scalar.*2 elements"):
            SummaryWriter(str(tmp_path / "w")).add_scalar("x", wg.ones(2, device=backend), 0)

    def test_summary_writer_reopens_after_close_and_purges(tmp_path):
        w = SummaryWriter(str(tmp_path), purge_step=7)
        w.close()
        w.add_scalar("x", 1.0, 8)
        w.close()
        found = events(tmp_path)
        assert [(step, tag, value) for _, step, tag, value, _ in found] == [(8, "x", 1.0)]
        starts = [e for p in tmp_path.glob("events.*") for e in read(p) if e.HasField("session_log")]
        assert [(e.step, e.session_log.status) for e in starts] == [(7, 1)]

    def test_default_log_dir_is_runs_date_host_comment(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        w = SummaryWriter(comment="_lr0.1")
        w.close()
        assert w.get_logdir().startswith("runs" + __import__("os").sep) and w.get_logdir().endswith("_lr0.1")
        assert any((tmp_path / w.get_logdir()).glob("events.out.tfevents.*"))

    def test_docstrings():
        result = doctest.testmod(importlib.import_module("webgrad.utils.tensorboard"))
        assert result.attempted > 0 and result.failed == 0
