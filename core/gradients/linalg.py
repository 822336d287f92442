"""Gradients of the linalg kernels."""
