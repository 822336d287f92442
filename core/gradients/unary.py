"""Gradients of the unary kernels."""
