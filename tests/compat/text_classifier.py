"""A text classifier written the way PyTorch's "Text classification with the torchtext library"
tutorial writes one: ``nn.EmbeddingBag`` over a flat tensor of token ids with ``offsets`` (built with
``torch.tensor(...).cumsum(dim=0)``), a ``collate_batch`` that a ``DataLoader`` calls, weights set with
``.data.uniform_``, ``SGD`` with ``StepLR``, ``clip_grad_norm_``, and accuracy from
``(predicted_label.argmax(1) == label).sum().item()``. The vocabulary and sentences are synthetic (each
class has its own frequent words); the tutorial's tokenizer and dataset are not needed.

    python tests/compat/text_classifier.py --steps 4

``main(steps, device, init, ...)`` trains ``steps`` batches and returns the losses, the initial weights
and the accuracies (see tests/compat/harness.py).
"""
import argparse

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

VOCAB, CLASSES, EMBED = 50, 4, 16


class TextClassificationModel(nn.Module):

    def __init__(self, vocab_size, embed_dim, num_class, mode="mean"):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode=mode, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


def sentences(n, seed):
    """``n`` (label, token ids) pairs: each class draws most of its words from its own quarter."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        label = int(rng.integers(0, CLASSES))
        length = int(rng.integers(3, 9))
        own = rng.integers(label * VOCAB // CLASSES, (label + 1) * VOCAB // CLASSES, length)
        noise = rng.integers(0, VOCAB, length)
        out.append((label, np.where(rng.random(length) < 0.7, own, noise).tolist()))
    return out


def collate_batch(batch, device="cpu"):
    label_list, text_list, offsets = [], [], [0]
    for (_label, _text) in batch:
        label_list.append(_label)
        processed_text = torch.tensor(_text, dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list.to(device), text_list.to(device), offsets.to(device)


def parse_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument('--lr', type=float, default=5.0)
    parser.add_argument('--batch', type=int, default=8)
    parser.add_argument('--steps', type=int, default=6)
    return parser.parse_args(argv)


def main(steps=None, device=None, init=None, mode="mean", argv=None):
    """Train ``steps`` batches; returns {"losses", "init", "accuracy", "eval_accuracy"}."""
    args = parse_args(argv if argv is not None else [])
    steps = steps or args.steps
    torch.manual_seed(0)
    device = device or "cpu"

    train_iter, test_iter = sentences(steps * args.batch, 1), sentences(2 * args.batch, 2)
    collate = lambda batch: collate_batch(batch, device)  # noqa: E731
    train_dataloader = DataLoader(train_iter, batch_size=args.batch, shuffle=True, collate_fn=collate)
    test_dataloader = DataLoader(test_iter, batch_size=args.batch, shuffle=False, collate_fn=collate)

    model = TextClassificationModel(VOCAB, EMBED, CLASSES, mode)
    if init is not None:
        model.load_state_dict(init)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model = model.to(device)

    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)

    losses, accuracy = [], []
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(train_dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
        losses.append(loss.item())
        accuracy.append(total_acc / total_count)
        if idx == steps // 2:
            scheduler.step()

    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for label, text, offsets in test_dataloader:
            predicted_label = model(text, offsets)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return {"losses": losses, "init": init, "accuracy": accuracy, "eval_accuracy": total_acc / total_count}


if __name__ == "__main__":
    import sys
    main(argv=sys.argv[1:])
