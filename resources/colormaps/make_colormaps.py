#!/usr/bin/python3
# Writes the 256-entry colormap LUTs (one "R G B" line of 0-255 integers per entry) and colormaps.qrc.
#
# matplotlib maps (viridis, magma, inferno, plasma, cividis, hot, cubehelix) are sampled from
# Debian's python3-matplotlib 3.6; the SAOImage DS9 maps are rebuilt from DS9's published
# piecewise-linear definitions (colorbar/default.C): (position, intensity) knots per channel.
# Run with Debian's python (it has numpy and matplotlib): /usr/bin/python3 resources/colormaps/make_colormaps.py
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N = 256

# DS9 "SAO" maps: knots (x, value) per channel, linear in between.
DS9_SAO = {
    "bb": ([(0, 0), (.5, 1), (1, 1)],
           [(0, 0), (.25, 0), (.75, 1), (1, 1)],
           [(0, 0), (.5, 0), (1, 1)]),
    "heat": ([(0, 0), (.34, 1), (1, 1)],
             [(0, 0), (1, 1)],
             [(0, 0), (.65, 0), (.98, 1), (1, 1)]),
    "cool": ([(0, 0), (.29, 0), (.76, .1), (1, 1)],
             [(0, 0), (.22, 0), (.96, 1), (1, 1)],
             [(0, 0), (.53, 1), (1, 1)]),
    "a": ([(0, 0), (.25, 0), (.5, 1), (1, 1)],
          [(0, 0), (.25, 1), (.5, 0), (.77, 0), (1, 1)],
          [(0, 0), (.125, 0), (.5, 1), (.64, .5), (.77, 0), (1, 0)]),
    "rainbow": ([(0, 1), (.2, 0), (.6, 0), (.8, 1), (1, 1)],
                [(0, 0), (.2, 0), (.4, 1), (.8, 1), (1, 0)],
                [(0, 1), (.4, 1), (.6, 0), (1, 0)]),
}

# DS9 "sls" is a 200-entry table that is linear between these entries (index, r, g, b).
SLS_KNOTS = [
    (0, 0.0, 0.0, 0.0), (12, 0.5213, 0.0, 0.6346), (24, 0.3466, 0.0, 0.702),
    (36, 0.0, 0.0, 0.8243), (48, 0.0, 0.2378, 1.0), (60, 0.0, 0.6066, 1.0),
    (72, 0.0, 0.9082, 0.7036), (84, 0.0, 0.8327, 0.3805), (96, 0.0, 0.828, 0.0728),
    (108, 0.398, 0.902, 0.0), (120, 0.7934, 0.902, 0.0), (132, 1.0, 0.8436, 0.0478),
    (144, 0.9487, 0.6191, 0.0934), (156, 1.0, 0.3948, 0.0), (168, 0.9801, 0.0, 0.0),
    (180, 0.69, 0.0, 0.0), (192, 1.0, 1.0, 1.0), (199, 1.0, 1.0, 1.0),
]

MATPLOTLIB = ["viridis", "magma", "inferno", "plasma", "cividis", "hot", "cubehelix"]
# Black to one colour, as Fiji's channel LUTs: the channels of a composite add up to white.
CHANNELS = {"red": (1, 0, 0), "green": (0, 1, 0), "blue": (0, 0, 1), "cyan": (0, 1, 1),
            "magenta": (1, 0, 1), "yellow": (1, 1, 0)}
ORDER = ["gray", "viridis", "magma", "inferno", "plasma", "cividis", "hot", "heat", "cubehelix",
         "bb", "cool", "a", "sls", "rainbow"] + list(CHANNELS)


def sao(channels):
    x = np.linspace(0, 1, N)
    return np.stack([np.interp(x, [k[0] for k in ch], [k[1] for k in ch]) for ch in channels], 1)


def sls():
    # DS9 samples its 200-entry table by nearest entry; interpolating the knots is the same curve.
    idx = np.linspace(0, 199, N)
    knots = np.array(SLS_KNOTS)
    return np.stack([np.interp(idx, knots[:, 0], knots[:, c]) for c in (1, 2, 3)], 1)


def main():
    maps = {"gray": np.repeat(np.linspace(0, 1, N)[:, None], 3, 1), "sls": sls()}
    for name, channels in DS9_SAO.items():
        maps[name] = sao(channels)
    for name, colour in CHANNELS.items():
        maps[name] = np.linspace(0, 1, N)[:, None] * np.array(colour, float)[None, :]
    import matplotlib
    for name in MATPLOTLIB:
        maps[name] = matplotlib.colormaps[name].resampled(N)(np.arange(N))[:, :3]
    for name in ORDER:
        rgb = np.clip(np.rint(maps[name] * 255), 0, 255).astype(int)
        assert rgb.shape == (N, 3)
        with open(os.path.join(HERE, name + ".lut"), "w") as f:
            f.writelines(f"{r} {g} {b}\n" for r, g, b in rgb)
    with open(os.path.join(HERE, "colormaps.qrc"), "w") as f:
        f.write('<!DOCTYPE RCC><RCC version="1.0">\n<qresource prefix="/colormaps">\n')
        for name in ORDER:
            f.write(f'  <file>{name}.lut</file>\n')
        f.write('</qresource>\n</RCC>\n')


if __name__ == "__main__":
    main()
