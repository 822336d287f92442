"""Gradients of the movement kernels."""
