#!/usr/bin/python3
"""Writes Zarr v2 arrays and an OME-Zarr 0.4 image with Debian's python3-zarr (2.13), and the
values StackLens must read from them. Run by the io tests at test time (zarr_v2_test.cpp):
    /usr/bin/python3 make_zarr_v2.py OUTDIR
Outputs, in OUTDIR:
  <name>.zarr/      the array or image
  <name>.f32        expected float32 values, little-endian, in (plane, z, y, x) order with the
                    plane index as StackLens counts it (channel fastest, then the other axes
                    from the last to the first)
  manifest.txt      one line per case: name planes z y x
"""
import json
import os
import sys

import numpy as np
import zarr
from numcodecs import GZip, Zlib, Zstd, Blosc

out = sys.argv[1]
manifest = []


def values(shape, dtype, seed):
    """Deterministic values spanning the type's range (a few extremes, the rest mixed)."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    if np.dtype(dtype).kind == "b":
        v = (i * 7 + seed) % 3 == 0
    elif np.dtype(dtype).kind == "f":
        v = ((i * 37 + seed) % 1001).astype(np.float64) * 0.37 - 150.0
    else:
        info = np.iinfo(dtype)
        span = min(int(info.max) - int(info.min), 2**31)
        v = ((i * 7919 + seed) % span + max(int(info.min), -(2**30))).astype(dtype)
        v[:2] = [info.min, info.max]  # the extremes, which float32 rounds as C++ does
    return np.asarray(v).astype(dtype).reshape(shape)


def expect(name, data, planes_first=True):
    """data in (plane..., z, y, x) array order; written flat (C order)."""
    a = np.asarray(data)
    shape = a.shape
    y, x = shape[-2], shape[-1]
    z = shape[-3] if a.ndim >= 3 else 1
    planes = int(np.prod(shape[:-3])) if a.ndim > 3 else 1
    a.astype(np.float32).astype("<f4").tofile(os.path.join(out, name + ".f32"))
    manifest.append(f"{name} {planes} {z} {y} {x}")


def array(name, data, chunks, **kw):
    z = zarr.open(os.path.join(out, name + ".zarr"), mode="w", shape=data.shape, chunks=chunks,
                  dtype=data.dtype, **kw)
    z[...] = data
    return z


# Compressors, C order.
d = values((5, 17, 23), "f4", 1)
array("blosc_f4", d, (2, 8, 10), compressor=Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE))
expect("blosc_f4", d)
d = values((3, 9, 11), "<i2", 2)
array("zstd_i2_F", d, (2, 4, 5), compressor=Zstd(level=3), order="F")
expect("zstd_i2_F", d)
d = values((4, 6, 7), "u1", 3)
array("gzip_u1_slash", d, (3, 4, 4), compressor=GZip(level=5), dimension_separator="/")
expect("gzip_u1_slash", d)
d = values((2, 10, 9), "<u2", 4)
array("zlib_u2", d, (1, 3, 9), compressor=Zlib(level=1))
expect("zlib_u2", d)
d = values((3, 5, 8), "<f8", 5)
array("none_f8_F_slash", d, (2, 2, 3), compressor=None, order="F", dimension_separator="/")
expect("none_f8_F_slash", d)
# Blosc with bit shuffle and zstd inside, big-endian types.
d = values((2, 7, 6), ">f8", 6)
array("blosc_be_f8", d, (1, 4, 4), compressor=Blosc(cname="zstd", clevel=3, shuffle=Blosc.BITSHUFFLE))
expect("blosc_be_f8", d)
d = values((2, 7, 6), ">i4", 7)
array("none_be_i4", d, (2, 3, 3), compressor=None)
expect("none_be_i4", d)
# Every other type the v2 spec's NumPy strings cover here.
for t in ["|b1", "|i1", "<i4", "<i8", "<u4", "<u8", "<f2"]:
    d = values((2, 5, 6), t, 8)
    name = "type_" + t[1:]
    array(name, d, (1, 3, 4), compressor=Zstd(level=1))
    expect(name, d)
# Missing chunks read as the fill value: NaN, Infinity, a number.
for name, fill, t in [("fill_nan", np.nan, "<f4"), ("fill_inf", np.inf, "<f4"),
                      ("fill_7", 7, "<u2")]:
    shape = (3, 8, 9)
    full = np.full(shape, fill, dtype=t)
    z = zarr.open(os.path.join(out, name + ".zarr"), mode="w", shape=shape, chunks=(2, 4, 4),
                  dtype=t, fill_value=fill, compressor=Zstd(level=1))
    part = values((2, 4, 5), t, 9)
    z[0:2, 4:8, 4:9] = part  # the chunks it touches are written; the others never are
    full[0:2, 4:8, 4:9] = part
    expect(name, full)
# More than three axes: the first is the plane; a 2-D array is one slice.
d = values((2, 3, 6, 7), "<f4", 10)
array("planes_4d", d, (1, 2, 4, 4), compressor=Zstd(level=1))
expect("planes_4d", d)
d = values((13, 11), "<i2", 11)
array("plain_2d", d, (5, 5), compressor=GZip(level=1))
expect("plain_2d", d)

# OME-Zarr 0.4: axes c, z, y, x with units and scales, two levels, omero channel hints.
root = zarr.open_group(os.path.join(out, "ome04.zarr"), mode="w")
level0 = values((2, 4, 12, 10), "<u2", 12)
level1 = level0[:, :, ::2, ::2].copy()
root.create_dataset("0", data=level0, chunks=(1, 2, 5, 5), compressor=Blosc(cname="zstd"))
root.create_dataset("1", data=level1, chunks=(1, 2, 3, 3), compressor=Zstd(level=1))
root.attrs["multiscales"] = [{
    "version": "0.4",
    "name": "ome04",
    "axes": [{"name": "c", "type": "channel"},
             {"name": "z", "type": "space", "unit": "micrometer"},
             {"name": "y", "type": "space", "unit": "micrometer"},
             {"name": "x", "type": "space", "unit": "micrometer"}],
    "datasets": [
        {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1, 0.5, 0.2, 0.25]}]},
        {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1, 0.5, 0.4, 0.5]}]},
    ],
}]
root.attrs["omero"] = {"channels": [
    {"label": "DAPI", "color": "0000FF", "window": {"start": 10, "end": 900, "min": 0, "max": 65535}, "active": True},
    {"label": "GFP", "color": "00FF00", "window": {"start": 0, "end": 4000, "min": 0, "max": 65535}, "active": False},
]}
expect("ome04", level0)
expect("ome04_level1", level1)

with open(os.path.join(out, "manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
print("zarr v2 cases written:", len(manifest))
