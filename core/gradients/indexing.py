"""Gradients of the indexing kernels."""
