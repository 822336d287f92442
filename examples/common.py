"""Helpers the training examples share: progress, the digits data, accuracy, plots.

* ``progress_bar(total, desc, unit)``: tqdm's bar (rate, elapsed and remaining time) on a terminal
  when tqdm is installed; otherwise plain lines, about ten per run, each with the same figures, so
  a log file or CI output stays readable. Use it as tqdm: ``bar.set_postfix_str(text)``,
  ``bar.update()``, ``bar.close()``.
* ``save_plot(curves, name)``: the curves as a PNG with matplotlib, next to the examples (or in
  ``$WEBGRAD_PLOT_DIR``); the path is printed. Without matplotlib it says how to get one.
"""
import os
import random
import sys
import time

import webgrad as wg

HERE = os.path.dirname(os.path.abspath(__file__))
PLOT_DIR_VARIABLE = "WEBGRAD_PLOT_DIR"


# ---------------------------------------------------------------- progress

def _duration(seconds):
    minutes, seconds = divmod(int(seconds + 0.5), 60)
    return f"{minutes:02d}:{seconds:02d}"


class LineProgress:
    """Progress as whole lines: ``train 12/30 [00:04<00:06, 2.95 epoch/s] loss 0.0783``, printed
    about ``lines`` times per run and at its end (the part of tqdm's API the examples use)."""

    def __init__(self, total, desc="", unit="it", lines=10):
        self.total, self.desc, self.unit, self.n, self.postfix = total, desc, unit, 0, ""
        self.every, self.start = max(1, total // lines), time.perf_counter()
        self.next = self.every            # the count at which the next line is due

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text

    def update(self, n=1):
        self.n += n
        if self.n >= self.next or self.n >= self.total:
            self.next = (self.n // self.every + 1) * self.every
            print(self.line(time.perf_counter() - self.start), flush=True)

    def line(self, elapsed):
        rate = self.n / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.n) / rate if rate else 0.0
        speed = f"{rate:.2f} {self.unit}/s" if rate >= 1 or not rate else f"{1 / rate:.2f} s/{self.unit}"
        head = f"{self.desc} " if self.desc else ""
        return f"{head}{self.n}/{self.total} [{_duration(elapsed)}<{_duration(left)}, {speed}] {self.postfix}".rstrip()

    def close(self):
        pass


def _terminal_width():
    """Columns of the terminal stdout writes to; 0 when it is a file, a pipe or a sizeless pty."""
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else 0
    except (OSError, ValueError, AttributeError):
        return 0


def progress_bar(total, desc="", unit="it"):
    """tqdm's bar when tqdm is installed and stdout is a terminal, else :class:`LineProgress`."""
    if _terminal_width():
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            return tqdm(total=total, desc=desc, unit=unit, file=sys.stdout)
    return LineProgress(total, desc, unit)


_bar = [None]      # the bar progress() is drawing


def progress(step, total, text="", desc="train", unit="epoch"):
    """Report that ``step`` of ``total`` is done, with ``text`` (the loss, say) beside the figures:
    for loops that report by step number. The bar starts at the first report, so the first step's
    time is not in its rate; a loop that can make its bar first should use :func:`progress_bar`."""
    bar = _bar[0]
    if bar is None or bar.total != total or step <= bar.n:
        bar = _bar[0] = progress_bar(total, desc, unit)
    bar.set_postfix_str(text, refresh=False)
    bar.update(step - bar.n)
    if step >= total:
        bar.close()
        _bar[0] = None


def report_compiled(compiled):
    """Print how a ``wg.compile``'d step or model ran (its traces and replays); nothing for a plain one."""
    if hasattr(compiled, "replays"):
        print(f"compiled: {compiled.traces} traces, {compiled.replays} replays")


# ---------------------------------------------------------------- data and metrics

def load_digits(backend=None, test_fraction=0.25, seed=0, image=False):
    """scikit-learn's bundled 8x8 digits as (x_train, y_train, x_test, y_test), pixels in [0, 1];
    ``image`` gives x as [N, 1, 8, 8], else [N, 64]."""
    from sklearn.datasets import load_digits as sk_digits
    d = sk_digits()
    order = list(range(len(d.target)))
    random.Random(seed).shuffle(order)
    n_test = int(len(order) * test_fraction)
    x = wg.tensor(d.data[order] / 16.0, dtype=wg.float32, backend=backend)
    x = x.reshape(-1, 1, 8, 8) if image else x
    y = wg.tensor(d.target[order], dtype=wg.int32, backend=backend)
    return x[n_test:], y[n_test:], x[:n_test], y[:n_test]


def accuracy(model, x, y, batch_size=512):
    """Fraction of rows of ``x`` whose argmax prediction equals ``y`` (model in eval mode)."""
    model.eval()
    correct = 0
    with wg.no_grad():
        for i in range(0, x.shape[0], batch_size):
            correct += (model(x[i:i + batch_size]).argmax(-1) == y[i:i + batch_size]).sum().item()
    return correct / x.shape[0]


# ---------------------------------------------------------------- plots

def plot_path(name):
    """Where a plot called ``name`` goes: ``$WEBGRAD_PLOT_DIR`` if set, else beside the examples."""
    return os.path.join(os.environ.get(PLOT_DIR_VARIABLE) or HERE, name)


def save_plot(curves, name, ylabel="loss", xlabel="epoch", title=None, log_y=False):
    """Plot ``curves`` (a list of values, or {label: values}, one panel each; ``log_y`` for a log
    scale) to the PNG ``plot_path(name)`` with matplotlib; print and return its path (None
    without matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: matplotlib is not installed (pip install matplotlib), so no plot was saved")
        return None
    panels = curves if isinstance(curves, dict) else {ylabel: curves}
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels) + 0.6, 2.6), squeeze=False)
    for ax, (label, values) in zip(axes[0], panels.items()):
        ax.plot(range(1, len(values) + 1), values, color="tab:blue")
        ax.set(xlabel=xlabel, ylabel=label, yscale="log" if log_y else "linear")
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = plot_path(name)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    print(f"plot: {path}")
    return path
