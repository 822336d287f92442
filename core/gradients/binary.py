"""Gradients of the binary kernels."""
