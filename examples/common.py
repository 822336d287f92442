"""Helpers the training examples share: a progress bar, the digits data, a loss plot."""
import os
import random
import sys
import tempfile

import webgrad as wg


def progress(step, total, text="", width=30):
    """Draw a one-line progress bar, redrawn in place; a newline when done."""
    done = int(width * step / total)
    sys.stdout.write(f"\r[{'#' * done}{'.' * (width - done)}] {step}/{total} {text}")
    if step == total:
        sys.stdout.write("\n")
    sys.stdout.flush()


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


def save_plot(losses, name, ylabel="loss"):
    """Save a loss curve to the temp folder when matplotlib is installed; returns the path or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    path = os.path.join(tempfile.gettempdir(), name)
    plt.figure(figsize=(5, 3))
    plt.plot(range(1, len(losses) + 1), losses)
    plt.xlabel("epoch")
    plt.ylabel(ylabel)
    plt.tight_layout()
    plt.savefig(path)
    plt.close()
    print(f"loss plot: {path!r}")
    return path
