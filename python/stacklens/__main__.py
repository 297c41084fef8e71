"""python3 -m stacklens deconvolve IN OUT --psf P --iterations N [--mode 3d] [options]

Deconvolves a stack with Dask: on this machine's threads (the default), on a LocalCluster of
worker processes (--local-workers N), or on a running dask.distributed cluster (--scheduler
ADDRESS). IN: FITS, TIFF or Zarr (a folder or http(s) URL holding an array, or an OME-Zarr
image's level 0). OUT: OME-Zarr (a folder .zarr, 0.5 or 0.4, as stacklens-cli writes it), FITS
or TIFF; the workers write it chunk by chunk. Nothing is left at OUT when the run fails or is
interrupted.
"""

import argparse
import os
import signal
import sys
import threading
import time

import stacklens
import stacklens.dask as sld


def _numbers(text, kind, count_ok, what):
    try:
        values = [kind(v) for v in text.split(",")]
    except ValueError:
        raise SystemExit(f"stacklens: {what}: expected numbers separated by commas, got {text!r}")
    if len(values) not in count_ok:
        raise SystemExit(f"stacklens: {what}: expected {' or '.join(map(str, count_ok))} values")
    return values


def _open_input(path, chunks):
    """The input as a Dask array (its chunks, by default, whole chunks of a Zarr input), its
    spacing (z, y, x) and units, and its Stack."""
    stack = stacklens.open(path)
    data = sld.from_stack(stack, chunks=chunks or "auto")
    return (data, stack.spacing if stack.spacing_known else None, stack.units, stack)


def _client(args):
    """A dask.distributed client for --scheduler or --local-workers, or None (threads here)."""
    if not args.scheduler and not args.local_workers:
        return None
    from distributed import Client, LocalCluster
    if args.scheduler:
        try:
            return Client(args.scheduler, timeout=args.connect_timeout)
        except (OSError, TimeoutError) as e:
            raise SystemExit(f"stacklens: cannot reach the Dask scheduler at {args.scheduler}: {e}")
    cluster = LocalCluster(n_workers=args.local_workers, threads_per_worker=1,
                           processes=True, dashboard_address=None)
    client = Client(cluster)
    client.own_cluster = cluster
    return client


def deconvolve_command(args):
    if args.iterations < 1:
        raise SystemExit("stacklens: --iterations: expected at least 1")
    chunks = tuple(_numbers(args.chunks, int, (3,), "--chunks")) if args.chunks else None
    if (args.psf is None) == (args.psf_sigma is None):
        raise SystemExit("stacklens: give exactly one of --psf FILE and --psf-sigma S[,S,S]")
    psf = stacklens.read(args.psf) if args.psf else None
    sigma = _numbers(args.psf_sigma, float, (1, 3), "--psf-sigma") if args.psf_sigma else None
    if psf is not None and args.mode == "2d" and psf.shape[0] > 1:
        psf = psf[psf.shape[0] // 2]
    elif psf is not None and args.mode == "2d":
        psf = psf[0]
    data, spacing, units, stack = _open_input(args.input, chunks)
    halo = tuple(_numbers(args.halo, int, (1, 3), "--halo")) if args.halo else None
    if halo is not None and len(halo) == 1:
        halo = halo * 3
    sigma = sigma if sigma is None or len(sigma) == 3 else sigma[0]
    boundary, chosen = args.boundary, ""
    if boundary == "auto":
        boundary, reason = stacklens.auto_boundary(psf, psf_sigma=sigma, mode=args.mode,
                                                   tv=args.tv)
        chosen = f" (auto: {reason})"
        print(f"stacklens: boundary {boundary}{chosen}", file=sys.stderr)
    result = sld.deconvolve(data, psf, psf_sigma=sigma, iterations=args.iterations,
                            mode=args.mode, boundary=boundary, tv=args.tv,
                            accelerate=args.accelerate, halo=halo, backend=args.backend)
    history = (f"stacklens deconvolve richardson-lucy iterations={args.iterations} "
               f"mode={args.mode} boundary={boundary}{chosen} (python -m stacklens, Dask)")
    if args.mode == "3d" and any(len(c) > 1 for c in data.chunks):
        # Chunks overlap by their halos and iterate on their own: the seam error a synthetic
        # trial expects is said and kept, as stacklens-cli does for overlapping blocks.
        seams = stacklens.seam_estimate(data.shape, data.chunksize, psf, psf_sigma=sigma,
                                        iterations=args.iterations, boundary=boundary,
                                        halo=halo, tv=args.tv, accelerate=args.accelerate,
                                        backend=args.backend, max_seconds=20.0)
        print(f"stacklens: {seams['description']}", file=sys.stderr)
        history += f" chunks={','.join(map(str, data.chunksize))} {seams['provenance']}"
    client = _client(args)
    zarr = {}
    if args.output.rstrip("/").endswith(".zarr"):
        zarr = {"zarr_version": args.zarr_version, "levels": args.levels}
        if args.zarr_shards:
            if args.zarr_version not in (None, "0.5"):
                raise SystemExit("stacklens: --zarr-shards: shards are Zarr v3, written with "
                                 "--zarr-version 0.5 only")
            zarr["zarr_shards"] = _numbers(args.zarr_shards, int, (3,), "--zarr-shards")
    elif args.zarr_version or args.zarr_shards or args.levels != 1:
        raise SystemExit("stacklens: --zarr-version, --zarr-shards and --levels apply to a .zarr "
                         "output")
    try:
        # Computed and written chunk by chunk by the same tasks: on a cluster each worker writes
        # what it computed (whole chunks of a Zarr output), and no voxels come here. A task that
        # is still running when the run fails or is interrupted cannot write into the output's
        # temporary file or folder once it is removed.
        sld.to_file(result, args.output, like=stack, spacing=spacing, units=units,
                    history=[history], progress=not args.quiet, **zarr)
    except KeyboardInterrupt:
        sld.stop_tasks()  # so that the interpreter's exit does not wait for them
        raise
    finally:
        if client is not None:
            cluster = getattr(client, "own_cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()  # its workers stop writing
    return 0


def _leave_after_interrupt(wait=10.0):
    """Lets the thread pools' workers go (what the interpreter's exit does first), waits up to
    `wait` seconds in all for them and every other thread and, if a thread is still there, ends
    the process at once (exit 130). Under load an
    interrupted run's exit once waited for ever on an idle pool worker whose queue never got its
    stop mark; CPython's own release joins each worker without a limit, so it runs on a thread
    of its own here."""
    import concurrent.futures.thread as pools
    deadline = time.monotonic() + wait
    release = getattr(pools, "_python_exit", None)  # CPython's own exit step for its pools
    if release is not None:
        releasing = threading.Thread(target=release, name="stacklens-release-pools", daemon=True)
        releasing.start()
        releasing.join(wait)
    others = [t for t in threading.enumerate()
              if t is not threading.current_thread() and not t.daemon]
    for t in others:
        t.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() for t in others) or (release is not None and releasing.is_alive()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m stacklens", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    d = commands.add_parser("deconvolve", help="Richardson-Lucy deconvolution with Dask")
    d.add_argument("input", help="FITS, TIFF or Zarr stack")
    d.add_argument("output", help="OUT.zarr (OME-Zarr), OUT.fits or OUT.tif")
    d.add_argument("--zarr-version", choices=("0.4", "0.5"),
                   help="OME-Zarr version of a .zarr output (default 0.5: Zarr v3)")
    d.add_argument("--zarr-shards", metavar="Z,Y,X",
                   help="a 0.5 .zarr output in one file per shard of Z,Y,X, each a multiple of "
                   "the chunks (default: no shards, readable by readers without Zarr v3 "
                   "sharding; use shards where very many chunk files would be slow)")
    d.add_argument("--levels", type=int, default=1,
                   help="levels of a .zarr output's pyramid (default 1)")
    d.add_argument("--psf", help="PSF file (FITS or TIFF)")
    d.add_argument("--psf-sigma", help="Gaussian PSF: S or SZ,SY,SX pixels")
    d.add_argument("--iterations", type=int, required=True)
    d.add_argument("--mode", choices=("2d", "3d"), default="3d")
    d.add_argument("--boundary", choices=("auto", "reflect", "periodic", "zero", "reflect-exact"),
                   default="auto", help="default auto: reflect-exact when the PSF is "
                   "mirror-symmetric and --tv is 0, else reflect (printed, and kept in HISTORY)")
    d.add_argument("--tv", type=float, default=0.0, help="total-variation weight (0: off)")
    d.add_argument("--accelerate", action="store_true", help="Biggs-Andrews acceleration")
    d.add_argument("--halo", help="voxels of the neighbours per side: N or Z,Y,X (default half the PSF)")
    d.add_argument("--chunks", help="Z,Y,X chunk shape (default: Dask's choice, in whole chunks "
                   "of a Zarr input)")
    d.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto")
    where = d.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a dask.distributed scheduler")
    where.add_argument("--local-workers", type=int, help="start a LocalCluster of N workers here")
    d.add_argument("--connect-timeout", default="10s", help=argparse.SUPPRESS)
    d.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    # This program ends on Ctrl-C: a chunk that a thread starts after the signal does no work.
    stacklens._stacklens._stop_calls_after_interrupt()
    try:
        return deconvolve_command(args)
    except (OSError, ValueError, MemoryError) as e:
        print(f"stacklens: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return _interrupted()


def _interrupted(leave=_leave_after_interrupt):
    """Says so, winds down (leave) and gives the exit code 130. One Ctrl-C can raise
    KeyboardInterrupt twice in this thread: once from the run's own threads, which the hook
    stops at once, and once more from the signal itself, still pending when the first arrived.
    Had that second one escaped, the interpreter would have ended on SIGINT (exit -2) after
    saying it was interrupted. So further Ctrl-Cs are ignored from here on, and one that was
    pending only repeats the winding down."""
    said = False
    while True:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            if not said:
                said = True
                print("stacklens: interrupted; nothing was written", file=sys.stderr)
            leave()
            return 130
        except KeyboardInterrupt:
            continue


if __name__ == "__main__":
    code = main()
    if code == 130:
        # Cleaned up already: no interpreter finalisation that a late signal could interrupt.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)
