"""A small GPT and its training script, written the way nanoGPT-style programs are written.

A character-level language model: token and position embeddings, pre-norm blocks of causal
self-attention (``F.scaled_dot_product_attention``, or a masked softmax over a ``tril`` buffer)
and a GELU MLP, the output head tied to the token embedding. Training: AdamW with weight-decay
groups, warmup then cosine learning rate set by hand on ``param_groups``, gradient clipping,
``GradScaler`` (disabled off CUDA) and ``autocast`` (only on CUDA), an evaluation pass under
``no_grad``, a checkpoint (model, optimizer, iteration, config) saved with ``torch.save`` and
resumed with ``torch.load``, then sampling with ``topk``/``softmax``/``multinomial``.

    python tests/compat/gpt.py             # trains a few steps on cpu and prints a sample

``main(steps, device, init, out_dir, **config)`` returns the losses, the per-step times, the
initial weights and the sampled tokens, so that tests/compat/test_compat.py can run it under
PyTorch and under webgrad from the same weights.
"""
import inspect
import math
import os
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

TEXT = ("First Citizen: Before we proceed any further, hear me speak. All: Speak, speak. "
        "First Citizen: You are all resolved rather to die than to famish? All: Resolved. resolved. "
        "First Citizen: First, you know Caius Marcius is chief enemy to the people. ")


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (PyTorch's has no bias=False before 2.1)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = config.flash and hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            mask = torch.tril(torch.ones(config.block_size, config.block_size))
            self.register_buffer("bias", mask.view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)   # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None,
                                               dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 32
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True
    flash: bool = True


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight   # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():   # scaled init of the residual projections (GPT-2)
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])   # only the last position is needed to sample
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        num_decay_params = sum(p.numel() for p in decay_params)
        num_nodecay_params = sum(p.numel() for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        return optimizer

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


# ----------------------------------------------------------------------------- training script

def get_lr(it, learning_rate, warmup_iters, lr_decay_iters, min_lr):
    """Linear warmup, then cosine decay down to min_lr."""
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


def encode(text):
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    return np.array([stoi[c] for c in text], dtype=np.uint16), chars


def main(steps=10, device=None, init=None, out_dir=None, seed=1337, batch_size=4, block_size=16,
         n_layer=2, n_head=2, n_embd=32, bias=True, flash=True, learning_rate=1e-2, eval_iters=2, sample_tokens=8):
    """Train ``steps`` iterations: the first half, a checkpoint, a fresh model resumed from it, the rest.

    Returns {"losses", "step_times", "init", "sample"}; ``init`` (a state_dict) replaces the random
    initial weights when given."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    device_type = "cuda" if "cuda" in str(device) else "cpu"
    out_dir = out_dir or tempfile.mkdtemp()
    torch.manual_seed(seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dtype = "float32"
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

    data, chars = encode(TEXT * (1 + batch_size * (block_size + 1) // len(TEXT)))
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n - block_size - 1:]
    rng = np.random.default_rng(seed)

    def get_batch(split):
        source = train_data if split == "train" else val_data
        ix = rng.integers(len(source) - block_size, size=(batch_size,))
        x = torch.stack([torch.from_numpy((source[i:i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((source[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
        if device_type == "cuda":
            x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
        else:
            x, y = x.to(device), y.to(device)
        return x, y

    model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, bias=bias,
                      vocab_size=len(chars), dropout=0.0, flash=flash)
    weight_decay, beta1, beta2, grad_clip = 1e-1, 0.9, 0.95, 1.0
    warmup_iters, lr_decay_iters, min_lr = 2, max(steps, 3), learning_rate / 10

    def build(state=None):
        model = GPT(GPTConfig(**model_args))
        if state is not None:
            model.load_state_dict(state)
        model.to(device)
        scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
        optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2), device_type)
        return model, scaler, optimizer

    @torch.no_grad()
    def estimate_loss(model):
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    model, scaler, optimizer = build(init)
    init = {k: v.detach().clone() for k, v in model.state_dict().items()}
    print(f"number of parameters: {model.get_num_params() / 1e6:.2f}M")
    ckpt_path = os.path.join(out_dir, "ckpt.pt")
    iter_num, best_val_loss = 0, 1e9
    losses, step_times = [], []
    X, Y = get_batch("train")
    t0 = time.time()
    while iter_num < steps:
        if iter_num == steps // 2:   # save, then resume into a fresh model and optimizer
            val = estimate_loss(model)["val"]
            best_val_loss = min(best_val_loss, val.item())
            checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                          "model_args": model_args, "iter_num": iter_num, "best_val_loss": best_val_loss,
                          "config": {"learning_rate": learning_rate, "seed": seed, "dtype": dtype}}
            print(f"saving checkpoint to {out_dir}")
            torch.save(checkpoint, ckpt_path)
            del model, optimizer, checkpoint
            checkpoint = torch.load(ckpt_path, map_location=device)
            state_dict = checkpoint["model"]
            unwanted_prefix = "_orig_mod."
            for k, v in list(state_dict.items()):
                if k.startswith(unwanted_prefix):
                    state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
            model_args.update(checkpoint["model_args"])
            model, scaler, optimizer = build(state_dict)
            optimizer.load_state_dict(checkpoint["optimizer"])
            iter_num, best_val_loss = checkpoint["iter_num"], checkpoint["best_val_loss"]
            checkpoint = None
            t0 = time.time()
        lr = get_lr(iter_num, learning_rate, warmup_iters, lr_decay_iters, min_lr)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        with ctx:
            logits, loss = model(X, Y)
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
        if grad_clip != 0.0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        lossf = loss.item()
        t1 = time.time()
        dt, t0 = t1 - t0, t1
        losses.append(lossf)
        step_times.append(dt)
        print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms, lr {lr:.2e}")
        iter_num += 1

    model.eval()
    stoi = {ch: i for i, ch in enumerate(chars)}
    start_ids = [stoi[c] for c in "First Ci"]
    x = (torch.tensor(start_ids, dtype=torch.long, device=device)[None, ...])
    with torch.no_grad():
        with ctx:
            greedy = model.generate(x, max_new_tokens=sample_tokens, temperature=0.8, top_k=1)[0].tolist()
            y = model.generate(x, max_new_tokens=sample_tokens, temperature=0.8, top_k=5)
            sampled = y[0].tolist()
    print("sample:", "".join(chars[i] for i in sampled))
    return {"losses": losses, "step_times": step_times, "init": init, "sample": greedy,
            "sampled": sampled, "vocab_size": len(chars)}


if __name__ == "__main__":
    main()
