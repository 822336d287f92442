"""The deliberate answers behind docs/porting.md: the PyTorch names webgrad accepts without effect,
and those it refuses, each with the reason and what to do instead. Every other PyTorch name is
supported when webgrad has it and "not in webgrad yet" when it does not (``webgrad.porting``
decides from the code, so the page follows webgrad as it grows). ``missing_attribute`` makes the
AttributeError of a name webgrad lacks say why, on ``webgrad``, ``webgrad.nn``,
``webgrad.nn.functional`` and ``Tensor``.

Keys are PyTorch's qualified names (``torch.cuda.synchronize``); ``FAMILIES`` answer for whole
groups by pattern (complex32, quantization, sparse layouts, TorchScript internals ...).
"""
from __future__ import annotations

import re

_FLAG = "a setting of {} that cannot change webgrad's numbers; kept and read back so scripts run"
_NO_CUDA = "webgrad has no CUDA backend; its GPU is the 'wgpu' backend (webgrad.accelerator picks it)"

# torch name -> why webgrad accepts it and does nothing
NO_EFFECT = {
    **{f"torch.jit.{n}": "returns what it is given: TorchScript compiles the Python it marks, which computes "
                         "the same numbers; webgrad runs the Python" for n in
       ("script", "script_if_tracing", "ignore", "unused", "export", "interface", "annotate", "Final")},
    "torch.jit.is_scripting": "False: nothing runs under TorchScript here",
    "torch.jit.is_tracing": "False: nothing runs under torch.jit.trace here",
    "torch.onnx.is_in_onnx_export": "False: no ONNX export runs here",
    **{f"torch.backends.cudnn.{n}": _FLAG.format("cuDNN") for n in
       ("benchmark", "benchmark_limit", "deterministic", "allow_tf32", "enabled", "flags", "version")},
    "torch.backends.cudnn.is_available": "False: webgrad has no cuDNN",
    **{f"torch.backends.cuda.{n}": _FLAG.format("CUDA") for n in
       ("matmul", "sdp_kernel", "enable_flash_sdp", "enable_mem_efficient_sdp", "enable_math_sdp", "enable_cudnn_sdp",
        "preferred_linalg_library")},
    **{f"torch.backends.cuda.{n}": "answers as PyTorch without CUDA" for n in
       ("is_built", "flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled")},
    "torch.backends.mps.is_available": "False: webgrad's GPU backend is 'wgpu', not MPS",
    "torch.backends.mps.is_built": "False: webgrad's GPU backend is 'wgpu', not MPS",
    "torch.backends.mkldnn": _FLAG.format("oneDNN"), "torch.backends.mkl": _FLAG.format("MKL"),
    "torch.backends.openmp": _FLAG.format("OpenMP"), "torch.backends.opt_einsum": _FLAG.format("opt_einsum"),
    "torch.set_float32_matmul_precision": "float32 products are always float32 here (no TF32); the setting is kept",
    "torch.set_num_threads": "kept and read back; the cpu backend's threads are numpy's BLAS's",
    "torch.set_num_interop_threads": "kept and read back",
    "torch.use_deterministic_algorithms": "every webgrad kernel is deterministic already; the setting is kept",
    "torch.autograd.set_multithreading_enabled": "kept and read back: webgrad's backward runs on the calling "
                                                 "thread either way",
    **{f"torch.cuda.{n}": "nothing to do without CUDA, as in PyTorch" for n in
       ("manual_seed", "manual_seed_all", "seed", "seed_all", "empty_cache", "reset_peak_memory_stats")},
    **{f"torch.nn.utils.convert_conv{n}d_weight_memory_format": "returns the module unchanged: webgrad's weights are "
                                                                "row-major whatever the format, and no convolution's "
                                                                "result depends on it" for n in (2, 3)},
    **{f"torch.cuda.{n}": "0 without CUDA, as in PyTorch" for n in
       ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "device_count")},
}

# supported torch name -> what a user should know (where a backend cannot hold it)
_F16 = ("on cpu, and on the GPU backends (wgpu, webgpu) where the device has WebGPU's shader-f16 feature (kernels "
        "compute in float32 and round to half, as PyTorch's CPU kernels); without it a GPU backend raises TypeError "
        "saying so: use float32 there, or cpu")
_BF16 = "cpu only: the GPU backends raise TypeError (WGSL has no bfloat16 type); use float16 or float32 there"
_COMPLEX = ("cpu only: the GPU backends raise TypeError (they hold no complex dtypes); keep complex work on cpu, or "
            "carry real pairs (view_as_real's layout) on the GPU")
_FFT = ("cpu only (numpy's pocketfft, in the input's precision): complex results, which the GPU backends do not "
        "hold (they raise TypeError); float16/bfloat16 input raises RuntimeError, as PyTorch's cpu FFT")
_VIEW = ("a view sharing its input's storage, as PyTorch's; its stride() counts its own elements (PyTorch's "
         "counts the storage's)")
_CONJ = "conj computes the conjugate at once (PyTorch sets a lazy conjugate bit): is_conj() is always False"
_CHECKPOINT = ("runs the segment once, directly: PyTorch's values and gradients, with its use_reentrant rules; "
               "the activations are kept (no memory saved)")
_VMAP = ("runs the function once per batch element and stacks the results (no batching rules): PyTorch's values, a "
         "Python loop's speed; randomness= watches the default generator")
_DOUBLE_BACKWARD = "the double-backward trick (two reverse passes; no forward-mode AD): forward mode's values"
SUPPORTED_NOTES = {"torch.float16": _F16, "torch.half": _F16, "torch.Tensor.half": _F16,
                   "torch.bfloat16": _BF16, "torch.Tensor.bfloat16": _BF16,
                   **{f"torch.{n}": _COMPLEX for n in ("complex64", "complex128", "cfloat", "cdouble", "complex",
                                                       "polar")},
                   **{f"torch.fft.{n}{k}": _FFT for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
                      for k in ("", "2", "n")},
                   **{f"torch{o}.{n}": _FFT for o in ("", ".Tensor") for n in ("stft", "istft")},
                   **{f"torch{o}.{n}": _VIEW for o in ("", ".Tensor") for n in ("real", "imag")},
                   "torch.view_as_real": _VIEW, "torch.view_as_complex": _VIEW,
                   **{f"torch{o}.{n}": _CONJ for o in ("", ".Tensor") for n in ("conj", "is_conj", "resolve_conj")},
                   "torch.jit": "TorchScript's decorators and queries with Python's meaning (script returns its "
                                "argument, is_scripting() is False); trace, save and load raise",
                   "torch.jit.fork": "runs the call at once (as eager PyTorch does); wait returns its value",
                   "torch.onnx": "importable; export raises (webgrad has no ONNX exporter)",
                   "torch.hub": "importable; its functions raise (webgrad downloads nothing at run time)",
                   "torch.utils.checkpoint.checkpoint": _CHECKPOINT,
                   "torch.utils.checkpoint.checkpoint_sequential": _CHECKPOINT,
                   "torch.vmap": _VMAP, "torch.func.vmap": _VMAP,
                   "torch.func.jacfwd": "computed by reverse mode (webgrad has no forward-mode AD): the same values",
                   "torch.func.hessian": "jacrev(jacrev(f)) (no forward-mode AD): the same values",
                   "torch.func.jvp": _DOUBLE_BACKWARD, "torch.func.linearize": _DOUBLE_BACKWARD,
                   "torch.func.functionalize": "runs the function eagerly; an output aliasing an input mutated inside "
                                               "(or, with remove='mutations_and_views', a view of an input) comes "
                                               "back as a copy, as PyTorch's",
                   "torch.float_power": "computes in float64: on the GPU backends (no float64) it raises TypeError",
                   "torch.Tensor.float_power": "computes in float64: on the GPU backends (no float64) it raises "
                                               "TypeError",
                   "torch.special.zeta": "a gradient in other only; in input it raises NotImplementedError, as "
                                         "PyTorch's",
                   "torch.special.gammainc": "a gradient in other only (NotImplementedError in input, as PyTorch's); "
                                             "on the GPU backends about 1e-4 absolute for a beyond ~100 (float32)",
                   "torch.special.gammaincc": "a gradient in other only (NotImplementedError in input, as PyTorch's); "
                                              "on the GPU backends about 1e-4 absolute for a beyond ~100 (float32)",
                   **{f"torch.special.{n}": "its recurrence runs to the largest degree asked for (read back from the "
                                             "device); PyTorch's cos(n acos x) shortcuts round a few ulp apart"
                      for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                                "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
                                "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                                "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                                "laguerre_polynomial_l", "legendre_polynomial_p")},
                   "torch.nn.init.trunc_normal_": "torch 2.13's algorithm (normal draws redrawn outside [a, b], or "
                                                  "uniform draws accepted by density): its numbers after manual_seed",
                   "torch.autograd.functional.jacobian": "vectorize=True and strategy='forward-mode' (PyTorch's checks "
                                                         "kept) give the same values from the same reverse passes"}

_NO_BF16_GPU = "the GPU backends raise TypeError (its Newton-Schulz steps are bfloat16's, which WGSL lacks); use cpu"
SUPPORTED_NOTES.update({
    "torch.optim.SparseAdam": "step raises RuntimeError, as PyTorch's does for a dense gradient: webgrad's gradients "
                              "are always dense; use Adam",
    "torch.optim.Muon": "bit-for-bit PyTorch's on cpu; " + _NO_BF16_GPU,
    "torch.nn.SyncBatchNorm": "BatchNorm outside a multi-process run (as PyTorch's without a process group); "
                              "training with several processes raises ValueError, as PyTorch's does on CPU",
    "torch.nn.DataParallel": "runs its module, as PyTorch's does without CUDA devices (device_ids stays [])",
    "torch.nn.utils.skip_init": "builds the module as usual (no meta device): its values are one possible "
                                "uninitialized content",
    "torch.nn.CrossMapLRN2d": "PyTorch's forward; the gradient is its derivative (PyTorch's legacy backward assumes "
                              "another window and disagrees with its forward)",
    "torch.nn.functional.grid_sample": "bilinear (trilinear for 5-D) and nearest; mode='bicubic' raises "
                                       "NotImplementedError",
    "torch.nn.functional.multi_head_attention_forward": "static_k/static_v raise NotImplementedError",
    "torch.nn.functional.linear_cross_entropy": "the reference path; options (the chunked path) raises "
                                                "NotImplementedError",
    "torch.nn.LinearCrossEntropyLoss": "the reference path; options (the chunked path) raises NotImplementedError",
})

# counting and bitwise names: what differs by backend or by design
_SHIFT = "on the GPU backends int64 is held in 32 bits: bits shifted past the 32nd are lost there"
_READ_BACK = "the result's size depends on the data: its largest value is read back (as PyTorch's kernels do)"
_RANGE = "the data's range is read back (as PyTorch's kernels do)"
SUPPORTED_NOTES.update({
    **{f"torch.{owner}bitwise_left_shift{tail}": _SHIFT for owner in ("", "Tensor.") for tail in ("", "_")},
    "torch.bincount": f"{_READ_BACK}; weights get a gradient (PyTorch's backward raises)",
    "torch.Tensor.bincount": f"{_READ_BACK}; weights get a gradient (PyTorch's backward raises)",
    "torch.histogram": "bin edges within an ulp of PyTorch's (its linspace rounds by vector lanes), so a value "
                       "within an ulp of an edge may count in the bin beside; with int bins and no range, "
                       + _RANGE,
    "torch.Tensor.histogram": "bin edges within an ulp of PyTorch's; with int bins and no range, " + _RANGE,
    "torch.histc": "with min == max == 0, " + _RANGE, "torch.Tensor.histc": "with min == max == 0, " + _RANGE,
    "torch.isin": "assume_unique is accepted and changes nothing (the answer is the same)",
})

# distributions and their samplers: where the numbers or gradients are not PyTorch's
_SERIAL = ("PyTorch's CPU sampler, drawn on the host from the same generator and uploaded: a seed gives PyTorch's "
           "numbers on every backend")
SUPPORTED_NOTES.update({
    "torch.poisson": _SERIAL, "torch.binomial": _SERIAL, "torch.Tensor.cauchy_": _SERIAL,
    "torch.Tensor.log_normal_": _SERIAL,
    "torch.distributions.VonMises": "draws in float64 where the backend holds it (cpu: PyTorch's numbers for a "
                                    "seed); on the GPU backends in float32, so the draws differ",
})

# torch name -> why webgrad refuses it, and what to do instead
REFUSED = {
    **{f"torch.cuda.{n}": f"{_NO_CUDA}; the call raises RuntimeError" for n in
       ("synchronize", "current_device", "set_device", "get_device_name", "get_device_capability",
        "get_device_properties", "Event", "Stream")},
    "torch.ops": "PyTorch's registry of custom operators (torch.ops.aten.add ...) does not exist; webgrad.ops "
                 "holds webgrad's own op modules, and webgrad.register_kernel adds kernels",
    "torch.compiler": "torch.compiler's controls (disable, is_compiling ...) do not exist; webgrad.compiler holds "
                      "webgrad.compile's tracer, plans and replay",
    **{f"torch.jit.{n}": "TorchScript only: call the module or function directly, or capture it with "
                         "webgrad.compile" for n in ("trace", "trace_module", "freeze", "optimize_for_inference")},
    "torch.jit.save": "TorchScript only: save the state_dict with webgrad.save",
    "torch.jit.load": "TorchScript only: load a state_dict saved with webgrad.save into the model's Python class",
    "torch.backends.cpu": "torch.backends.cpu.get_cpu_capability() does not exist; webgrad.backends.cpu is webgrad's "
                          "numpy backend",
    "torch.backends.flags": "PyTorch's global backend-flags context does not exist (set the flag modules' attributes "
                            "instead); webgrad.backends.flags is webgrad's module of accepted flags",
    "torch.autograd.forward_ad": "webgrad differentiates in reverse mode only (no dual tensors): compute "
                                 "Jacobian-vector products by reverse mode (webgrad.autograd.functional.jvp)",
    **{f"torch.autograd.{n}": "the __torch_function__ protocol: webgrad has no tensor-subclass dispatch to hook into"
       for n in ("handle_torch_function", "has_torch_function", "is_tensor_like")},
    **{f"torch.linalg.{n}": "returns complex eigenvalues and eigenvectors, which webgrad's linalg does not build "
                            "(its complex tensors are cpu-only): for a symmetric matrix use webgrad.linalg.eigh / "
                            "eigvalsh (real)" for n in ("eig", "eigvals")},
    **{f"torch{owner}.{n}": f"removed from PyTorch (calling it raises there too): use {new}"
       for owner in ("", ".Tensor") for n, new in (
           ("eig", "webgrad.linalg.eigh for a symmetric matrix (a general one's eigenvalues are complex)"),
           ("symeig", "webgrad.linalg.eigh"), ("lstsq", "webgrad.linalg.lstsq"),
           ("matrix_rank", "webgrad.linalg.matrix_rank"))},
}
# refused names that webgrad has as something else: a module of its own under that name
NAME_CLASHES = ("torch.ops", "torch.compiler", "torch.backends.cpu", "torch.backends.flags")

_NARROW = ("webgrad's dtypes are bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, "
           "complex64 and complex128: use one of these (uint8 for bytes, int64 (webgrad.long) for indices, bool for "
           "masks)")
# (pattern over the qualified name, why and what to do); the first that matches answers
FAMILIES = [
    (r"torch\.jit\.(?!(fork|wait|Future)$)\w+$", "TorchScript machinery: webgrad runs Python eagerly; call the module "
     "or function directly, or webgrad.compile it"),
    (r"torch\.onnx\.(?!(is_in_onnx_export|OnnxExporterError)$)\w+$", "webgrad has no ONNX exporter: save the weights "
     "with webgrad.save (safetensors), load them into the PyTorch model and export from PyTorch"),
    (r"torch\.hub\.\w+$", "webgrad downloads nothing at run time: download the file yourself and load it with "
     "webgrad.load (webgrad checkpoints and safetensors files)"),
    (r"torch(\.Tensor)?\.(complex32|chalf)$", "webgrad has no complex32 (PyTorch's complex of float16 parts): use "
     "complex64"),
    (r"torch(\.Tensor)?\.(q_\w+|qu?int\w*|qscheme|\w*quantiz\w*|int_repr|per_(tensor|channel)_\w+|"
     r"fused_moving_avg\w*|choose_qparams\w*|fbgemm_\w+|ao|Q\w+Storage)$", "webgrad has no quantized tensors"),
    (r"torch(\.nn)?\.(quantized|quantizable|qat|intrinsic)$", "webgrad has no quantized tensors"),
    (r"torch(\.Tensor)?\.(\w*sparse\w*|\w+_indices_copy|(c?col|crow|row)_indices|smm|hsmm|dsmm|saddmm|sspaddmm|"
     r"spmm|hspmm|coalesce|is_coalesced|dense_dim|indices|values|(indices|values)_copy|to_dense)$",
     "webgrad has no sparse layouts: tensors are dense (webgrad.strided)"),
    (r"torch(\.Tensor)?\.(u?int[1-7]|uint16|uint32|uint64|float8_\w+|float4_\w+|bits\w+|(Byte|Char|Short)Storage)$",
     _NARROW),
    (r"torch(\.Tensor)?\.(\w*Storage|StorageBase|storage|untyped_storage|storage_type|data_ptr|const_data_ptr|"
     r"set_|share_memory_|is_shared|is_set_to|record_stream|from_file|is_storage)$",
     "webgrad exposes no storage objects or pointers: a tensor's data lives on its backend (read it with .numpy(), "
     ".tolist() or await t.read())"),
    (r"torch(\.Tensor)?\.(names|rename_?|refine_names|align_(to|as)|unflatten_names)$",
     "webgrad has no named tensors: keep dims by position"),
    (r"torch\.backends(\.\w+)?\.(\w*PropModule|\w*Prop|GenericModule|CudnnModule|cuBLASModule|cuFFT\w+)$",
     "PyTorch's machinery for its flag modules, not a flag: nothing to port"),
    (r"torch\.(cudnn|miopen|mkldnn|native|batch_norm_(stats|elemt|gather\w*|update\w*|backward\w*))\w*$",
     "a PyTorch backend's kernel entry point: call the generic op instead (e.g. nn.functional.batch_norm, conv2d)"),
    (r"torch\.(fx|export|library|classes|package|overrides|futures|fork|wait|cond|while_loop|"
     r"cpp|monitor|mtia|xpu|mps|nested|masked|jagged|Script\w*|\w*Type|Graph\w*|Node|Value|Block|Code|"
     r"Argument\w*|FunctionSchema|AliasDb|CompilationUnit|ConcreteModuleType\w*|parse_\w+|import_ir_module\w*|"
     r"merge_type_from_type_comment|unify_type_list|FileCheck|ErrorReport|ExecutionPlan|Gradient|"
     r"CompleteArgumentSpec|IODescriptor|LiteScriptModule|StaticModule|ThroughputBenchmark|Benchmark\w*|"
     r"TracingState|DeepCopyMemoTable|\w*StorageContext|PyTorchFile\w+|ScriptModuleSerializer|CallStack|"
     r"OperatorInfo|Future|Tag|DispatchKey\w*|ExcludeDispatchKeyGuard|DisableTorchFunction\w*|Sym\w+|sym_\w+|"
     r"AggregationType|AVG|SUM|\w*Logger\w*|Capsule|Use|Type)$",
     "TorchScript, FX, export and dispatcher machinery: webgrad runs Python eagerly; call the module or function "
     "directly, or webgrad.compile it"),
]
_FAMILIES = [(re.compile(p), why) for p, why in FAMILIES]


def refusal(qualname: str):
    """Why webgrad refuses the PyTorch name ``qualname`` (e.g. ``torch.chalf``), or None."""
    if qualname in REFUSED:
        return REFUSED[qualname]
    for pattern, why in _FAMILIES:
        if pattern.match(qualname):
            return why
    return None


# keyword arguments PyTorch takes across many functions: (status, why, a call that shows it)
KEYWORDS = {
    "out": ("raises", "no out= anywhere (an unknown keyword, TypeError): assign the result instead",
            "webgrad.add(webgrad.ones(1), 1, out=webgrad.ones(1))"),
    "pin_memory": ("no effect", "uploads to the GPU backends need no pinned host memory",
                   "webgrad.zeros(2, pin_memory=True)"),
    "memory_format": ("no effect", "tensors stay row-major; no result depends on the format",
                      "webgrad.ones(1, 2, 2, 2).contiguous(memory_format=webgrad.channels_last)"),
    "layout": ("no effect", "webgrad.strided is the only layout (a sparse one raises NotImplementedError)",
               "webgrad.zeros(2, layout=webgrad.strided)"),
    "non_blocking": ("no effect", "copies between backends are ordered anyway",
                     "webgrad.ones(2).to('cpu', non_blocking=True)"),
    "foreach": ("no effect", "picks PyTorch's implementation, not its numbers",
                "webgrad.optim.SGD([webgrad.nn.Parameter(webgrad.ones(1))], lr=0.1, foreach=True)"),
    "fused": ("no effect", "picks PyTorch's implementation, not its numbers",
              "webgrad.optim.Adam([webgrad.nn.Parameter(webgrad.ones(1))], fused=True)"),
    "sparse_grad": ("no effect", "the gradient is dense; PyTorch's sparse one holds the same numbers",
                    "webgrad.gather(webgrad.ones(2), 0, webgrad.tensor([0]), sparse_grad=True)"),
    "size_average": ("no effect", "PyTorch's deprecated form of reduction=: converted, with PyTorch's warning",
                     "webgrad.nn.MSELoss(size_average=True)"),
    "weights_only": ("supported", "None or True (PyTorch's default): a whole saved model loads only with its classes "
                     "allowed (webgrad.serialization.safe_globals); False imports the classes a checkpoint names "
                     "(files you trust); nothing else in a file runs either way",
                     "webgrad.load(io.BytesIO(saved), weights_only=False)"),
}


# webgrad's objects whose missing attributes say why (``__getattr__`` hooks), and PyTorch's counterparts
_TORCH_OF = {"webgrad": "torch", "webgrad.nn": "torch.nn", "webgrad.nn.functional": "torch.nn.functional",
             "webgrad.Tensor": "torch.Tensor", "webgrad.jit": "torch.jit", "webgrad.onnx": "torch.onnx",
             "webgrad.hub": "torch.hub", "webgrad.autograd": "torch.autograd", "webgrad.linalg": "torch.linalg",
             "webgrad.special": "torch.special", "webgrad.fft": "torch.fft"}


def missing_attribute(owner: str, name: str, holder: str = "") -> AttributeError:
    """The AttributeError for ``owner.name`` (``owner`` a webgrad module or ``webgrad.Tensor``, named
    ``holder`` in the message), saying why when webgrad refuses PyTorch's name deliberately.

    >>> str(missing_attribute("webgrad", "chalf"))[:60]
    "module 'webgrad' has no attribute 'chalf': webgrad has no co"
    """
    base = f"{holder or f'module {owner!r}'} has no attribute {name!r}"
    torch_owner = _TORCH_OF.get(owner)
    why = None if torch_owner is None or name.startswith("_") else refusal(f"{torch_owner}.{name}")
    if why is not None:
        return AttributeError(f"{base}: {why}")
    if name.startswith("_"):
        return AttributeError(base)
    return AttributeError(f"{base} (docs/porting.md lists the PyTorch names webgrad has, and those it has not yet)")


def module_getattr(owner: str):
    """A module-level ``__getattr__`` for ``owner`` that raises ``missing_attribute``."""
    def __getattr__(name):
        raise missing_attribute(owner, name)
    return __getattr__
