"""cpu indexing kernels."""
