"""Where a Dask run's time goes and what passes through the client (issue 39): a stack made here,
deconvolved by stacklens.dask on a LocalCluster of N workers (or a running scheduler) and written
with stacklens.dask.to_file. Prints the wall time, the bytes the workers sent (to the client and
to each other), the workers' busy seconds by kind of task (Dask's task stream) and how long the
client went on after the last task (the writing left to it: all of it when the chunks came to the
client, the flush and rename when the workers write).

    PYTHONPATH=build/release/python python3 python/bench/dask_to_file.py \\
        [--shape 64,512,512] [--chunks 32,256,256] [--workers 2] [--iterations 5] \\
        [--backend cpu] [--output OUT.fits] [--scheduler ADDRESS]
"""

import argparse
import collections
import os
import tempfile
import time

import dask
import numpy as np
from dask.utils import key_split
from distributed import Client, LocalCluster, get_task_stream

import stacklens as sl
import stacklens.dask as sld


def numbers(text):
    return tuple(int(v) for v in text.split(","))


def workers_sent(client):
    """Bytes the workers have sent so far: in all, and to anything but each other (the client,
    directly or through the scheduler)."""
    workers = set(client.scheduler_info()["workers"])
    logs = client.run(lambda dask_worker: list(dask_worker.transfer_outgoing_log))
    transfers = [t for log in logs.values() for t in log]
    return (sum(t["total"] for t in transfers),
            sum(t["total"] for t in transfers if t["who"] not in workers))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", type=numbers, default=(64, 512, 512))
    parser.add_argument("--chunks", type=numbers, default=(32, 256, 256))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=5,
                        help="0: no deconvolution, the chunks as read (the I/O path alone)")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--output", help="default: out.fits in a temporary folder")
    parser.add_argument("--scheduler", help="a running scheduler instead of a LocalCluster")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, \
            dask.config.set({"distributed.worker.daemon": False}):
        source = os.path.join(folder, "in.fits")
        rng = np.random.default_rng(1)
        sl.write(source, rng.uniform(10, 100, args.shape).astype(np.float32))
        out = args.output or os.path.join(folder, "out.fits")
        cluster = None if args.scheduler else LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
        with Client(args.scheduler or cluster) as client:
            client.run(lambda: __import__("stacklens.dask"))  # imports are not the run's
            sent = workers_sent(client)
            with get_task_stream(client) as stream:
                start, started = time.perf_counter(), time.time()
                result = sld.from_stack(source, chunks=args.chunks)
                if args.iterations:
                    result = sld.deconvolve(result, psf_sigma=2, iterations=args.iterations,
                                            backend=args.backend)
                else:
                    result = result * np.float32(1)  # a task per chunk that reads and writes
                sld.to_file(result, out)
                wall, ended = time.perf_counter() - start, time.time()
            sent = tuple(b - a for a, b in zip(sent, workers_sent(client)))
        if cluster is not None:
            cluster.close()
    busy, last = collections.Counter(), started
    for task in stream.data:
        for s in task["startstops"]:
            kind = key_split(task["key"]) if s["action"] == "compute" else "(" + s["action"] + ")"
            busy[kind] += s["stop"] - s["start"]
            last = max(last, s["stop"])
    voxels = int(np.prod(args.shape))
    print(f"{'x'.join(map(str, args.shape))} float32 ({voxels * 4 / 2**20:.0f} MiB), chunks "
          f"{'x'.join(map(str, args.chunks))}, {args.workers} worker(s), {args.iterations} "
          f"iterations, {args.backend}: wall {wall:.2f} s")
    print(f"workers sent {sent[0] / 2**20:.2f} MiB, of which to the client "
          f"{sent[1] / 2**20:.2f} MiB ({sent[1] / (voxels * 4):.2f} x the output)")
    for kind, seconds in busy.most_common():
        print(f"  {seconds:8.2f} s  {kind}")
    print(f"client after the last task: {ended - last:.2f} s")


if __name__ == "__main__":
    main()
