#!/usr/bin/env python3
"""Writes http_fuzzer's seeds (tests/io/fuzz/http_fuzzer.cpp explains the layout): the answers a
well-behaved server gives, in the order the store asks, for a few committed v3 fixtures and a v2
array, plus the same with chunked bodies, a 404 and a 403 chunk. Standard library only."""
import json
import pathlib
import struct
import zlib

here = pathlib.Path(__file__).parent
fixtures = here.parent.parent / "data" / "zarr" / "v3"
out = here / "http"
out.mkdir(parents=True, exist_ok=True)
SEPARATOR = b"\n#next\n"


def answer(status, body=b"", headers=(), chunked=False, head=False):
    reason = {200: "OK", 206: "Partial Content", 403: "Forbidden", 404: "Not Found"}[status]
    lines = [b"HTTP/1.1 %d %s" % (status, reason.encode())]
    lines += [h.encode() for h in headers]
    if chunked:
        lines.append(b"Transfer-Encoding: chunked")
        half = len(body) // 2
        parts = [p for p in (body[:half], body[half:]) if p]
        body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    else:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + (b"" if head else body)


def ranged(data, start, n):
    """A 206 answer to bytes start.. (start < 0: the last n) of data."""
    if start < 0:
        start = len(data) - n
    part = data[start:start + n]
    return answer(206, part, ["Content-Range: bytes %d-%d/%d" % (start, start + len(part) - 1,
                                                                  len(data))])


def write(name, answers):
    (out / name).write_bytes(SEPARATOR.join(answers))


def plain_v3(name, chunked=False, missing=None):
    """zarr.json twice (the image, then the array), then each slice's chunks, z by z."""
    missing = missing or {}
    folder = fixtures / (name + ".zarr")
    meta = json.loads((folder / "zarr.json").read_text())
    shape, chunk = meta["shape"], meta["chunk_grid"]["configuration"]["chunk_shape"]
    answers = [answer(200, (folder / "zarr.json").read_bytes(), chunked=chunked)] * 2
    grid = [(s + c - 1) // c for s, c in zip(shape, chunk)]
    for gz in range(grid[0]):
        for gy in range(grid[1]):
            for gx in range(grid[2]):
                key = "c/%d/%d/%d" % (gz, gy, gx)
                if key in missing or not (folder / key).exists():
                    answers.append(answer(missing.get(key, 404), b"absent"))
                else:
                    answers.append(answer(200, (folder / key).read_bytes(), chunked=chunked))
    return answers


def sharded_v3(name):
    """zarr.json twice, then slice by slice each inner chunk: its shard's index (once per
    shard), then its bytes, as ranges."""
    folder = fixtures / (name + ".zarr")
    meta = json.loads((folder / "zarr.json").read_text())
    shard = meta["chunk_grid"]["configuration"]["chunk_shape"]
    inner = meta["codecs"][0]["configuration"]["chunk_shape"]
    per = [s // i for s, i in zip(shard, inner)]
    count = per[0] * per[1] * per[2]
    index_bytes = 16 * count + 4  # with its crc32c
    answers = [answer(200, (folder / "zarr.json").read_bytes())] * 2
    grid = [(s + c - 1) // c for s, c in zip(meta["shape"], inner)]
    seen = set()
    for z in range(meta["shape"][0]):
        for gy in range(grid[1]):
            for gx in range(grid[2]):
                key = "c/%d/%d/%d" % (z // per[0], gy // per[1], gx // per[2])
                if not (folder / key).exists():
                    if key not in seen:
                        seen.add(key)
                        answers.append(answer(404, b"absent"))
                    continue
                data = (folder / key).read_bytes()
                if key not in seen:
                    seen.add(key)
                    answers.append(ranged(data, -1, index_bytes))
                slot = ((z % per[0]) * per[1] + gy % per[1]) * per[2] + gx % per[2]
                offset, nbytes = struct.unpack_from("<QQ", data,
                                                    len(data) - index_bytes + 16 * slot)
                if offset != 2**64 - 1:
                    answers.append(ranged(data, offset, nbytes))
    return answers


def v2_zlib():
    """zarr.json 404, HEAD .zarray, zarr.json 404 again, .zarray, then the chunks."""
    zarray = json.dumps({"zarr_format": 2, "shape": [2, 4, 5], "chunks": [1, 4, 5],
                         "dtype": "<u2", "compressor": {"id": "zlib", "level": 1},
                         "fill_value": 0, "filters": None, "order": "F"}).encode()
    return [answer(404, b"no"), answer(200, zarray, head=True), answer(404, b"no"),
            answer(200, zarray), answer(200, zlib.compress(bytes(range(40)))),
            answer(200, zlib.compress(bytes(range(40, 80))))]


write("v3_zstd_f4", plain_v3("zstd_f4"))
write("v3_zstd_f4_chunked", plain_v3("zstd_f4", chunked=True,
                                     missing={"c/0/1/1": 404, "c/1/0/2": 403}))
write("v3_sharded_u2", sharded_v3("sharded_u2"))
write("v2_zlib", v2_zlib())
