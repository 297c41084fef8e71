"""StackLens from Python: the C++ kernels of the StackLens viewer and `stacklens-cli` on NumPy
arrays, lazy FITS/TIFF stacks, and (stacklens.dask) Dask arrays on one machine or a cluster.

Every function takes the CLI's options as keyword arguments with the CLI's defaults, and a
``backend`` of 'auto' (CUDA when usable, else the CPU), 'cpu', 'cuda' or 'cuda:N'. Arrays are
(y, x) or (z, y, x); C-contiguous float32 arrays are used without a copy, others are converted
once. Results are float32 NumPy arrays (labels int32). Device arrays (CuPy, or anything with
__cuda_array_interface__) stay on their GPU: the work waits for their stream, runs on that GPU,
and the result is a CuPy array there (segmentation's labels and tables come back to the host).
The GIL is released while the kernels run. Errors: ValueError (arguments), OSError (files),
MemoryError (GPU out of memory).
"""

import numpy as _np

from ._stacklens import (  # noqa: F401
    auto_boundary,
    blur,
    crossmatch,
    cuda_device_count,
    cuda_usable,
    deconvolve,
    gaussian_psf,
    median,
    moment,
    project,
    read_catalog,
    read_regions,
    remove_outliers,
    resample,
    seam_estimate,
    segment,
    sigma_clipped_stats,
    symmetric_psf,
)
from . import _stacklens
from . import lab  # noqa: F401  (stacklens.lab.sweep: the speedup lab)

__all__ = [
    "Stack", "auto_boundary", "blur", "crossmatch", "cuda_device_count", "cuda_usable", "deconvolve", "gaussian_psf", "median", "moment", "open",
    "project", "read", "read_catalog", "read_regions", "remove_outliers", "resample", "seam_estimate", "segment", "sigma_clipped_stats",
    "symmetric_psf", "write",
]


class Stack:
    """A FITS or TIFF stack opened lazily: indexing reads only the slices and rows asked for.

    ``stack[z]`` is one slice (y, x), ``stack[10:20, 100:200, :]`` a box; the values are
    float32 with the file's scaling applied (BLANK as NaN). Attributes: shape (z, y, x), dtype
    (float32, what indexing gives), stored_dtype (as in the file), spacing (z, y, x) and units,
    spacing_known, header (a list of (key, value, comment)), path, format, hdu, plane, chunks.
    Usable with dask.array.from_array (see stacklens.dask.from_stack).
    """

    def __init__(self, path, hdu=None, plane=0):
        self._reader = _stacklens._Reader(str(path), -1 if hdu is None else int(hdu), int(plane))
        r = self._reader
        self.path, self.format, self.hdu, self.plane = r.path, r.format, r.hdu, r.plane
        self.shape = tuple(r.shape)
        self.stored_dtype = r.stored_dtype
        self.spacing, self.units, self.spacing_known = tuple(r.spacing), tuple(r.units), r.spacing_known
        self.header = r.header
        self.dtype = _np.dtype(_np.float32)
        self.ndim = 3

    def __len__(self):
        return self.shape[0]

    @property
    def chunks(self):
        """(z, y, x): the boxes the file reads as one piece (a Zarr array's chunks, whole rows
        along x, as indexing reads them), or None when any box reads as well (FITS, TIFF).
        dask.array.from_array(stack) makes its chunks multiples of them."""
        z, y, _ = self._reader.read_unit
        return (z, y, self.shape[2]) if z > 0 and y > 0 else None

    @property
    def wcs_header(self):
        """The world coordinate cards as a dict of Python values (strings unquoted, numbers,
        booleans), e.g. for astropy.wcs.WCS(stack.wcs_header); empty without a WCS."""
        prefixes = ("WCSAXES", "CTYPE", "CUNIT", "CRPIX", "CRVAL", "CDELT", "CROTA", "PC", "CD",
                    "PV", "PS", "LONPOLE", "LATPOLE", "RADESYS", "RADECSYS", "EQUINOX", "EPOCH",
                    "MJD-OBS", "DATE-OBS", "SPECSYS", "SSYSOBS", "RESTFRQ", "RESTFREQ",
                    "RESTWAV", "VELREF", "WCSNAME", "A_", "B_", "AP_", "BP_")
        cards = {}
        for key, value, _ in self.header:
            if key.startswith(prefixes) and key not in ("COMMENT", "HISTORY"):
                cards[key] = _fits_value(value)
        if cards:
            cards["NAXIS"] = 3 if self.shape[0] > 1 else 2
            for axis, n in enumerate(reversed(self.shape), start=1):
                if axis <= cards["NAXIS"]:
                    cards[f"NAXIS{axis}"] = n
        return cards

    def __reduce__(self):
        # Dask's workers open the file again: the reader itself cannot travel.
        return (Stack, (self.path, self.hdu, self.plane))

    def __repr__(self):
        z, y, x = self.shape
        return f"<stacklens.Stack {self.path!r}: {z} x {y} x {x} {self.stored_dtype}>"

    def __array__(self, dtype=None):
        a = self.read()
        return a if dtype is None else a.astype(dtype)

    def read(self):
        """The whole stack as a (z, y, x) float32 array."""
        z, y, _ = self.shape
        return self._reader.read(0, z, 0, y)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis for k in key):
            i = key.index(Ellipsis)
            key = key[:i] + (slice(None),) * (3 - len(key) + 1) + key[i + 1:]
        if len(key) > 3:
            raise IndexError("too many indices for a (z, y, x) stack")
        key = key + (slice(None),) * (3 - len(key))
        kz, ky, kx = key
        z_index = _np.arange(self.shape[0])[kz]
        y_index = _np.arange(self.shape[1])[ky]
        # Rows are read as one band from the first to the last wanted; z slice by slice.
        zs = _np.atleast_1d(z_index)
        ys = _np.atleast_1d(y_index)
        x_count = self.shape[2]
        if zs.size == 0 or ys.size == 0:
            out = _np.empty((zs.size, ys.size, _np.arange(x_count)[kx].size), _np.float32)
        else:
            y0, y1 = int(ys.min()), int(ys.max()) + 1
            parts = []
            contiguous = zs.size > 1 and _np.all(_np.diff(zs) == 1)
            if contiguous:
                parts.append(self._reader.read(int(zs[0]), int(zs[-1]) + 1, y0, y1))
            else:
                parts = [self._reader.read(int(z), int(z) + 1, y0, y1) for z in zs]
            band = parts[0] if len(parts) == 1 else _np.concatenate(parts)
            # A run of rows is the band as read: indexing it by their numbers would copy it.
            run = ys.size == y1 - y0 and ys[0] == y0 and _np.all(_np.diff(ys) == 1)
            out = (band if run else band[:, ys - y0, :])[:, :, kx]
        if _np.ndim(z_index) == 0:
            out = out[0]
            if _np.ndim(y_index) == 0:
                out = out[0]
        elif _np.ndim(y_index) == 0:
            out = out[:, 0]
        return out


def _fits_value(text):
    """A FITS card's value text as Python: 'quoted' strings, T/F, integers, reals."""
    t = text.strip()
    if t.startswith("'"):
        return t[1:t.rfind("'")].replace("''", "'").rstrip() if t.count("'") > 1 else t[1:]
    if t in ("T", "F"):
        return t == "T"
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t.replace("D", "E").replace("d", "e"))
    except ValueError:
        return t


def open(path, hdu=None, plane=0):  # noqa: A001 - the name the CLI's users expect
    """Opens a FITS (.fits, .fit, .fts, .fz, .gz), TIFF (.tif, .tiff, BigTIFF, ImageJ,
    OME-TIFF) or Zarr (a folder, or an http:// or https:// URL: a Zarr v2/v3 array or an OME-Zarr
    image) stack lazily; hdu: the FITS HDU (default: the first with an image) or the OME-Zarr
    level, plane: the index along a 4th axis. Raises OSError naming the file or URL and the
    reason (for HTTP, the status)."""
    return Stack(path, hdu=hdu, plane=plane)


def read(path, hdu=None, plane=0):
    """The whole stack as a (z, y, x) float32 array."""
    return Stack(path, hdu=hdu, plane=plane).read()


def write(path, array, *, spacing=None, units=None, header=None, history=(), like=None,
          uint16=False, zarr_version=None, zarr_chunks=None, zarr_shards=None, levels=1):
    """Writes a 2D or 3D array as FITS (.fits, .fit, .fts: float32), TIFF (.tif, .tiff:
    float32, or uint16 with uint16=True) or OME-Zarr 0.5 (.zarr, a folder: float32, axes z, y, x
    with the spacing, history in its "stacklens" attribute), atomically (written in a temporary
    folder and renamed into place).

    like: a Stack whose header (its WCS rewritten for the output), spacing and units are
    carried, as the CLI carries its input's (and whose file is never written over); spacing
    (z, y, x), units and header ((key, value[, comment]) cards, FITS values as FITS writes them,
    e.g. strings quoted) add to or replace those; history: HISTORY lines. For .zarr only:
    zarr_version "0.5" (Zarr v3, the default) or "0.4" (Zarr v2), zarr_chunks (z, y, x),
    zarr_shards (z, y, x; 0.5 only: one file per shard, each a multiple of the chunks; default
    none, so that readers without Zarr v3 sharding can open the output) and levels, the
    multiscale levels (each the 2 x 2 mean in y and x of the one before).
    """
    cards = None if header is None else [tuple(str(v) for v in c) for c in header]
    _stacklens._write(str(path), array, None if spacing is None else tuple(spacing),
                      None if units is None else tuple(units), cards, list(history),
                      bool(uint16), None if like is None else like._reader,
                      None if zarr_version is None else str(zarr_version),
                      None if zarr_chunks is None else tuple(int(c) for c in zarr_chunks),
                      int(levels),
                      None if zarr_shards is None else tuple(int(c) for c in zarr_shards))
