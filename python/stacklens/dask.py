"""StackLens's operations over Dask arrays, chunk by chunk with Dask's map_overlap.

Each chunk is computed with its neighbours' voxels around it (the depth: half the PSF for
deconvolution, the kernel's radius for the filters); at the array's faces Dask pads by the
boundary rule ('reflect' is half-sample symmetric, as StackLens's). A chunk plus its depth is
deconvolved with periodic boundaries, exactly as a block of the blocked 3D deconvolution
(compute/blocked/): with the same interiors and halos the two give the same result. With
'reflect-exact' nothing is padded and each chunk plus its depth reflects at its own faces.

Works with dask.distributed: workers import stacklens; backend='auto' computes on a worker's
GPU when it has one, else on its CPU cores. On a host with several GPUs, the workers of a
cluster spread over them (worker i takes GPU i modulo their number), unless each worker sees
only its own (CUDA_VISIBLE_DEVICES, as dask-cuda sets it). No voxels pass through the client:
from_stack's tasks read their chunks from the file, and to_file's tasks write what they computed
into the output the client prepared.
"""

import math
import sys
import uuid

import dask.array as da
import numpy as np

from . import _stacklens
from . import Stack

__all__ = ["from_stack", "to_file", "deconvolve", "blur", "median", "remove_outliers"]

# What Dask pads past the array's faces for each boundary. Reflect-exact pads nothing: a chunk at
# a face starts there and reflects there itself, at every convolution (as the blocked run's
# reflect-exact frames do).
_BOUNDARIES = {"reflect": "reflect", "periodic": "periodic", "zero": 0.0,
               "reflect-exact": "none"}


def _backend_here(backend):
    """backend, or on a dask.distributed worker of a host with several GPUs, the worker's GPU."""
    if backend not in ("auto", "cuda"):
        return backend
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        return backend
    count = _stacklens.cuda_device_count()
    if count < 2:
        return backend
    name = worker.name
    index = name if isinstance(name, int) else sum(str(name).encode())
    return f"cuda:{index % count}"


def from_stack(stack, chunks="auto"):
    """A Dask array over a FITS/TIFF stack or a Zarr array (a path, URL or stacklens.Stack),
    read lazily chunk by chunk (float32; chunks as dask.array.from_array takes them: "auto"
    makes them multiples of a Zarr array's own chunks, Stack.chunks, so that no Zarr chunk is
    read by two tasks)."""
    if not isinstance(stack, Stack):
        stack = Stack(stack)
    array = da.from_array(stack, chunks=chunks, asarray=False, fancy=False,
                          meta=np.empty((0, 0, 0), np.float32))
    # The operations given this array itself read each chunk with its halo from the file.
    array._stacklens_stack = stack
    return array


class _Boxes:
    """da.store's target: each chunk written at its place by the block writer."""

    def __init__(self, writer, ndim):
        self._writer, self._ndim = writer, ndim

    def __setitem__(self, key, box):
        origin = tuple(k.start or 0 for k in key)
        if self._ndim == 2:
            origin, box = (0,) + origin, box[None]
        self._writer.write_box(*origin, box)


def _distributed_client():
    try:
        from distributed import default_client
        return default_client()
    except (ImportError, ValueError):
        return None


def _write_chunk(block, prepared, block_info=None):
    """Writes a chunk into the prepared file where it belongs, in the worker that computed it;
    what comes back is its voxel count, not its voxels."""
    ndim = block.ndim
    origin = tuple(start for start, _ in block_info[0]["array-location"])
    if ndim == 2:
        origin, block = (0,) + origin, block[None]
    prepared.write_box(*origin, block)
    return np.full((1,) * ndim, block.size, np.int64)


def _computed(work, client, progress):
    """work (a Dask collection) computed on the client's cluster, or on this machine's threads
    without one; a progress bar on stderr when progress. On an error or an interrupt the tasks
    not yet started are cancelled before it propagates."""
    if client is None:
        if not progress:
            return work.compute()
        from dask.diagnostics import ProgressBar
        with ProgressBar(out=sys.stderr):
            return work.compute()
    future = client.compute(work)
    try:
        if progress:
            from distributed import progress as progress_bar
            progress_bar(future)
            print(file=sys.stderr)
        return future.result()
    except BaseException:
        client.cancel(future)
        raise


def _on_chunk_grid(array, zarr_chunks):
    """array rechunked so that its chunks are whole chunks (or shards) of the Zarr output
    (multiples of zarr_chunks, (z, y, x), near the sizes it had): each then has one task as its
    writer."""
    grid = zarr_chunks[3 - array.ndim:]
    aligned = []
    for sizes, c, n in zip(array.chunks, grid, array.shape):
        step = max(c, int(np.median(sizes)) // c * c)
        aligned.append(min(step, n))
    return array.rechunk(tuple(aligned))


def to_file(array, path, *, like=None, spacing=None, units=None, header=None, history=(),
            progress=False, zarr_version=None, zarr_chunks=None, zarr_shards=None, levels=1):
    """Computes a 2D or 3D Dask array into a FITS (.fits, .fit, .fts) or TIFF (.tif, .tiff,
    BigTIFF when large) float32 file, or an OME-Zarr image (.zarr), chunk by chunk, never
    holding it whole. With a dask.distributed client the output is prepared here (its header, or
    its TIFF directories, and its full length; a Zarr output's metadata) and each task writes the
    chunk it computed into it on its worker, which must see the output's folder (the same path:
    a local cluster, or a shared file system); only the chunks' voxel counts come back. For a
    Zarr output the array is first rechunked to whole Zarr chunks, so that no Zarr chunk has two
    writers (to whole shards for a sharded output: one writer per shard file). Otherwise the
    chunks are computed on this machine's threads, each written as it is
    done. The output appears at path when every chunk is written (a temporary file or folder
    beside it until then, removed on an error or an interrupt; a Zarr output's further levels
    are made then). like, spacing, units, header, history, zarr_version, zarr_chunks,
    zarr_shards and levels as stacklens.write; progress: a progress bar on stderr."""
    array = da.asarray(array)
    if array.ndim not in (2, 3):
        raise ValueError("to_file: expected a 2D (y, x) or 3D (z, y, x) array")
    array = array.astype(np.float32)
    shape = (1,) * (3 - array.ndim) + array.shape
    cards = None if header is None else [tuple(str(v) for v in c) for c in header]
    client = _distributed_client()
    writer = _stacklens._BlockWriter(
        str(path), list(shape), None if spacing is None else tuple(spacing),
        None if units is None else tuple(units), cards, list(history),
        None if like is None else like._reader, for_workers=client is not None,
        zarr_version=None if zarr_version is None else str(zarr_version),
        zarr_chunks=None if zarr_chunks is None else tuple(int(c) for c in zarr_chunks),
        levels=int(levels),
        zarr_shards=None if zarr_shards is None else tuple(int(c) for c in zarr_shards))
    try:
        if client is None:
            _computed(da.store(array, _Boxes(writer, array.ndim), lock=False, compute=False),
                      None, progress)
        else:
            prepared = writer.prepared_file()
            if prepared.zarr_shards is not None:
                array = _on_chunk_grid(array, prepared.zarr_shards)
            elif prepared.zarr_chunks is not None:
                array = _on_chunk_grid(array, prepared.zarr_chunks)
            # The workers open the temporary file themselves; a task that starts after an error
            # or an interrupt removed it fails to open it (it is never created again), and one
            # still writing writes into a file no longer named, so it can go at once.
            counts = array.map_blocks(
                _write_chunk, prepared=prepared, dtype=np.int64,
                chunks=tuple((1,) * n for n in array.numblocks),
                meta=np.empty((0,) * array.ndim, np.int64),
                name="stacklens-to-file-" + uuid.uuid4().hex)
            written = int(_computed(counts, client, progress).sum())
            if written != math.prod(shape):
                raise OSError(f"{path}: {written} of {math.prod(shape)} voxels were written")
        writer.commit()
    finally:
        writer.close()


def _smooth(n, primes):
    for p in primes:
        while n % p == 0:
            n //= p
    return n == 1


def _fast_depth(chunk, halo, cuda):
    """The halo widened so that chunk + 2 * depth is a fast FFT length (2, 3, 5, 7-smooth for
    FFTW; 2, 3-smooth for cuFFT), as the block planner widens its halos for free."""
    n = chunk + 2 * halo
    while not _smooth(n, (2, 3) if cuda else (2, 3, 5, 7)) or (n - chunk) % 2:
        n += 1
    return (n - chunk) // 2


def _fused_depth(chunk, halo):
    """The halo widened to the next length of the CUDA backend's fused passes (as the block
    planner's frames), or None when there is none."""
    n = _stacklens._next_fast_frame_length(chunk + 2 * halo)
    while n and (n - chunk) % 2:
        n = _stacklens._next_fast_frame_length(n + 1)
    return (n - chunk) // 2 if n else None


def _widened(depth, chunks, cuda):
    """The depths that give each chunk fast FFT lengths: on CUDA the fused lengths when every
    axis has one and the frame has at most 1.5 times the voxels (compute/rl_frame.h's rule),
    else 2, 3(, 5, 7)-smooth lengths. No depth grows beyond the smallest chunk (each must hold
    its neighbours' share). An axis in one chunk keeps its halo (its depth is padding by the
    boundary rule, as the unblocked run's, which a wider one follows less closely at the faces)
    unless that makes the frame a fused one (within the axis' length)."""
    def allowed(wider, d, sizes, single_too):
        if len(sizes) == 1 and not single_too:
            return d
        limit = min(sizes) if len(sizes) > 1 else sizes[0] - 1
        return wider if wider is not None and wider <= limit else d

    smooth = tuple(allowed(_fast_depth(c[0], d, cuda), d, c, False) if d else 0
                   for d, c in zip(depth, chunks))
    if not cuda:
        return smooth
    fused = tuple(allowed(_fused_depth(c[0], d), d, c, True) if d else 0
                  for d, c in zip(depth, chunks))

    def voxels(ds):
        return math.prod(c[0] + 2 * d for d, c in zip(ds, chunks))

    def fast(ds):
        return all(_stacklens._next_fast_frame_length(c[0] + 2 * d) == c[0] + 2 * d
                   for d, c in zip(ds, chunks) if d)

    return fused if fast(fused) and voxels(fused) <= 1.5 * voxels(smooth) else smooth


def _depths(array, depth):
    return tuple(int(d) for d in depth) + (0,) * (array.ndim - len(depth))


def _check_chunks(array, depth, what):
    # Every chunk must hold its neighbours' share: map_overlap takes the depth from the next
    # chunk only.
    for axis, (d, sizes) in enumerate(zip(depth, array.chunks)):
        if d > 0 and len(sizes) > 1 and min(sizes) < d:
            raise ValueError(
                f"{what}: chunks along axis {axis} ({min(sizes)}) must be at least the depth "
                f"({d}); use larger chunks (array.rechunk)")


# Set by stop_tasks(): chunks that start after it do no work. Ctrl-C stops the chunks being
# computed (their calls are interrupted), but a threaded scheduler's other chunks would still
# start, each a whole deconvolution, and an exiting interpreter waits for its threads.
_stopping = False


def stop_tasks():
    """Makes every chunk of this process's stacklens.dask operations that has not started yet
    fail at once (RuntimeError) instead of computing: for a program that is stopping, e.g. on
    KeyboardInterrupt, whose interpreter would otherwise wait for them at exit."""
    global _stopping
    _stopping = True


def _unless_stopping(function):
    def run(block):
        if _stopping:
            raise RuntimeError("stacklens.dask: stopping (stop_tasks)")
        return function(block)
    return run


def _read_around(function, stack, depth, boundary, block_info=None):
    """A chunk of the stack computed by function with its neighbours' voxels around it, read from
    the file by the task itself, and trimmed back to the chunk: what map_overlap gives, without
    slicing the neighbouring chunks and moving the slices between workers. Past the stack's faces
    the block is padded as Dask pads the array ('reflect' is half-sample symmetric, as
    numpy.pad's 'symmetric'; 0.0 zeros; 'none' nothing)."""
    # The read inside the scope of the call that follows: Ctrl-C during it stops that call too.
    with _stacklens._InterruptScope():
        return _read_around_here(function, stack, depth, boundary, block_info[None])


def _read_around_here(function, stack, depth, boundary, where):
    read, pad = [], []
    for (start, stop), n, d in zip(where["array-location"], where["shape"], depth):
        low, high = max(0, start - d), min(n, stop + d)
        read.append(slice(low, high))
        pad.append((0, 0) if boundary == "none" else (d - (start - low), d - (high - stop)))
    block = stack[tuple(read)]
    if any(p != (0, 0) for p in pad):
        block = (np.pad(block, pad, mode="symmetric") if boundary == "reflect"
                 else np.pad(block, pad, mode="constant", constant_values=boundary))
    result = function(np.ascontiguousarray(block))
    return result[tuple(slice(start - r.start + before, start - r.start + before + stop - start)
                        for (start, stop), r, (before, _) in
                        zip(where["array-location"], read, pad))]


def _overlap(array, function, depth, boundary, what):
    array = da.asarray(array)
    if array.ndim not in (2, 3):
        raise ValueError(f"{what}: expected a 2D (y, x) or 3D (z, y, x) array")
    depth = _depths(array, depth)
    _check_chunks(array, depth, what)
    stack = getattr(array, "_stacklens_stack", None)
    if stack is not None and boundary in ("reflect", 0.0, "none"):
        # Straight from the file (periodic faces would need the far end: map_overlap below).
        return da.map_blocks(_read_around, function=_unless_stopping(function), stack=stack,
                             depth=depth, boundary=boundary, dtype=np.float32, chunks=array.chunks,
                             meta=np.empty((0,) * array.ndim, np.float32),
                             name=f"{what}-from-file-{uuid.uuid4().hex}")
    return da.map_overlap(_unless_stopping(function), array.astype(np.float32), depth=depth,
                          boundary=boundary, dtype=np.float32,
                          meta=np.empty((0,) * array.ndim, np.float32),
                          trim=True)


def deconvolve(array, psf=None, *, psf_sigma=None, iterations=20, mode="3d", boundary="auto",
               tv=0.0, accelerate=False, halo=None, widen=True, backend="auto"):
    """Richardson-Lucy over a Dask array: each chunk with a halo (default half the PSF, rounded
    up, on each side; N or (Z, Y, X)) from its neighbours, deconvolved with periodic boundaries
    (mode '3d'; '2d' deconvolves each slice with the PSF's centre slice, no halo along z).
    boundary is the rule at the array's faces: 'reflect', 'zero', 'periodic' or 'reflect-exact'
    (the PSF symmetric along each axis; each chunk with its halo is deconvolved with reflect-exact
    boundaries, so chunks at the array's faces reflect exactly there), or 'auto' (the default:
    'reflect-exact' where it applies, else 'reflect', as stacklens.auto_boundary says). widen: the halo grows
    until each chunk with it has fast FFT lengths (what a block of the blocked deconvolution does
    with its frame's room to spare); False keeps the halo as given, as reflect-exact always does
    (its chunks at the faces have a halo on one side only). The other arguments as
    stacklens.deconvolve."""
    if boundary not in _BOUNDARIES and boundary != "auto":
        raise ValueError("boundary: expected 'auto', 'reflect', 'periodic', 'zero' or "
                         f"'reflect-exact', got {boundary!r}")
    if (psf is None) == (psf_sigma is None):
        raise ValueError("give exactly one of psf (an array) and psf_sigma")
    if psf is None:
        s = psf_sigma if np.ndim(psf_sigma) else (psf_sigma,) * 3
        if len(s) != 3:
            raise ValueError("psf_sigma: expected S or (Sz, Sy, Sx)")
        psf = _stacklens.gaussian_psf(tuple(float(v) for v in s) if mode == "3d"
                                      else (float(s[-2]), float(s[-1])))
    psf = np.ascontiguousarray(psf, dtype=np.float32)
    if boundary == "auto":
        boundary = _stacklens.auto_boundary(psf, mode=mode, tv=tv)[0]
    exact = boundary == "reflect-exact"
    shape3 = (1,) * (3 - psf.ndim) + psf.shape
    if halo is None:
        halo = tuple(math.ceil(n / 2) for n in shape3)
    elif np.ndim(halo) == 0:
        halo = (int(halo),) * 3
    halo = tuple(int(h) for h in halo)
    if any(h < math.ceil(n / 2) for h, n in zip(halo, shape3)):
        raise ValueError(f"halo: must be at least half the PSF ({tuple(math.ceil(n / 2) for n in shape3)})")
    array = da.asarray(array)
    if mode == "2d":
        depth = (0, halo[1], halo[2]) if array.ndim == 3 else (halo[1], halo[2])
    elif mode == "3d":
        if array.ndim != 3:
            raise ValueError("mode '3d': expected a (z, y, x) array")
        depth = halo
    else:
        raise ValueError(f"mode: expected '2d' or '3d', got {mode!r}")
    if widen and not exact:
        # Each chunk is transformed at its size with its depth: widen the depth (the first
        # chunk's size decides) so that the transforms have fast lengths.
        cuda = str(backend).startswith("cuda") or (backend == "auto" and
                                                   _stacklens.cuda_usable()[0])
        depth = _widened(depth, array.chunks[array.ndim - len(depth):], cuda)

    def chunk(block):
        return _stacklens.deconvolve(block, psf, iterations=iterations, mode=mode,
                                     boundary="reflect-exact" if exact else "periodic", tv=tv,
                                     accelerate=accelerate,
                                     backend=_backend_here(backend))

    return _overlap(array, chunk, depth, _BOUNDARIES[boundary], "deconvolve")


def blur(array, sigma, *, truncate=4.0, backend="auto"):
    """Gaussian blur (as stacklens.blur, edges reflected) over a Dask array; sigma S (each
    slice), (Sy, Sx) or (Sz, Sy, Sx)."""
    s = tuple(float(v) for v in np.atleast_1d(sigma))
    if len(s) == 1:
        s = (0.0, s[0], s[0])
    elif len(s) == 2:
        s = (0.0,) + s
    reach = tuple(int(truncate * v + 0.5) for v in s)
    array = da.asarray(array)
    depth = reach[3 - array.ndim:]
    own = s if s[0] > 0 else s[1:]

    def chunk(block):
        return _stacklens.blur(block, own, truncate=truncate, backend=_backend_here(backend))

    return _overlap(array, chunk, depth, "reflect", "blur")


def median(array, size, *, backend="auto"):
    """Median filter of each slice (odd size x size window, edges reflected) over a Dask array."""
    array = da.asarray(array)
    depth = (0, size // 2, size // 2)[3 - array.ndim:]
    return _overlap(array, lambda b: _stacklens.median(b, size, backend=_backend_here(backend)), depth,
                    "reflect", "median")


def remove_outliers(array, size, threshold, *, mode="both", backend="auto"):
    """stacklens.remove_outliers over a Dask array (odd size x size window per slice)."""
    array = da.asarray(array)
    depth = (0, size // 2, size // 2)[3 - array.ndim:]
    return _overlap(array,
                    lambda b: _stacklens.remove_outliers(b, size, threshold, mode=mode,
                                                         backend=_backend_here(backend)),
                    depth, "reflect", "remove_outliers")
