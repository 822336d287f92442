"""cpu linalg kernels."""
