#!/usr/bin/env python3
"""Writes zarr_fuzzer's seeds (tests/io/fuzz/zarr_harness.h explains the layout) from the
committed v3 fixtures and a few v2 arrays spelled out here. Standard library only."""
import json
import pathlib
import zlib

here = pathlib.Path(__file__).parent
fixtures = here.parent.parent / "data" / "zarr" / "v3"
out = here / "zarr"
out.mkdir(parents=True, exist_ok=True)


def seed(name, v3, axes, meta, chunk, attributes=None):
    flags = (1 if v3 else 0) | (2 if attributes is not None else 0) | ((axes - 1) << 2)
    data = bytes([flags]) + meta.encode() + b"\0"
    if attributes is not None:
        data += attributes.encode() + b"\0"
    (out / name).write_bytes(data + chunk)


for name in ["zstd_f4", "transpose_be_i2", "sharded_u2", "shard_start_f8", "type_float16"]:
    folder = fixtures / (name + ".zarr")
    meta = (folder / "zarr.json").read_text()
    shape = json.loads(meta)["shape"]
    key = "c." + ".".join("0" * len(shape)) if name == "shard_start_f8" else \
        "0." * (len(shape) - 1) + "0" if name == "transpose_be_i2" else \
        "c/" + "/".join("0" * len(shape))
    seed("v3_" + name, True, len(shape), meta, (folder / key).read_bytes())

ome = json.loads((fixtures / "ome05.zarr" / "zarr.json").read_text())["attributes"]
ome["ome"]["multiscales"][0]["datasets"] = ome["ome"]["multiscales"][0]["datasets"][:1]
ome["ome"]["multiscales"][0]["datasets"][0]["path"] = "0"
s0 = fixtures / "ome05.zarr" / "s0"
seed("v3_ome05", True, 5, (s0 / "zarr.json").read_text(), (s0 / "c/0/0/0/0/0").read_bytes(),
     json.dumps(ome))

v2 = {"zarr_format": 2, "shape": [2, 4, 5], "chunks": [1, 4, 5], "dtype": "<u2",
      "compressor": {"id": "zlib", "level": 1}, "fill_value": 0, "filters": None, "order": "F"}
seed("v2_zlib_F", False, 3, json.dumps(v2), zlib.compress(bytes(range(40))))
v2.update(compressor=None, dtype=">f8", order="C", fill_value="NaN")
seed("v2_none_be", False, 3, json.dumps(v2), bytes(160))
attrs = {"multiscales": [{"version": "0.4", "axes": [
    {"name": "c", "type": "channel"}, {"name": "y", "type": "space", "unit": "micrometer"},
    {"name": "x", "type": "space", "unit": "micrometer"}],
    "datasets": [{"path": "0", "coordinateTransformations": [
        {"type": "scale", "scale": [1, 0.5, 0.5]}]}]}],
    "omero": {"channels": [{"label": "a", "color": "FF0000", "window": {"start": 0, "end": 9}}]}}
v2.update(dtype="|u1")
seed("v2_ome04", False, 3, json.dumps(v2), bytes(range(20)), json.dumps(attrs))
