"""The speedup lab from Python: time StackLens's operations over a range of sizes on the CPU (1 and
all threads) and the GPU (kernel-only and with transfers), for slides and notebooks.

``sweep(...)`` runs a sweep and returns a :class:`Sweep` whose ``columns`` are NumPy arrays (one
entry per point, as the CSV of ``stacklens-cli lab``: times in seconds, bytes, bandwidth in bytes
per second); ``read_csv(path)`` opens a sweep saved by the CLI or the viewer. ``Sweep.figure()``
draws it with matplotlib when matplotlib is installed.
"""

import numpy as _np

from . import _stacklens

__all__ = ["Sweep", "sweep", "read_csv", "OPS", "DEFAULT_OPS", "DEFAULT_SIZES"]

OPS = ("blur", "median", "outliers", "sigmaclip", "segment", "rl2d", "rl3d", "resample",
       "projection", "volume")
DEFAULT_OPS = ("blur", "median", "outliers", "sigmaclip", "segment", "rl2d", "resample",
               "projection")
DEFAULT_SIZES = (256, 512, 1024, 2048)

_COLOURS = {"cpu-1-thread": "#7f7f7f", "cpu-all-threads": "#1f77b4", "gpu-kernel": "#2ca02c",
            "gpu-with-transfers": "#d62728"}


class Sweep:
    """A measured sweep.

    columns: dict of arrays, one entry per point — op, variant, error (arrays of str), size (the
    edge N asked for), nz, ny, nx, elements, threads, repeats (int), median_s, min_s, max_s,
    q1_s, q3_s, bytes, bandwidth_Bps, floor_s, transfer_s, max_rel_diff (float64, NaN where a
    figure does not apply). machine: dict (cpu, cpu_threads, gpu, note). break_even: {op:
    elements where the GPU with transfers starts to beat the CPU with the most threads, or
    None}. explain: {op: one sentence on the shape of its curve}.
    """

    def __init__(self, raw):
        cols = dict(raw["columns"])
        for key in ("op", "variant", "error"):
            cols[key] = _np.array(cols[key], dtype=str)
        self.columns = cols
        self.machine = dict(raw["machine"])
        self.cancelled = bool(raw["cancelled"])
        self.break_even = dict(raw["break_even"])
        self.explain = dict(raw["explain"])

    def __len__(self):
        return len(self.columns["op"])

    def curve(self, op, variant):
        """(elements, median_s) of one op and variant, by size, failed points left out."""
        c = self.columns
        keep = (c["op"] == op) & (c["variant"] == variant) & _np.isfinite(c["median_s"])
        order = _np.argsort(c["elements"][keep])
        return c["elements"][keep][order], c["median_s"][keep][order]

    def figure(self, presentation=False):
        """A matplotlib figure: one log–log panel per op (time against size, a curve per
        variant, min–max bars, dashed bandwidth floors, the break-even marked). Raises
        ImportError when matplotlib is not installed."""
        import matplotlib.pyplot as plt

        ops = list(dict.fromkeys(self.columns["op"]))
        cols = min(2, max(1, len(ops)))
        rows = (len(ops) + cols - 1) // cols
        scale = 2.0 if presentation else 1.0
        fig, axes = plt.subplots(rows, cols, figsize=(6.4 * cols, 4.4 * rows), squeeze=False)
        c = self.columns
        for ax, op in zip(axes.flat, ops):
            for variant in dict.fromkeys(c["variant"][c["op"] == op]):
                keep = (c["op"] == op) & (c["variant"] == variant) & _np.isfinite(c["median_s"])
                order = _np.argsort(c["elements"][keep])
                x = c["elements"][keep][order]
                colour = _COLOURS.get(variant, "#9467bd")
                med = c["median_s"][keep][order]
                err = [med - c["min_s"][keep][order], c["max_s"][keep][order] - med]
                ax.errorbar(x, med, yerr=err, color=colour, marker="o", lw=1.5 * scale,
                            label=variant)
                ax.plot(x, c["floor_s"][keep][order], color=colour, ls="--", lw=0.8 * scale)
            if self.break_even.get(op):
                ax.axvline(self.break_even[op], color="k", ls=":", lw=scale,
                           label="break-even")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(op, fontsize=12 * scale)
            ax.set_xlabel("size (pixels; volumes: voxels)", fontsize=10 * scale)
            ax.set_ylabel("time (s, median)", fontsize=10 * scale)
            ax.legend(fontsize=8 * scale)
        for ax in list(axes.flat)[len(ops):]:
            ax.set_visible(False)
        fig.suptitle("CPU: %s (%d threads)   GPU: %s" % (
            self.machine["cpu"], self.machine["cpu_threads"], self.machine["gpu"] or "none"),
            fontsize=10 * scale)
        fig.tight_layout()
        return fig


def sweep(ops=DEFAULT_OPS, sizes=DEFAULT_SIZES, threads=(1, "all"), repeats=3, gpu=True,
          source=None, csv=None, plot=None):
    """Times ``ops`` at each edge in ``sizes`` (N×N images; volume ops use a cube of as many
    voxels) on the CPU with each of ``threads`` ('all' for every thread) and, when ``gpu`` and a
    GPU is usable, kernel-only and with transfers; ``repeats`` timed runs after a warm-up.
    ``source``: a 2D array to run the 2D ops on (mirrored or cropped to each size) instead of the
    synthetic sky. ``csv`` / ``plot``: paths to write the CSV and the SVG figure of
    ``stacklens-cli lab``. Returns a :class:`Sweep`. Ctrl-C stops it (KeyboardInterrupt)."""
    if isinstance(ops, str):
        ops = ops.split(",")
    thread_counts = [0 if t == "all" else int(t) for t in threads]
    raw = _stacklens._lab_sweep(list(ops), [int(n) for n in sizes], thread_counts, int(repeats),
                                bool(gpu), source, "" if csv is None else str(csv),
                                "" if plot is None else str(plot))
    return Sweep(raw)


def read_csv(path):
    """A sweep saved by ``stacklens-cli lab --csv``, the viewer's Export CSV or ``sweep(csv=)``."""
    return Sweep(_stacklens._lab_read_csv(str(path)))
