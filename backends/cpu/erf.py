"""erf over numpy arrays, vectorised (numpy has no erf; ``math.erf`` per element costs ~0.4 µs each).

Three parts of the line, each a polynomial evaluated by Horner's rule:

* |x| < 1:       erf(x) = x P(x^2);
* 1 <= |x|:      erf(x) = sign(x) (1 - exp(-t^2) G(t)), t = |x| clipped to where erf rounds to 1
                 (6 in float64, 4.5 in float32), G = erfcx = exp(t^2) erfc(t), in one or two pieces.

The coefficients are Chebyshev interpolants computed at 50 digits (``tests/erf_fit.py`` remakes
them). Their truncation error is below 1e-16 relative (float64: P of degree 12, G of degree 18 on
[1, 2.5) and [2.5, 6)) or 5e-8 (float32: degrees 5 and 13); measured against mpmath on a dense grid,
the float64 result is within 1 ulp (as ``math.erf``) and the float32 one within 2.5 ulp
(``tests/test_erf_gelu.py``). float16 and bfloat16 are computed in float32.

The work goes by chunks of ``CHUNK`` elements, so that a chunk's temporaries stay in the cache
across the ~20 passes; the |x| >= 1 part runs on the elements that need it only.
"""
import numpy as np

CHUNK = 1 << 16      # a chunk's temporaries (256 KiB each in float32) stay in a core's L2 (2 MiB here)

P64 = (
    5.957176147748911e-11, -1.1372848856791674e-09, 1.4659775274047436e-08, -1.6350312701054695e-07,
    1.6461000484121368e-06, -1.4925595266831182e-05, 0.0001205533111164271, -0.000854832698083379,
    0.0052239776248180145, -0.026866170645076792, 0.11283791670954879, -0.3761263890318375,
    1.1283791670955126)
G1_64 = (
    3.000102602576273e-10, -1.2224937057975568e-09, 4.084618418115575e-09, -1.5873415383260977e-08,
    6.1252070760844e-08, -2.2789363581221837e-07, 8.271205251327796e-07, -2.9278897922625368e-06,
    1.0086685892130918e-05, -3.375536597808422e-05, 0.00010950528813741835, -0.00034353335207403353,
    0.001039204522468239, -0.0030209746515235288, 0.008404319207328103, -0.02225999524138518,
    0.055763630087087276, -0.13097634551448525, 0.2849722347374364)
G2_64 = (
    2.6130499237916227e-14, -1.5444309680073713e-13, 5.226678259039112e-13, -2.970813100575544e-12,
    1.899816327821733e-11, -1.0605883937745649e-10, 5.766276738349031e-10, -3.1312664695032626e-09,
    1.6781346847794838e-08, -8.855742973911781e-08, 4.6025987362341756e-07, -2.354598449005474e-06,
    1.1848093783906311e-05, -5.8595501055150296e-05, 0.0002845751568158226, -0.0013559331669571312,
    0.006331866273873993, -0.028944331414622843, 0.12934527478598792)
P32 = (
    -0.0005648059865503044, 0.004921762027877231, -0.02671505423226643, 0.11280316652505075, -0.37612343775327806,
    1.1283791261787373)
G32 = (
    -1.2598326722644082e-08, 5.578490465437938e-08, -1.0756909099105663e-07, 4.3754622117090806e-07,
    -2.3021648868845714e-06, 9.190754536006241e-06, -3.463836007102218e-05, 0.00013090601214954862,
    -0.000482226288004776, 0.0017197247820913268, -0.005934331880768833, 0.019758565429037932,
    -0.06323763774890935, 0.19366209714152902)

_TAILS = {   # dtype -> (clip, ((upper bound, center, G), ...)): erf(t) = 1 - exp(-t^2) G(t - center) for t >= 1
    np.dtype(np.float64): (6.0, ((2.5, 1.75, G1_64), (6.0, 4.25, G2_64))),
    np.dtype(np.float32): (4.5, ((4.5, 2.75, G32),)),
}
_SMALL = {np.dtype(np.float64): P64, np.dtype(np.float32): P32}


def horner(coefficients, z, out=None):
    """The polynomial with ``coefficients`` (highest power first) at ``z``, in z's dtype.

    >>> horner((1.0, 0.0, -1.0), np.array([2.0, 3.0])).tolist()
    [3.0, 8.0]
    """
    if out is None:
        out = np.empty(z.shape, z.dtype)
    out[...] = coefficients[0]
    for c in coefficients[1:]:
        out *= z
        out += c
    return out


def _tail(t, dtype):
    """1 - exp(-t^2) G(t) for t >= 1 (clipped where erf rounds to 1), piece by piece."""
    clip, ((lower, center, coefficients), *rest) = _TAILS[dtype]
    t = np.minimum(t, clip)
    g = horner(coefficients, t - center)
    for upper, center, coefficients in rest:
        g = np.where(t < lower, g, horner(coefficients, t - center))
        lower = upper
    return 1 - np.exp(-t * t) * g


def erf_into(x, out):
    """``out[:] = erf(x)`` for 1-d float32 or float64 arrays of one dtype (at most a chunk, for speed)."""
    horner(_SMALL[x.dtype], x * x, out)
    out *= x
    t = np.abs(x)
    far = np.flatnonzero(t >= 1)          # NaN stays in the first part: x P(x^2) is NaN
    if far.size:
        out[far] = np.copysign(_tail(t[far], x.dtype), x[far])
    return out


def by_chunks(fn, x, *rest, dtype=None):
    """``fn(x_chunk, *rest_chunks, out_chunk)`` over flat chunks of same-shaped arrays; the result has
    x's shape and ``dtype`` (x's by default). float16/bfloat16 inputs are computed in float32."""
    dtype = np.dtype(dtype or x.dtype)
    work = dtype if dtype.itemsize >= 4 else np.dtype(np.float32)
    flat = [np.ascontiguousarray(a, dtype=work).reshape(-1) for a in (x, *rest)]
    out = np.empty(flat[0].size, work)
    for i in range(0, out.size, CHUNK):
        fn(*[a[i:i + CHUNK] for a in flat], out[i:i + CHUNK])
    return out.reshape(x.shape).astype(dtype, copy=False)


def erf(x):
    """erf elementwise, in x's float dtype.

    >>> erf(np.array([0.0, 0.5, -3.0])).round(6).tolist()
    [0.0, 0.5205, -0.999978]
    """
    return by_chunks(erf_into, np.asarray(x))
