"""cpu windows kernels."""
