"""The examples' training steps compiled: the digits MLP (Adam, cosine schedule), the digits CNN
(batch norm's running statistics, dropout, AdamW) and the character transformer (attention, layer
norm, gradient clipping, AdamW, cosine schedule) give eager's losses and parameters after several
steps: bit for bit on cpu, within float32 rounding on the GPU (where fused kernels round their own way).
The scripts themselves, run with ``--quick --compile``, print eager's losses and accuracy (cpu)."""
import re
import sys
from pathlib import Path

import pytest

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from char_transformer import CharTransformer  # noqa: E402
from digits_cnn import DigitsCNN  # noqa: E402
from test_examples import EXAMPLES as SCRIPTS, printed_values, run_script  # noqa: E402

STEPS = 5


def _mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def _batch(kind, i, backend):
    g = wg.Generator().manual_seed(i)
    if kind == "text":
        return wg.randint(0, 20, (4, 16), generator=g), wg.randint(0, 20, (4, 16), generator=g)
    shape = (16, 1, 8, 8) if kind == "image" else (16, 64)
    return wg.rand(*shape, generator=g), wg.randint(0, 10, (16,), generator=g)


EXAMPLES = {   # model, optimizer, data kind, clip gradients
    "digits_mlp": (_mlp, lambda p: wg.optim.Adam(p, lr=3e-3), "flat", False),
    "digits_cnn": (DigitsCNN, lambda p: wg.optim.AdamW(p, lr=5e-3, weight_decay=1e-4), "image", False),
    "char_transformer": (lambda: CharTransformer(20, 16, d_model=32, heads=4, layers=1),
                         lambda p: wg.optim.AdamW(p, lr=3e-3, weight_decay=0.01), "text", True),
}


def _run(name, backend, compiled):
    make, make_opt, kind, clip = EXAMPLES[name]
    wg.manual_seed(0)
    model = make()
    opt = make_opt(model.parameters())
    sched = wg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)

    def step(x, y):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    fn = wg.compile(step) if compiled else step
    losses = []
    for i in range(STEPS):
        losses.append(fn(*_batch(kind, i, backend)).item())
        sched.step()
    state = [t.tolist() for t in model.state_dict().values()]
    return fn, losses, state


def _flat(v):
    return [x for e in v for x in _flat(e)] if isinstance(v, list) else [v]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_an_examples_training_step_compiled_gives_eagers_results(backend, name):
    _, losses, state = _run(name, backend, compiled=False)
    fn, compiled_losses, compiled_state = _run(name, backend, compiled=True)
    assert fn.replays == STEPS - 2
    if backend == "cpu":
        assert compiled_losses == losses and compiled_state == state
    else:
        assert compiled_losses == pytest.approx(losses, rel=1e-4)
        # (Adam magnifies the rounding of tiny gradients)
        assert _flat(compiled_state) == pytest.approx(_flat(state), rel=1e-3, abs=1e-4)


@pytest.mark.parametrize("script", ["digits_mlp.py", "digits_cnn.py", "char_transformer.py"])
def test_an_example_script_run_with_compile_prints_eagers_results(script, tmp_path):
    outs = [run_script(SCRIPTS / script, "--quick", "--backend", "cpu", *flag, timeout=300,
                       env={"WEBGRAD_PLOT_DIR": str(tmp_path)}) for flag in ((), ("--compile",))]
    eager, compiled = (printed_values(out) for out in outs)
    assert compiled["losses"] == eager["losses"] and len(eager["losses"]) >= 4
    for key in ("test accuracy", "final loss", "sample"):
        assert compiled.get(key) == eager.get(key)
    traces, replays = map(int, re.search(r"compiled: (\d+) traces, (\d+) replays", outs[1]).groups())
    assert replays > 10 * traces and "compiled:" not in outs[0]
