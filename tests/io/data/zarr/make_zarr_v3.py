#!/usr/bin/python3
"""Writes the small Zarr v3 and OME-Zarr 0.5 fixtures of tests/io by hand, following the Zarr v3
core spec and its sharding_indexed codec (python3-zarr 2.13 cannot write v3): NumPy for the
values, numcodecs for zstd/gzip/blosc, json for the metadata, CRC-32C written out below.
    /usr/bin/python3 tests/io/data/zarr/make_zarr_v3.py
Outputs, in v3/ next to this script (committed; a few tens of kB):
  <name>.zarr/   the array or image
  <name>.f32     expected float32 values, little-endian, (plane, z, y, x) order (see
                 make_zarr_v2.py for the plane order)
  manifest.txt   one line per case: name planes z y x
"""
import itertools
import json
import os
import shutil

import numpy as np
from numcodecs import Blosc, GZip, Zstd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "v3")
manifest = []


def crc32c(data):
    """CRC-32C (Castagnoli, reflected 0x82F63B78), as the v3 crc32c codec appends it."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


def encode(block, codecs, dtype):
    """Applies a v3 codec list (without sharding) to one full-size chunk."""
    a = block
    out = None
    for c in codecs:
        name, conf = c["name"], c.get("configuration", {})
        if name == "transpose":
            a = np.transpose(a, conf["order"])
        elif name == "bytes":
            endian = conf.get("endian", "little")
            out = np.ascontiguousarray(a).astype(np.dtype(dtype).newbyteorder(
                "<" if endian == "little" else ">")).tobytes()
        elif name == "zstd":
            out = Zstd(level=conf.get("level", 1)).encode(out)
        elif name == "gzip":
            out = GZip(level=conf.get("level", 1)).encode(out)
        elif name == "blosc":
            out = Blosc(cname=conf["cname"], clevel=conf["clevel"],
                        shuffle={"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[conf["shuffle"]]
                        ).encode(out)
        elif name == "crc32c":
            out = bytes(out) + crc32c(bytes(out)).to_bytes(4, "little")
        else:
            raise ValueError(name)
    return bytes(out)


def chunk_of(data, fill, origin, shape):
    """The chunk at origin, padded with the fill value past the array's edge."""
    block = np.full(shape, fill, dtype=data.dtype)
    region = tuple(slice(o, min(o + s, n)) for o, s, n in zip(origin, shape, data.shape))
    block[tuple(slice(0, r.stop - r.start) for r in region)] = data[region]
    return block


def key(grid, encoding, sep):
    if encoding == "default":
        return "c" + "".join(sep + str(g) for g in grid)
    return sep.join(str(g) for g in grid)


def write_array(folder, data, chunks, codecs, fill, fill_json, dtype_name, encoding="default",
                sep="/", skip=(), attributes=None, dimension_names=None):
    """Writes every chunk except those whose grid position is in skip, and zarr.json."""
    os.makedirs(folder, exist_ok=True)
    meta = {
        "zarr_format": 3, "node_type": "array", "shape": list(data.shape),
        "data_type": dtype_name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": encoding, "configuration": {"separator": sep}},
        "fill_value": fill_json, "codecs": codecs,
    }
    if attributes:
        meta["attributes"] = attributes
    if dimension_names:
        meta["dimension_names"] = dimension_names
    with open(os.path.join(folder, "zarr.json"), "w") as f:
        json.dump(meta, f, indent=2)
    grid = [-(-n // c) for n, c in zip(data.shape, chunks)]
    sharding = codecs[0]["name"] == "sharding_indexed"
    for g in itertools.product(*map(range, grid)):
        if g in skip:
            continue
        origin = [a * c for a, c in zip(g, chunks)]
        if sharding:
            stored = encode_shard(data, fill, origin, chunks, codecs[0]["configuration"])
        else:
            stored = encode(chunk_of(data, fill, origin, chunks), codecs, data.dtype)
        path = os.path.join(folder, *key(g, encoding, sep).split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(stored)


def encode_shard(data, fill, origin, shard, conf):
    """sharding_indexed: inner chunks in C order, then (offset, nbytes) uint64 pairs; inner chunks
    that are all fill (or wholly past the edge) are left out and marked 2^64-1."""
    inner = conf["chunk_shape"]
    per = [s // i for s, i in zip(shard, inner)]
    body, index = b"", []
    for g in itertools.product(*map(range, per)):
        at = [o + a * i for o, a, i in zip(origin, g, inner)]
        block = chunk_of(data, fill, at, inner)
        outside = any(a >= n for a, n in zip(at, data.shape))
        if outside or np.array_equal(block, np.full(inner, fill, dtype=data.dtype), equal_nan=True):
            index.append((2**64 - 1, 2**64 - 1))
            continue
        stored = encode(block, conf["codecs"], data.dtype)
        index.append((len(body), len(stored)))
        body += stored
    names = [c["name"] for c in conf["index_codecs"]]
    index_bytes = np.array(index, dtype="<u8").tobytes()
    index_size = len(index_bytes) + (4 if "crc32c" in names else 0)
    if conf.get("index_location", "end") == "start":
        index = [(o + index_size, n) if o != 2**64 - 1 else (o, n) for o, n in index]
        index_bytes = np.array(index, dtype="<u8").tobytes()
    if "crc32c" in names:
        index_bytes += crc32c(index_bytes).to_bytes(4, "little")
    if conf.get("index_location", "end") == "start":
        return index_bytes + body
    return body + index_bytes


def values(shape, dtype, seed):
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    k = np.dtype(dtype).kind
    if k == "b":
        v = (i * 5 + seed) % 3 == 1
    elif k == "f":
        v = ((i * 41 + seed) % 997).astype(np.float64) * 0.25 - 100.0
    else:
        info = np.iinfo(dtype)
        span = min(int(info.max) - int(info.min), 2**31)
        v = ((i * 7919 + seed) % span + max(int(info.min), -(2**30))).astype(dtype)
        v[:2] = [info.min, info.max]
    return np.asarray(v).astype(dtype).reshape(shape)


def expect(name, a):
    a = np.asarray(a)
    z = a.shape[-3] if a.ndim >= 3 else 1
    planes = int(np.prod(a.shape[:-3])) if a.ndim > 3 else 1
    a.astype("<f4").tofile(os.path.join(OUT, name + ".f32"))
    manifest.append(f"{name} {planes} {z} {a.shape[-2]} {a.shape[-1]}")


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}

shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)

# Plain chunks, zstd, default keys "c/…", NaN fill, one chunk never written.
d = values((3, 10, 12), "<f4", 1)
write_array(os.path.join(OUT, "zstd_f4.zarr"), d, (2, 4, 5),
            [BYTES, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
            np.nan, "NaN", "float32", skip={(1, 0, 0)})
d[2:3, 0:4, 0:5] = np.nan
expect("zstd_f4", d)

# Transpose, big-endian bytes, gzip, "v2" keys with ".".
d = values((4, 6, 7), "<i2", 2)
write_array(os.path.join(OUT, "transpose_be_i2.zarr"), d, (3, 4, 4),
            [{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
             {"name": "bytes", "configuration": {"endian": "big"}},
             {"name": "gzip", "configuration": {"level": 5}}],
            0, 0, "int16", encoding="v2", sep=".")
expect("transpose_be_i2", d)

# Sharding: blosc inner chunks, index at the end with crc32c; one inner chunk all fill (left out
# of its shard), one shard never written.
d = values((5, 16, 20), "<u2", 3)
d[0, 4:8, 5:10] = 3
sharded = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [1, 4, 5],
    "codecs": [BYTES, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}],
    "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}
write_array(os.path.join(OUT, "sharded_u2.zarr"), d, (2, 8, 10), [sharded], 3, 3, "uint16",
            skip={(1, 1, 1)})
d[2:4, 8:16, 10:20] = 3
expect("sharded_u2", d)

# Sharding with the index at the start (no checksum), gzip + crc32c inner chunks, "c.0.0.0" keys,
# shards that run past the array's edge.
d = values((2, 9, 11), "<f8", 4)
start = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [1, 3, 3],
    "codecs": [BYTES, {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}],
    "index_codecs": [BYTES], "index_location": "start"}}
write_array(os.path.join(OUT, "shard_start_f8.zarr"), d, (2, 6, 6), [start], 0.0, 0.0, "float64",
            sep=".")
expect("shard_start_f8", d)

# The other core types; float16 with an Infinity fill and a missing chunk, float32 with a hex fill.
for t, name, fill, fill_json in [("|b1", "bool", False, False), ("|i1", "int8", 0, 0),
                                 ("<i8", "int64", 0, 0), ("<u4", "uint32", 0, 0),
                                 ("<u8", "uint64", 0, 0), ("<f2", "float16", np.inf, "Infinity"),
                                 ("<f4", "float32", np.nan, "0x7fc00000")]:
    d = values((2, 5, 6), t, 5)
    skip = {(1, 1, 1)} if name.startswith("float") else set()
    write_array(os.path.join(OUT, "type_" + name + ".zarr"), d, (1, 3, 4), [BYTES], fill,
                fill_json, name, skip=skip)
    if skip:
        d[1:2, 3:5, 4:6] = fill
    expect("type_" + name, d)

# OME-Zarr 0.5: t, c, z, y, x; level 0 sharded, level 1 plain zstd; units, scales, omero.
root = os.path.join(OUT, "ome05.zarr")
level0 = values((2, 2, 3, 8, 9), "<u2", 6)
level1 = level0[:, :, :, ::2, ::2].copy()
axes = [{"name": "t", "type": "time", "unit": "second"},
        {"name": "c", "type": "channel"},
        {"name": "z", "type": "space", "unit": "micrometer"},
        {"name": "y", "type": "space", "unit": "micrometer"},
        {"name": "x", "type": "space", "unit": "micrometer"}]
ome = {"version": "0.5", "multiscales": [{
    "name": "ome05", "axes": axes,
    "datasets": [
        {"path": "s0", "coordinateTransformations": [
            {"type": "scale", "scale": [2.0, 1.0, 0.75, 0.5, 0.5]}]},
        {"path": "s1", "coordinateTransformations": [
            {"type": "scale", "scale": [2.0, 1.0, 0.75, 1.0, 1.0]}]}],
    "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 2.0, 1.0, 1.0]}]}],
    "omero": {"channels": [
        {"label": "membrane", "color": "FF00FF", "window": {"start": 100, "end": 5000,
                                                          "min": 0, "max": 65535}, "active": True},
        {"label": "nuclei", "color": "00FFFF", "window": {"start": 0, "end": 2000,
                                                        "min": 0, "max": 65535}, "active": True}]}}
os.makedirs(root)
with open(os.path.join(root, "zarr.json"), "w") as f:
    json.dump({"zarr_format": 3, "node_type": "group", "attributes": {"ome": ome}}, f, indent=2)
shard0 = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [1, 1, 1, 4, 3],
    "codecs": [BYTES, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}
write_array(os.path.join(root, "s0"), level0, (1, 2, 3, 8, 9), [shard0], 0, 0, "uint16",
            dimension_names=["t", "c", "z", "y", "x"])
write_array(os.path.join(root, "s1"), level1, (1, 1, 2, 4, 5),
            [BYTES, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}], 0, 0,
            "uint16")
expect("ome05", level0)
expect("ome05_level1", level1)

with open(os.path.join(OUT, "manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
print("zarr v3 fixtures written:", len(manifest))
