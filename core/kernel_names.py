"""Every built-in kernel's name, in one place (like tfjs-core's ``kernel_names``).

A kernel is one named computation that each backend implements. Ops call
``run_kernel(NAME, *inputs, **attrs)``; gradients are registered per name.
The set is deliberately small: most ops are compositions of these.
Attributes each kernel takes are listed beside it. Binary and ternary
elementwise kernels take inputs of one dtype (ops promote first) with
numpy broadcasting; unary kernels keep the input dtype unless noted.
"""

# --- elementwise, unary ------------------------------------------------------
NEG = "Neg"
ABS = "Abs"
EXP = "Exp"
LOG = "Log"
LOG2 = "Log2"                 # exact at powers of 2, as PyTorch's (log(x) / log(2) is not)
LOG10 = "Log10"
LOG1P = "Log1p"
EXPM1 = "Expm1"
SQRT = "Sqrt"
RSQRT = "Rsqrt"
SQUARE = "Square"
RECIPROCAL = "Reciprocal"
SIN = "Sin"
COS = "Cos"
TAN = "Tan"
TANH = "Tanh"
SIGMOID = "Sigmoid"
RELU = "Relu"
LEAKY_RELU = "LeakyRelu"      # negative_slope: float
ELU = "Elu"                   # alpha: float
GELU = "Gelu"                 # approximate: "none" | "tanh"
SILU = "Silu"
SOFTPLUS = "Softplus"         # beta: float, threshold: float
SIGN = "Sign"
FLOOR = "Floor"
CEIL = "Ceil"
ROUND = "Round"               # half to even, as numpy and PyTorch
ERF = "Erf"
ERFC = "Erfc"                 # 1 - erf(x), accurate where erf nears 1 (erfc(10) = 2.1e-45)
ERFCX = "Erfcx"               # exp(x^2) erfc(x)
ERFINV = "Erfinv"             # the inverse of erf on [-1, 1] (+-inf at +-1, NaN beyond)
NDTRI = "Ndtri"               # the inverse of the standard normal CDF on [0, 1] (accurate for tiny p)
LGAMMA = "Lgamma"             # log|Gamma(x)| (inf at the non-positive integers)
DIGAMMA = "Digamma"           # Gamma'(x) / Gamma(x) (NaN at the negative integers, -+inf at +-0)
POLYGAMMA = "Polygamma"       # n: int >= 0 -> the n-th derivative of digamma
BESSEL_I0E = "BesselI0e"      # exp(-|x|) I0(x), the scaled modified Bessel function of order 0
BESSEL_I1E = "BesselI1e"      # exp(-|x|) I1(x) (order 1; odd)
BESSEL_K0E = "BesselK0e"      # exp(x) K0(x), the scaled modified Bessel function of the second kind (inf at 0, NaN
                              # below; no gradient, as PyTorch's)
BESSEL_K1E = "BesselK1e"      # exp(x) K1(x)
SIGNBIT = "Signbit"           # float -> bool: the sign bit (true for -0.0 and a negative NaN)
FREXP = "Frexp"               # float -> (mantissa in [0.5, 1) signed, exponent int32): x = mantissa * 2^exponent
                              # (0, inf and NaN: themselves and exponent 0)
CLAMP = "Clamp"               # min: float | None, max: float | None
LOGICAL_NOT = "LogicalNot"    # any dtype -> bool
CAST = "Cast"                 # dtype: DType
IDENTITY = "Identity"         # a copy
BITWISE_NOT = "BitwiseNot"    # integer or bool: ~x (bool: not)

# --- complex numbers (cpu; the GPU backends refuse complex dtypes) --------------------------
COMPLEX = "Complex"           # (real, imag) of one float dtype -> its complex dtype
REAL = "Real"                 # complex -> its real part (the float dtype of its parts)
IMAG = "Imag"                 # complex -> its imaginary part
CONJ = "Conj"                 # complex -> its conjugate
COMPLEX_MATH = "ComplexMath"  # complex -> fn(complex), fn one of complex.COMPLEX_FUNCTIONS (numpy's names; attr fn)
# discrete Fourier transforms over the axes ``dims`` (tuple), ``norm`` one of "none", "by_root_n", "by_n"
# (PyTorch's normalization modes: the result times 1, 1/sqrt(n) or 1/n, n the signal size over dims)
FFT_C2C = "FftC2C"            # complex -> complex; dims, norm, forward: bool (False: the e^{+i..} direction)
FFT_R2C = "FftR2C"            # float -> complex, e^{-i..}; dims, norm, onesided: bool (last of dims halved: n//2+1)
FFT_C2R = "FftC2R"            # complex (one-sided) -> float, e^{+i..}; dims, norm, last_dim_size: int

UNARY = (NEG, ABS, EXP, LOG, LOG2, LOG10, LOG1P, EXPM1, SQRT, RSQRT, SQUARE, RECIPROCAL, SIN, COS, TAN, TANH,
         SIGMOID, RELU, LEAKY_RELU, ELU, GELU, SILU, SOFTPLUS, SIGN, FLOOR, CEIL, ROUND, ERF,
         ERFC, ERFCX, ERFINV, NDTRI, LGAMMA, DIGAMMA, POLYGAMMA, BESSEL_I0E, BESSEL_I1E,
         CLAMP, LOGICAL_NOT, CAST, IDENTITY, BITWISE_NOT)

# --- elementwise, binary (broadcasting) ---------------------------------------
ADD = "Add"
SUB = "Sub"
MUL = "Mul"
DIV = "Div"                   # float inputs (ops promote ints to float first)
FLOOR_DIVIDE = "FloorDivide"  # a // b as PyTorch: ints exact (by zero: an error on cpu), floats from fmod
REMAINDER = "Remainder"       # a % b with the sign of b, as PyTorch (floats from fmod)
FMOD = "Fmod"                 # C's fmod: the sign of a (ints: by zero an error on cpu)
POW = "Pow"
MAXIMUM = "Maximum"
MINIMUM = "Minimum"
ATAN2 = "Atan2"
EQUAL = "Equal"               # -> bool
NOT_EQUAL = "NotEqual"        # -> bool
LESS = "Less"                 # -> bool
LESS_EQUAL = "LessEqual"      # -> bool
GREATER = "Greater"           # -> bool
GREATER_EQUAL = "GreaterEqual"  # -> bool
LOGICAL_AND = "LogicalAnd"    # -> bool
LOGICAL_OR = "LogicalOr"      # -> bool
LOGICAL_XOR = "LogicalXor"    # -> bool
WHERE = "Where"               # (cond: bool, a, b) -> a's dtype
ZETA = "Zeta"                 # (x, q) float -> the Hurwitz zeta function sum_k (k + q)^-x
COPYSIGN = "Copysign"         # (a, b) float -> |a| with b's sign bit
NEXTAFTER = "Nextafter"       # (a, b) float -> the next representable number after a toward b
GCD = "Gcd"                   # (a, b) integer -> the greatest common divisor (non-negative; gcd(0, 0) = 0)
LCM = "Lcm"                   # (a, b) integer -> the least common multiple (non-negative; 0 with a 0)
IGAMMA = "Igamma"             # (a, x) float -> P(a, x), the regularized lower incomplete gamma function
IGAMMAC = "Igammac"           # (a, x) float -> Q(a, x) = 1 - P(a, x), the upper one
BITWISE_AND = "BitwiseAnd"    # integer or bool
BITWISE_OR = "BitwiseOr"      # integer or bool
BITWISE_XOR = "BitwiseXor"    # integer or bool
LEFT_SHIFT = "LeftShift"      # integer: a << b, 0 where b < 0 or b >= the bit width (PyTorch's)
RIGHT_SHIFT = "RightShift"    # integer: a >> b, arithmetic; b < 0 or b >= the bit width fills with a's sign

BINARY = (ADD, SUB, MUL, DIV, FLOOR_DIVIDE, REMAINDER, FMOD, POW, MAXIMUM, MINIMUM, ATAN2, EQUAL, NOT_EQUAL, LESS,
          LESS_EQUAL, GREATER, GREATER_EQUAL, LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR, ZETA, BITWISE_AND, BITWISE_OR,
          BITWISE_XOR, LEFT_SHIFT, RIGHT_SHIFT)
BITWISE = (BITWISE_AND, BITWISE_OR, BITWISE_XOR, LEFT_SHIFT, RIGHT_SHIFT, BITWISE_NOT)   # integer (and bool) only

# --- reductions (axes: tuple of normalised ints, keepdim: bool) ----------------
SUM = "Sum"
PROD = "Prod"
MAX = "Max"
MIN = "Min"
ALL = "All"                   # -> bool
ANY = "Any"                   # -> bool
ARGMAX = "ArgMax"             # axis: int, keepdim: bool -> int32 (first occurrence)
ARGMIN = "ArgMin"             # axis: int, keepdim: bool -> int32 (first occurrence)
CUMSUM = "Cumsum"             # axis: int

# --- sorting ------------------------------------------------------------------------
SORT = "Sort"                 # axis: int, descending: bool; x of rank >= 1 -> (values, indices: int64) along axis,
                              # stable (equal keys keep their order, descending too), NaN above every number
                              # (last ascending, first descending), -0.0 equal to 0.0

# --- linear algebra -------------------------------------------------------------
MATMUL = "MatMul"             # (a[..., m, k], b[..., k, n]) with batch broadcasting;
                              # transpose_a, transpose_b: bool (operands given transposed)
LU_FACTOR = "LuFactor"        # a[..., n, n] float -> (lu[..., n, n], pivots: int32 [..., n], perm: int64 [..., n],
                              # info: int32 [...]): LAPACK's getrf with partial pivoting (the first largest |pivot|),
                              # L (unit diagonal, not stored) and U packed in lu; pivots 1-based row swaps; perm the
                              # rows of a that make L U (a[perm] = L U); info the 1-based first zero pivot, or 0
TRIANGULAR_SOLVE = "TriangularSolve"  # (a[..., n, n], b[..., n, k]), one batch shape; upper, unitriangular: bool
                              # -> x with tri(a) x = b, tri(a) a's upper or lower triangle (diagonal taken as 1
                              # when unitriangular; the other triangle never read); a zero diagonal gives inf/NaN
CHOLESKY = "Cholesky"          # a[..., n, n] float (its lower triangle read) -> (l[..., n, n] lower triangular, zeros
                              # above, info: int32 [...]: 0, or the 1-based order of the first leading minor that is
                              # not positive-definite, after which l holds NaN)
GEQRF = "Geqrf"               # a[..., m, n] float -> (a2[..., m, n], tau[..., min(m, n)]): LAPACK's geqrf, Householder
                              # QR: R on and above a2's diagonal, reflector k's vector below it (its leading 1 not
                              # stored), H_k = I - tau_k v v^T, beta = -sign(alpha) |x| (no reflection when x[1:] = 0)
HOUSEHOLDER_PRODUCT = "HouseholderProduct"  # (a[..., m, n], tau[..., k]), k <= n <= m -> q[..., m, n]: the first n
                              # columns of H_0 H_1 ... H_{k-1} from the reflectors in a's first k columns (LAPACK's orgqr)
SVD = "Svd"                   # a[..., m, n] float -> (u[..., m, k], s[..., k], vh[..., k, n]), k = min(m, n): the thin
                              # SVD, s descending (the vectors' signs are the backend's: LAPACK's gesdd on cpu)
EIGH = "Eigh"                 # a[..., n, n] float, symmetric -> (w[..., n] ascending, v[..., n, n]): A = V diag(w) V^T

# --- movement -------------------------------------------------------------------
RESHAPE = "Reshape"           # shape: tuple (fully resolved)
TRANSPOSE = "Transpose"       # perm: tuple
EXPAND = "Expand"             # shape: tuple (broadcast_to)
SLICE = "Slice"               # begin, end, step: tuples, one per dim, each dim as range(begin, end, step)
                              # (what slice.indices(n) gives; step may be negative)
CONCAT = "Concat"             # axis: int; any number of inputs
SPLIT = "Split"               # sizes: tuple, axis: int -> one output per size: x's consecutive pieces along axis
PAD = "Pad"                   # pads: tuple of (before, after) per dim, value: float (constant mode)
AS_STRIDED = "AsStrided"      # shape, strides, offset: out[c] = x.flat[offset + c . strides] (a view's
                              # elements read from its root; strides >= 0, no two elements at one place)
AS_STRIDED_SCATTER = "AsStridedScatter"  # (x, src) shape, strides, offset: a copy of x with
                              # x.flat[offset + c . strides] = src[c] (a view written into its root)

# --- indexing -------------------------------------------------------------------
GATHER = "Gather"             # (x, index: int32) axis: int  -- torch.gather semantics
SCATTER_ADD = "ScatterAdd"    # (x, index: int32, src) axis: int -- torch.scatter_add semantics
INDEX_COPY = "IndexCopy"      # (x, index: int [M], source) axis: int -- torch.index_copy: x with slice
                              # index[j] along axis replaced by source's slice j; the last j wins where
                              # index repeats (numpy's rule); an index outside [0, x.shape[axis]) is refused
NONZERO = "NonZero"           # x (any dtype) -> int64 [count, x.ndim]: the coordinates of x's nonzero elements,
                              # row-major (torch.nonzero); count depends on the data (the GPU reads it back)

# --- creation (no tensor inputs; run on the given backend) -----------------------
FILL = "Fill"                 # shape, value, dtype
ARANGE = "Arange"             # start, step, size: int, dtype
LINSPACE = "Linspace"         # start, end, steps: int, dtype -- torch.linspace's values: with step = (end - start)
                              # / (steps - 1) in dtype (float64 for integers), start + step * i for i < steps // 2
                              # and end - step * (steps - 1 - i) after, each a fused multiply-add
RANDOM_VALUES = "RandomValues"  # shape, dtype, values: a flat host (numpy) array a Generator drew, uploaded

# --- neural-network windows -----------------------------------------------------
IM2COL = "Im2Col"             # x[N, C, H, W] -> [N, C*kh*kw, L]; kernel_size, stride, padding, dilation (pairs)
COL2IM = "Col2Im"             # cols[N, C*kh*kw, L] -> [N, C, H, W] summing overlaps; output_size + the above

# --- fused losses ------------------------------------------------------------------
SOFTMAX_CROSS_ENTROPY = "SoftmaxCrossEntropy"   # (logits[N, C], target[N] int32) ignore_index: int,
                              # reduction: "none" -> loss[N] (logsumexp(row) - row[target], 0 where
                              # target == ignore_index) | "sum" -> 0-d | "mean" -> 0-d: sum / kept rows (NaN if none)

# --- fused neural-network kernels (one pass where the composed ops would take several) ----------
SOFTMAX = "Softmax"           # axis: int -> exp(x - max) / sum(exp(x - max)) along axis (a float dtype)
LOG_SOFTMAX = "LogSoftmax"    # axis: int -> x - max - log(sum(exp(x - max))) along axis
SOFTMAX_GRAD = "SoftmaxGrad"  # (dy, y) axis: int -> y * (dy - sum(dy * y, axis)): Softmax's backward
LOG_SOFTMAX_GRAD = "LogSoftmaxGrad"   # (dy, y) axis: int -> dy - exp(y) * sum(dy, axis): LogSoftmax's backward
GELU_GRAD = "GeluGrad"        # (dy, x, y = gelu(x)) approximate: "none" | "tanh" -> dy * gelu'(x): Gelu's backward
LAYER_NORM = "LayerNorm"      # (x[, weight][, bias]) ndim: int (the trailing dims normalised), eps: float,
                              # has_weight, has_bias: bool -> (y, mean, rstd): y = (x - mean) * rstd * weight
                              # + bias, rstd = 1 / sqrt(var + eps), var biased (PyTorch's native_layer_norm);
                              # weight and bias shaped as the trailing ndim dims, mean and rstd as x with
                              # those dims of size 1 (float32 for half precision input)
LAYER_NORM_GRAD = "LayerNormGrad"     # (dy, x, mean, rstd[, weight]) as LayerNorm's attrs ->
                              # (dx[, dweight][, dbias]): LayerNorm's backward, from the forward's statistics
ATTENTION = "Attention"       # (q[N, L, E], k[N/group, S, E], v[N/group, S, Ev][, mask[M, L, S]]) scale: float,
                              # causal: bool (key j > query i masked), group: int (query n reads keys n // group),
                              # mask_div: int (query n adds mask (n // mask_div) % M, an additive float mask)
                              # -> (out[N, L, Ev], lse[N, L]): softmax(q k^T * scale + mask) v and each row's
                              # log-sum-exp; a row with every key masked gives out 0 and lse -inf (PyTorch's)
ATTENTION_GRAD = "AttentionGrad"      # (dout, q, k, v, out, lse, dlse[, mask]) as Attention's attrs, and
                              # mask_grad: bool -> (dq, dk, dv[, dmask[N, L, S]]): Attention's backward from
                              # its saved out and lse (dmask, the scores' gradient, when mask_grad)

# --- optimizer updates (run under no_grad: no gradient) ------------------------------------------
ADAM_STEP = "AdamStep"        # (param, grad, exp_avg, exp_avg_sq), one shape and float dtype; decay: float
                              # (the parameter's decoupled-decay factor 1 - lr*wd, 1.0 for none), weight_decay:
                              # float (L2: wd * param added to the gradient), beta1, beta2, eps: float,
                              # correction2: float (sqrt(1 - beta2**step)), step_size: float
                              # (lr / (1 - beta1**step)), maximize: bool -> (param, exp_avg, exp_avg_sq):
                              # one Adam/AdamW step in PyTorch's single-tensor order of operations

# --- backward kernels (optional, per backend) ------------------------------------------------------
# A gradient rule may name one (``register_gradient(..., kernel=...)``): a backward that records
# nothing runs it, where the node's backend registers it, instead of the rule. Each takes the output
# gradient then the rule's saved tensors, and as keywords the forward kernel's attrs plus ``needs``
# (per input: whether it wants a gradient), ``shapes`` and ``dtypes`` (per input); it returns one
# gradient (or None) per input, in the input's dtype and its shape or a broadcast of it. A backend
# without one runs the rule (written with ops): cpu has them, the GPU backends do not.
ADD_GRAD = "AddGrad"          # (dy) -> (dy, dy)
SUB_GRAD = "SubGrad"          # (dy) -> (dy, -dy)
MUL_GRAD = "MulGrad"          # (dy, a, b) -> (dy * b, dy * a)
DIV_GRAD = "DivGrad"          # (dy, a, b) -> (dy / b, -dy * ((a / b) / b))
NEG_GRAD = "NegGrad"          # (dy) -> (-dy,)
EXP_GRAD = "ExpGrad"          # (dy, y) -> (dy * y,)
LOG_GRAD = "LogGrad"          # (dy, x) -> (dy / x,)
TANH_GRAD = "TanhGrad"        # (dy, y) -> (dy * (1 - y^2),)
SIGMOID_GRAD = "SigmoidGrad"  # (dy, y) -> (dy * y * (1 - y),)
RELU_GRAD = "ReluGrad"        # (dy, y) -> (where(y > 0, dy, 0),)
WHERE_GRAD = "WhereGrad"      # (dy, cond) -> (None, where(cond, dy, 0), where(cond, 0, dy))
CAST_GRAD = "CastGrad"        # (dy) -> (dy as the input's dtype,)
SUM_GRAD = "SumGrad"          # (dy) -> (dy broadcast to the input's shape,)
MAX_GRAD = "MaxGrad"          # (dy, x, y) -> (dy shared among the elements equal to the max,)
MIN_GRAD = "MinGrad"          # (dy, x, y) -> (dy shared among the elements equal to the min,)
MATMUL_GRAD = "MatMulGrad"    # (dy, a, b) -> (dy b^T, a^T dy), as MatMul's transposes
RESHAPE_GRAD = "ReshapeGrad"  # (dy) -> (dy in the input's shape,)
TRANSPOSE_GRAD = "TransposeGrad"  # (dy) -> (dy transposed back,)
EXPAND_GRAD = "ExpandGrad"    # (dy) -> (dy,) (the engine sums it to the input's shape)
GATHER_GRAD = "GatherGrad"    # (dy, index) -> (scatter_add(zeros, index, dy), None)
IM2COL_GRAD = "Im2ColGrad"    # (dy) -> (col2im(dy),)
SOFTMAX_CROSS_ENTROPY_GRAD = "SoftmaxCrossEntropyGrad"   # (dy, logits, target) -> ((softmax - onehot) * dy, None)

BACKWARD_KERNELS = frozenset({
    ADD_GRAD, SUB_GRAD, MUL_GRAD, DIV_GRAD, NEG_GRAD, EXP_GRAD, LOG_GRAD, TANH_GRAD, SIGMOID_GRAD, RELU_GRAD,
    WHERE_GRAD, CAST_GRAD, SUM_GRAD, MAX_GRAD, MIN_GRAD, MATMUL_GRAD, RESHAPE_GRAD, TRANSPOSE_GRAD, EXPAND_GRAD,
    GATHER_GRAD, IM2COL_GRAD, SOFTMAX_CROSS_ENTROPY_GRAD})
