#!/usr/bin/python3
"""Reference sigma-clipped statistics for tests/compute/sigma_clip_test.cpp.

Run with Debian's python3 (python3-astropy 5.2, python3-numpy). Writes one raw little-endian
float32 file per case (sigma_clip_<name>.f32) and sigma_clip_expected.txt with one line per case:
  name kappa_lower kappa_upper maxiters(-1 = None) count
  all: n mean median std min max   clipped: n mean median std min max   iterations
The statistics are astropy's on the float64 copy of the float32 values (our accumulators are
double), with SigmaClip(cenfunc="median", stdfunc="std").
"""
import numpy as np
from astropy.stats import SigmaClip

rng = np.random.default_rng(20261122)


def sky(n):
    v = rng.normal(10.0, 2.0, n)
    hot = rng.integers(0, n, n // 50)
    v[hot] += rng.exponential(40.0, hot.size)
    return v


cases = []
v = sky(3001).astype(np.float32)
cases.append(("sky_odd", 3.0, 3.0, -1, v))
v = sky(4000).astype(np.float32)
v[rng.integers(0, v.size, 40)] = np.nan
v[rng.integers(0, v.size, 5)] = np.inf
v[rng.integers(0, v.size, 5)] = -np.inf
cases.append(("sky_nan_inf_even", 3.0, 3.0, -1, v))
cases.append(("asymmetric", 1.5, 2.5, -1, sky(2500).astype(np.float32)))
cases.append(("maxiters2", 2.0, 2.0, 2, sky(2222).astype(np.float32)))
cases.append(("constant", 3.0, 3.0, 10, np.full(257, 4.25, np.float32)))
cases.append(("far_from_zero", 3.0, 3.0, -1, (1.0e4 + rng.normal(0, 0.01, 3000)).astype(np.float32)))
cases.append(("heavy_tail", 2.0, 3.0, -1,
              (rng.standard_cauchy(5000) * 0.1).astype(np.float32)))
cases.append(("maxiters0_is_unlimited", 3.0, 3.0, 0, sky(500).astype(np.float32)))


def summary(x):
    x = x[np.isfinite(x)]
    if x.size == 0:
        return [0] + [float("nan")] * 5
    return [x.size, x.mean(), np.median(x), x.std(), x.min(), x.max()]


with open("sigma_clip_expected.txt", "w") as out:
    out.write("# written by make_sigma_clip_reference.py; see its docstring for the columns\n")
    for name, kl, ku, maxiters, v in cases:
        v.astype("<f4").tofile(f"sigma_clip_{name}.f32")
        d = v.astype(np.float64)
        sc = SigmaClip(sigma_lower=kl, sigma_upper=ku, maxiters=None if maxiters < 0 else maxiters,
                       cenfunc="median", stdfunc="std")
        kept = sc(d, masked=False, axis=None)
        fields = [name, kl, ku, maxiters, v.size] + summary(d) + summary(kept) + [sc._niterations]
        out.write(" ".join(repr(float(f)) if isinstance(f, (float, np.floating)) else str(f)
                           for f in fields) + "\n")
