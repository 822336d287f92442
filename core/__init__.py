"""webgrad: autograd with one core for the CPU (numpy), the GPU (WebGPU via wgpu-py)
and the browser (Pyodide + WebGPU). PyTorch's surface, TensorFlow.js's architecture.

>>> import webgrad as wg
>>> x = wg.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad.tolist()
[2.0, 4.0]
"""
from . import kernel_names
from .dtypes import DType, bfloat16, bool_, complex64, complex128, float16, float32, float64, int32, int64, to_dtype
from .registry import (backend, get_backend, get_gradient, get_kernel, kernels_for_backend,
                       register_backend, register_gradient, register_kernel, set_backend,
                       unregister_backend, unregister_gradient, unregister_kernel)
from .engine import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, run_kernel,
                     set_grad_enabled)
from .tensor import Tensor, tensor
from .printing import set_printoptions
from .devices import device, get_default_device, set_default_device
from . import autograd
from .autograd import Function, custom_grad, grad, value_and_grad
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from . import ops
from .ops.creation import *  # noqa: F401,F403
from .ops.random import *  # noqa: F401,F403
from . import random
from .random import (Generator, default_generator, fork_rng, get_rng_state, initial_seed, manual_seed, seed,
                     set_rng_state)
from .ops.unary import *  # noqa: F401,F403
from .ops.binary import *  # noqa: F401,F403
from .ops.reduce import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.movement import *  # noqa: F401,F403
from .ops.indexing import *  # noqa: F401,F403
from .ops.masking import *  # noqa: F401,F403
from .ops.sorting import *  # noqa: F401,F403
from .ops.elementary import *  # noqa: F401,F403
from .ops.comparison import *  # noqa: F401,F403
from .ops.grids import *  # noqa: F401,F403
from .ops.queries import *  # noqa: F401,F403
from .ops.aliases import *  # noqa: F401,F403
from .ops.joining import *  # noqa: F401,F403
from .ops.uniques import *  # noqa: F401,F403
from .ops.scatter import *  # noqa: F401,F403
from .ops.special import *  # noqa: F401,F403
from .ops.restriding import *  # noqa: F401,F403
from .ops.scatter_reduce import *  # noqa: F401,F403
from .ops.scatters import *  # noqa: F401,F403
from .ops.arranging import *  # noqa: F401,F403
from .ops.statistics import *  # noqa: F401,F403
from .ops.ranges import *  # noqa: F401,F403
from .ops.aten import *  # noqa: F401,F403
from .ops.windows import *  # noqa: F401,F403
from .ops.legacy import *  # noqa: F401,F403
from .ops.complex import *  # noqa: F401,F403,A004  (webgrad.complex, as torch.complex)
from .ops.bitwise import *  # noqa: F401,F403
from .ops.counting import *  # noqa: F401,F403
from .ops.scans import *  # noqa: F401,F403
from .constants import *  # noqa: F401,F403
from .dtype_info import finfo, iinfo
from .size import Size
from .layouts import *  # noqa: F401,F403
from .tensor_types import *  # noqa: F401,F403
from . import gradients  # noqa: F401  (registers the gradient rules)
from . import backends  # noqa: E402  registers the built-in backends; wg.backends() lists those that start
from . import nn
globals().update(ops.aten.with_functional(nn.functional))   # torch.group_norm ... where nn.functional has them
from .memory import memory

bool = bool_  # noqa: A001  (webgrad.bool, as torch.bool)
float = float32  # noqa: A001
double = float64
half = float16
int = int32  # noqa: A001
long = int64
cfloat, cdouble = complex64, complex128

__version__ = "0.1.0"
from . import optim, utils, data  # noqa: E402
from . import hub, jit, onnx, return_types  # noqa: E402,F401  (PyTorch's modules scripts import at the top)
from . import func  # noqa: E402  (torch.func: grad, vmap, functional_call, ...)
from .func import vmap  # noqa: E402  (torch.vmap)
from . import linalg  # noqa: E402  (torch.linalg)
from .linalg.torch_names import *  # noqa: E402,F401,F403  (torch.det, torch.cross, ...)
from . import distributed  # noqa: E402  (MPI is imported only by init_process_group)
from .serialization import save, load  # noqa: E402
from .extend import Backend, derive_backend, override_gradient, override_kernel, remove_backend  # noqa: E402
from .profiler import profile  # noqa: E402
from .backends.gpu.custom import WgslError, wgsl_elementwise, wgsl_kernel  # noqa: E402
from . import accelerator, amp, cuda  # noqa: E402
from . import distributions  # noqa: E402
from . import fft, special  # noqa: E402  (torch.fft's real names, torch.special)
from .amp import GradScaler, autocast  # noqa: E402
from .compiler import compile  # noqa: E402,A001,F811
from .dtypes import get_default_dtype, set_default_dtype  # noqa: E402
from .flags import *  # noqa: E402,F401,F403
from .porting_table import module_getattr as _module_getattr  # noqa: E402  (PyTorch names webgrad has not: say why)
__getattr__ = _module_getattr("webgrad")
