"""Optimizers (PyTorch's torch.optim)."""
