"""Functional neural-network ops (PyTorch's torch.nn.functional)."""
