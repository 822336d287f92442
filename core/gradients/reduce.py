"""Gradients of the reduce kernels."""
