"""Gradients of the windows kernels."""
