"""Projections and moment maps against NumPy: numpy's nan-functions over axis 0, and CASA's
moment formulas written with NumPy (the CUDA backend against the same when STACKLENS_BACKEND is
cuda)."""

import os
import unittest
import warnings

import numpy as np

import stacklens as sl

BACKEND = os.environ.get("STACKLENS_BACKEND", "cpu")


def cube_with_gaps(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(3.0, 2.0, shape).astype(np.float32)
    a[rng.random(shape) < 0.1] = np.nan
    a[:, 0, 0] = np.nan  # one column without values
    return a


def numpy_projection(a, op):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        if op == "sum":
            out = np.nansum(a.astype(np.float64), axis=0)
            out[np.all(np.isnan(a), axis=0)] = np.nan
            return out
        f = {"max": np.nanmax, "min": np.nanmin, "mean": np.nanmean, "std": np.nanstd,
             "median": np.nanmedian}[op]
        return f(a.astype(np.float64), axis=0)


class Projections(unittest.TestCase):
    def test_each_projection_is_numpys_over_a_range(self):
        a = cube_with_gaps((17, 23, 31), 1)
        for op in ("max", "min", "mean", "sum", "std", "median"):
            for first, last in ((0, None), (4, 11), (16, 16)):
                got = sl.project(a, op, first=first, last=last, backend=BACKEND)
                want = numpy_projection(a[first:None if last is None else last + 1], op)
                self.assertEqual(got.shape, (23, 31))
                np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6, equal_nan=True,
                                           err_msg=f"{op} {first}..{last}")

    def test_bad_arguments_raise_value_errors(self):
        a = cube_with_gaps((5, 4, 4), 2)
        with self.assertRaisesRegex(ValueError, "projection"):
            sl.project(a, "average", backend=BACKEND)
        with self.assertRaisesRegex(ValueError, "slice range"):
            sl.project(a, "max", first=3, last=2, backend=BACKEND)


class Moments(unittest.TestCase):
    def test_moments_follow_casas_formulas(self):
        a = cube_with_gaps((20, 12, 14), 3)
        v = 1420.0 - 0.37 * np.arange(20) + 0.01 * np.arange(20) ** 2  # an uneven axis
        width = np.abs(np.gradient(v))
        for first, last, clip in ((0, 19, None), (3, 15, 2.5)):
            part = a[first:last + 1].astype(np.float64)
            keep = ~np.isnan(part) & (part >= (clip if clip is not None else -np.inf))
            w = np.where(keep, part, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                m0 = (w * width[first:last + 1, None, None]).sum(0)
                m1 = (w * v[first:last + 1, None, None]).sum(0) / w.sum(0)
                m2 = np.sqrt((w * (v[first:last + 1, None, None] - m1) ** 2).sum(0) / w.sum(0))
            none = ~keep.any(0)
            for order, want in ((0, m0), (1, m1), (2, m2)):
                want = np.where(none, np.nan, want)
                got = sl.moment(a, order, coordinate=v, first=first, last=last, clip=clip,
                                backend=BACKEND)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True,
                                           err_msg=f"moment {order}, {first}..{last}")

    def test_without_coordinates_the_axis_is_the_slice_index(self):
        a = np.zeros((5, 1, 1), np.float32)
        a[3] = 2.0
        self.assertEqual(sl.moment(a, 1, backend=BACKEND)[0, 0], 3.0)
        self.assertEqual(sl.moment(a, 0, backend=BACKEND)[0, 0], 2.0)
        with self.assertRaisesRegex(ValueError, "coordinates"):
            sl.moment(a, 1, coordinate=[1.0, 2.0], backend=BACKEND)


if __name__ == "__main__":
    unittest.main()
