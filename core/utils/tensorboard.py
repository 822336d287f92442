"""``torch.utils.tensorboard``'s ``SummaryWriter`` for the logs training scripts write: scalars
(``add_scalar``, ``add_scalars``) and text (``add_text``), as TensorBoard event files made by the
``tensorboard`` package's own writer and protocol buffers, as PyTorch's are. Like PyTorch's, the
module needs ``tensorboard`` installed (``pip install tensorboard``) and raises ImportError without
it. The writer's other ``add_*`` methods (images, histograms, graphs, embeddings ...) are not here
yet: calling one raises AttributeError.

>>> import tempfile, webgrad as wg
>>> from webgrad.utils.tensorboard import SummaryWriter
>>> with SummaryWriter(tempfile.mkdtemp()) as writer:
...     writer.add_scalar("Loss/train", wg.tensor(0.5), 1)
"""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

import tensorboard

if tuple(int(p) for p in tensorboard.__version__.split(".")[:2] if p.isdigit()) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

from tensorboard.compat.proto.event_pb2 import Event, SessionLog  # noqa: E402
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata  # noqa: E402
from tensorboard.compat.proto.tensor_pb2 import TensorProto  # noqa: E402
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto  # noqa: E402
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData  # noqa: E402
from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Events into one event file in ``log_dir`` (``tensorboard``'s EventFileWriter underneath)."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


def _number(op, value) -> float:
    """One scalar from a webgrad tensor, a numpy array/scalar or a Python number (one element)."""
    count = value.numel() if hasattr(value, "numel") else getattr(value, "size", 1)
    if count != 1:
        raise AssertionError(f"{op}: expected a value with one element, but got {count} elements")
    return float(value.item() if hasattr(value, "item") else value)


def scalar_summary(tag, value, new_style=False, double_precision=False):
    """A ``Summary`` of one number: ``simple_value`` (old style) or a scalars-plugin tensor."""
    number = _number("add_scalar", value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    proto = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[number], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=metadata)])


def text_summary(tag, text):
    """A ``Summary`` of one string for the text plugin (shown under ``tag + "/text_summary"``)."""
    data = SummaryMetadata.PluginData(plugin_name="text", content=TextPluginData(version=0).SerializeToString())
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=SummaryMetadata(plugin_data=data),
                                        tensor=proto)])


class SummaryWriter:
    """Writes TensorBoard event files under ``log_dir`` (default ``runs/DATETIME_HOSTNAME{comment}``),
    as PyTorch's ``SummaryWriter``: ``purge_step`` hides a crashed run's later events, and the
    writer reopens after ``close`` when written to again.

    >>> import tempfile, os
    >>> writer = SummaryWriter(tempfile.mkdtemp())
    >>> writer.add_scalars("loss", {"train": 0.5, "test": 0.7}, 3)
    >>> writer.close()
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir, self.purge_step, self.max_queue = log_dir, purge_step, max_queue
        self.flush_secs, self.filename_suffix = flush_secs, filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self):
        """The default FileWriter, made (again, after ``close``) when there is none."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        """The directory the event files go to."""
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One number (a one-element tensor, or a Python/numpy number) under ``tag`` at ``global_step``."""
        summary = scalar_summary(tag, scalar_value, new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several numbers on one chart: each ``tag`` of the dict goes to its own run,
        ``log_dir/main_tag_tag``, under ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = base + "/" + main_tag.replace("/", "_") + "_" + tag
            if path not in self.all_writers:
                self.all_writers[path] = FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[path].add_summary(scalar_summary(main_tag, value), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (markdown) under ``tag``."""
        self._get_file_writer().add_summary(text_summary(tag, text_string), global_step, walltime)

    def flush(self):
        """Write what is pending to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self):
        """Flush and close every event file (a later ``add_*`` opens a new one)."""
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
