"""A character-level transformer trained on the text file beside this script, then sampled.

Token + position embeddings, a few pre-norm causal ``TransformerEncoderLayer``\\ s, a linear
head; AdamW with a cosine schedule. Prints the final loss (nats per character) and a sample.

Run: ``python examples/char_transformer.py`` (``--steps N``, ``--quick``, ``--backend NAME``). The
default run, 600 steps of a 2-layer model, takes about 3 minutes on a 2-core CPU; ``--quick``
(80 steps of a 1-layer model, a shorter sample) about 4 s. The loss curve goes to
``examples/char_transformer.png``.
"""
import argparse
import math
import os
import random

from common import progress_bar, report_compiled, save_plot

import webgrad as wg
import webgrad.nn as nn
import webgrad.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class CharTransformer(nn.Module):
    def __init__(self, vocab, context, d_model=64, heads=4, layers=2):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=0.0,
                                       activation="gelu", batch_first=True, norm_first=True)
            for _ in range(layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(wg.arange(t, backend=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(t, device=idx.device)
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        return self.head(self.norm(x))


def batches(data, context, batch_size):
    """Random windows of the encoded text: (inputs, next-character targets), each [B, context]."""
    n = data.shape[0] - context - 1
    offsets = wg.arange(context).unsqueeze(0)
    while True:
        starts = wg.randint(0, n, (batch_size, 1))
        idx = (starts + offsets).reshape(-1)
        yield (data.index_select(0, idx).reshape(batch_size, context),
               data.index_select(0, idx + 1).reshape(batch_size, context))


def sample(model, stoi, itos, prompt, length, temperature=0.8, seed=0):
    rng = random.Random(seed)
    ids = [stoi[c] for c in prompt]
    model.eval()
    with wg.no_grad():
        for _ in range(length):
            x = wg.tensor([ids[-model.context:]])
            probs = F.softmax(model(x)[0, -1] / temperature, dim=-1).tolist()
            ids.append(rng.choices(range(len(probs)), weights=probs)[0])
    return "".join(itos[i] for i in ids)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--quick", action="store_true", help="a short run (80 steps, a smaller model)")
    p.add_argument("--backend", default=None)
    p.add_argument("--text", default=os.path.join(HERE, "tiny_text.txt"))
    p.add_argument("--compile", action="store_true", help="compile the training step with wg.compile")
    args = p.parse_args(argv)
    steps = 80 if args.quick else args.steps
    if args.backend:
        wg.set_backend(args.backend)
    print(f"char_transformer: {steps} steps (the default 600 take about 3 minutes on a 2-core CPU; "
          f"--quick, 80 of a smaller model, about 4 s)")
    print(f"backend: {wg.get_backend().name!r}")
    wg.manual_seed(0)
    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi, itos = {c: i for i, c in enumerate(chars)}, dict(enumerate(chars))
    data = wg.tensor([stoi[c] for c in text])
    context = 32
    model = CharTransformer(len(chars), context, d_model=32 if args.quick else 64, layers=1 if args.quick else 2)
    opt = wg.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = wg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    print(f"vocabulary: {len(chars)} characters; uniform loss {math.log(len(chars)):.3f}")

    def train_step(x, y):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()

    train = wg.compile(train_step) if args.compile else train_step
    losses, stream, bar = [], batches(data, context, 32), progress_bar(steps, "train", unit="step")
    for step in range(1, steps + 1):
        model.train()
        loss = train(*next(stream))
        sched.step()                            # outside the compiled step (a replay re-reads the lr)
        if step % 10 == 0 or step == steps:
            losses.append(loss.item())
            bar.set_postfix_str(f"loss {losses[-1]:.3f}", refresh=False)
            bar.update(step - bar.n)
    bar.close()
    print(f"final loss: {sum(losses[-3:]) / len(losses[-3:]):.4f}")
    print(f"losses: {losses}")
    report_compiled(train)
    print("sample:", repr(sample(model, stoi, itos, "The ", 40 if args.quick else 120)))
    save_plot(losses, "char_transformer.png", xlabel="step / 10")


if __name__ == "__main__":
    main()
