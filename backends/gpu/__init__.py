"""The WebGPU backend (shared by the native wgpu device and the browser webgpu device)."""
