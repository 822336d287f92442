"""PyTorch programs run on webgrad by rewriting their import lines only, with PyTorch's numbers.

Each program in this folder is written as public PyTorch programs are (nanoGPT-style GPT, the
PyTorch examples' MNIST, word language model, VAE, DCGAN, regression and policy gradients, a CIFAR-style
ResNet, the tutorials' polynomial fits, text classification with EmbeddingBag, sequence-to-sequence
translation with attention, torch.func's per-sample-gradients and model-ensembling tutorials) and
imports torch as they do.
Each case runs the program under PyTorch, then ported by
``harness.load(program, "webgrad")`` (its torch import statements rewritten and nothing else,
checked line by line) on every backend, from PyTorch's initial weights and with the same numpy
data, and compares: the per-step losses within 1e-4 relative, and the other numbers each program
returns (evaluation losses, greedy samples, accuracies). The seeded cases hand nothing over: after the
same ``manual_seed`` both runs draw the same initial weights and dropout masks (PyTorch's generator).
"""
import pytest

import harness
from backends_under_test import BACKENDS

torch = pytest.importorskip("torch")

STEPS = 10
RTOL = 1e-4


def close(got, want):
    """Numbers (nested in lists/tuples) agree: floats within RTOL relative, everything else exactly."""
    if isinstance(want, (list, tuple)):
        return len(got) == len(want) and all(close(g, w) for g, w in zip(got, want))
    if isinstance(want, float):
        return abs(got - want) <= RTOL * max(abs(want), 1e-12)
    return got == want


# (program, keyword arguments for main, the other results to compare, slow)
CASES = {
    "gpt_sdpa": ("gpt", {}, ["sample"], True),
    "gpt_masked_softmax_no_bias": ("gpt", {"flash": False, "bias": False}, ["sample"], True),
    "mingpt": ("mingpt", {}, ["completion"], True),
    "mnist_cnn": ("mnist_cnn", {"dropout": 0.0}, ["test"], True),
    "word_lm_lstm": ("word_lm", {"model": "LSTM", "dropout": 0.0}, ["val"], False),
    "word_lm_gru": ("word_lm", {"model": "GRU", "dropout": 0.0}, ["val"], False),
    "word_lm_rnn_tanh": ("word_lm", {"model": "RNN_TANH", "dropout": 0.0}, ["val"], False),
    "word_lm_transformer_encoder": ("word_lm", {"model": "Transformer", "dropout": 0.0}, ["val"], True),
    "word_lm_nn_transformer": ("word_lm", {"model": "Transformer", "nn_transformer": True, "dropout": 0.0}, ["val"],
                               True),
    "vae": ("vae", {}, ["test"], False),
    "regression": ("regression", {}, [], False),
    "poly_autograd": ("poly_autograd", {}, [], False),
    "poly_nn": ("poly_nn", {}, [], False),
    "poly_nn_rmsprop": ("poly_nn", {"optimizer": "RMSprop"}, [], False),
    "poly_function": ("poly_function", {}, [], False),
    "poly_module": ("poly_module", {}, [], False),
    "poly_module_dynamic_net": ("poly_module", {"net": "DynamicNet"}, [], False),
    "reinforce": ("reinforce", {"dropout": 0.0}, ["probe"], False),
    "per_sample_grads": ("per_sample_grads", {}, ["per_sample_matches", "ensemble"], False),
    "actor_critic": ("reinforce", {"model": "actor_critic"}, ["probe"], False),
    "llama": ("llama", {}, [], False),
    "dcgan": ("dcgan", {}, ["fixed_mean", "scores"], False),
    "resnet": ("resnet", {}, ["train_acc", "test_acc"], False),
    "resnet_adaptive_pool": ("resnet", {"adaptive": True}, ["train_acc", "test_acc"], False),
    "text_classifier": ("text_classifier", {}, ["accuracy", "eval_accuracy"], False),
    "text_classifier_max": ("text_classifier", {"mode": "max"}, ["accuracy", "eval_accuracy"], False),
    "seq2seq_attention": ("seq2seq", {}, ["decoded"], False),
}
# programs that hold complex tensors, which webgrad's GPU backends refuse (test_complex_programs_refused_on_gpu)
COMPLEX = {"llama"}


def _runs_on(program, backend_name):
    return backend_name == "cpu" or program not in COMPLEX
_reference = {}


def reference(case, tmp_path_factory):
    """The program's run under PyTorch (once per case): its results and initial weights as numpy."""
    if case not in _reference:
        program, kwargs, _, _ = CASES[case]
        module = harness.load(program, "torch")
        extra = {"out_dir": str(tmp_path_factory.mktemp(f"{case}_torch"))} if "out_dir" in _params(module) else {}
        result = harness.run(module, steps=STEPS, **kwargs, **extra)
        _reference[case] = {**result, "init": harness.to_numpy(result["init"])}
    return _reference[case]


def _params(module):
    return module.main.__code__.co_varnames[:module.main.__code__.co_argcount]


@pytest.mark.parametrize("case, backend_name", [pytest.param(c, b, marks=[pytest.mark.slow] if CASES[c][3] else [],
                                                             id=f"{c}-{b}") for c in CASES for b in BACKENDS
                                                if _runs_on(CASES[c][0], b)])
def test_program_matches_torch(case, backend_name, tmp_path_factory):
    program, kwargs, compared, _ = CASES[case]
    want = reference(case, tmp_path_factory)
    module = harness.load(program, "webgrad")
    extra = {"out_dir": str(tmp_path_factory.mktemp(f"{case}_webgrad"))} if "out_dir" in _params(module) else {}
    init = harness.as_init(module, want["init"])
    got = harness.run(module, steps=STEPS, device=backend_name, init=init, **kwargs, **extra)
    assert len(want["losses"]) >= STEPS
    assert harness.max_rel_diff(got["losses"], want["losses"]) <= RTOL, (got["losses"], want["losses"])
    assert harness.to_numpy(got["init"]).keys() == want["init"].keys()
    for key in compared:
        assert close(got[key], want[key]), (key, got[key], want[key])


# ---------------------------------------------------------------- the port itself

def test_port_rewrites_torch_imports_only():
    source = ("import os, torch.nn as nn  # layers\nimport torch\nimport torch.utils.data\n"
              "from torch import optim; import numpy as np\nfrom torch.nn import functional as F\n"
              "if True:\n    from torch.optim.lr_scheduler import StepLR\nx = torch.ones(2)  # torch stays\n")
    ported = harness.port_source(source)
    assert ported == ("import os, webgrad.nn as nn  # layers\nimport webgrad as torch\n"
                      "import webgrad.utils.data, webgrad as torch\nfrom webgrad import optim; import numpy as np\n"
                      "from webgrad.nn import functional as F\nif True:\n"
                      "    from webgrad.optim.lr_scheduler import StepLR\nx = torch.ones(2)  # torch stays\n")
    harness.check_imports_only(source, ported)


def test_import_check_catches_other_changes():
    source = "import torch\nx = torch.ones(2)\n"
    with pytest.raises(AssertionError, match="not torch imports: \\[2\\]"):
        harness.check_imports_only(source, "import webgrad as torch\nx = torch.zeros(2)\n")
    with pytest.raises(AssertionError, match="left unported"):
        harness.check_imports_only(source, source)
    with pytest.raises(ValueError, match="one line"):
        harness.port_source("from torch.nn import (Linear,\n    ReLU)\n")


def test_run_leaves_torch_without_a_default_device_mode():
    """poly_autograd sets and restores torch's default device; the mode that leaves on would change
    later tests' PyTorch numbers (TransformerEncoder's fast path), so harness.run removes it."""
    module = harness.load("poly_autograd", "torch")
    module.main(steps=2, device="cpu")
    assert torch.overrides._is_torch_function_mode_enabled()      # what the program alone leaves
    harness.run(module, steps=2, device="cpu")
    assert not torch.overrides._is_torch_function_mode_enabled()


@pytest.mark.parametrize("program", sorted({c[0] for c in CASES.values()}))
def test_every_program_imports_torch_and_ports(program):
    """Each program imports torch (so the comparison is not vacuous) and loads ported."""
    source = (harness.HERE / f"{program}.py").read_text()
    assert harness.changed_lines(source, harness.port_source(source))
    module = harness.load(program, "webgrad")
    assert module.torch.__name__ == "webgrad"


# (program, keyword arguments for main, slow): programs whose random draws (initial weights, dropout)
# the seed alone decides, run from the same seed and nothing copied
SEEDED = {
    "gpt": ("gpt", {}, True),
    "mnist_cnn_dropout": ("mnist_cnn", {}, True),
    "word_lm_lstm_dropout": ("word_lm", {"model": "LSTM", "dropout": 0.2}, False),
    "word_lm_transformer_dropout": ("word_lm", {"model": "Transformer", "dropout": 0.2}, True),
    "reinforce_dropout": ("reinforce", {}, False),
    "poly_nn": ("poly_nn", {}, False),
    "llama": ("llama", {}, False),
}


@pytest.mark.parametrize("case, backend_name", [pytest.param(c, b, marks=[pytest.mark.slow] if SEEDED[c][2] else [],
                                                             id=f"{c}-{b}") for c in SEEDED for b in BACKENDS
                                                if _runs_on(SEEDED[c][0], b)])
def test_seeded_program_draws_pytorchs_weights_and_masks(case, backend_name, tmp_path_factory):
    """After the same manual_seed, a port starts from PyTorch's initial weights (no ``init`` handed
    over) and its dropout drops what PyTorch's does: the losses agree."""
    program, kwargs, _ = SEEDED[case]
    runs = {}
    for library in ("torch", "webgrad"):
        module = harness.load(program, library)
        extra = {"out_dir": str(tmp_path_factory.mktemp(f"{case}_{library}"))} if "out_dir" in _params(module) else {}
        device = backend_name if library == "webgrad" else None
        module.torch.manual_seed(0)
        runs[library] = harness.run(module, steps=STEPS, device=device, **kwargs, **extra)
    want, got = harness.to_numpy(runs["torch"]["init"]), harness.to_numpy(runs["webgrad"]["init"])
    assert got.keys() == want.keys()
    for key in want:   # drawn weights bitwise; computed buffers (a positional encoding's sin/cos) to float32 rounding
        assert (got[key] == want[key]).all() or harness.max_rel_diff(got[key].ravel().tolist(),
                                                                     want[key].ravel().tolist()) <= 1e-6, key
    assert harness.max_rel_diff(runs["webgrad"]["losses"], runs["torch"]["losses"]) <= RTOL, \
        (runs["webgrad"]["losses"], runs["torch"]["losses"])


@pytest.mark.parametrize("program, backend_name", [(p, b) for p in sorted(COMPLEX) for b in BACKENDS if b != "cpu"])
def test_complex_programs_refused_on_gpu(program, backend_name):
    """A program holding complex tensors stops on a GPU backend with the TypeError saying why and what to do."""
    module = harness.load(program, "webgrad")
    with pytest.raises(TypeError, match="no complex dtypes.*cpu"):
        harness.run(module, steps=1, device=backend_name)
