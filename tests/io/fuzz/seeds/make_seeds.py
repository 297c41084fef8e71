#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora next to this script: small catalogs of every format the
catalog reader takes, pipeline command lines and session files. Standard library only."""
import base64
import json
import pathlib
import struct

here = pathlib.Path(__file__).parent


def write(folder, name, data):
    path = here / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


# ---- catalogs ----
write("catalog", "sources.csv",
      '# sources\nra,dec,name,flux\n10.684708,41.26875,M31,3.4\n'
      '"83.8221",-5.3911,"M 42, Orion",\n12:34:56.7,-12:34:56,x,1e3\n')
write("catalog", "vizier.tsv",
      "RAJ2000\tDEJ2000\tVmag\n\"h:m:s\"\t\"d:m:s\"\tmag\n----------\t---------\t-----\n"
      "00 00 00.22\t+01 05 20.4\t9.10\n23 59 59.99\t-00 30 00.0\t\n")
write("catalog", "blanks.txt", "# x y\n1 2\n3.5 -4e2\n")
write("catalog", "ipac.tbl",
      "\\catalog = 'seed'\n\\ comment\n"
      "|----ra----|---dec----|-name-|--flux--|\n"
      "|--double--|--double--|-char-|--real--|\n"
      "|   deg    |   deg    |      |  mJy   |\n"
      "|   null   |   null   |  -   |  -99   |\n"
      "  10.68470   41.26875  M31     -99    \n"
      "  83.82208   -5.39111  -       12.5   \n")

FIELDS = ('<FIELD name="id" datatype="int"><VALUES null="-1"/></FIELD>'
          '<FIELD name="ra" datatype="double" unit="deg" ucd="pos.eq.ra;meta.main"/>'
          '<FIELD name="dec" datatype="float" ucd="pos.eq.dec;meta.main"/>'
          '<FIELD name="ok" datatype="boolean" arraysize="3"/>'
          '<FIELD name="bits" datatype="bit" arraysize="10"/>'
          '<FIELD name="name" datatype="char" arraysize="8*"/>'
          '<FIELD name="u" datatype="unicodeChar" arraysize="4"/>'
          '<FIELD name="grid" datatype="short" arraysize="2x*"/>'
          '<FIELD name="ub" datatype="unsignedByte"/>'
          '<FIELD name="lg" datatype="long"/>'
          '<FIELD name="z" datatype="doubleComplex"/>'
          '<FIELD name="c" datatype="floatComplex" arraysize="2"/>')


def row(i):
    return (struct.pack(">i", i) + struct.pack(">d", 10.5 * i) + struct.pack(">f", -5.25)
            + b"TF?" + bytes([0b10110000, 0b01000000]) + struct.pack(">i", 3) + b"M%02d" % i
            + "ab".encode("utf-16-be") + b"\0\0\0\0" + struct.pack(">i", 1) + struct.pack(">hh", 1, -2)
            + bytes([200]) + struct.pack(">q", -(2 ** 40)) + struct.pack(">dd", 1.5, float("nan"))
            + struct.pack(">ffff", 1, 2, 3, 4))


def votable(data):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<VOTABLE version="1.4" '
            'xmlns="http://www.ivoa.net/xml/VOTable/v1.3"><RESOURCE><TABLE name="seed">'
            + FIELDS + "<DATA>" + data + "</DATA></TABLE></RESOURCE></VOTABLE>\n")


binary = base64.encodebytes(row(1) + row(-1)).decode()
binary2 = base64.encodebytes(b"\0\0" + row(1) + b"\x40\x00" + row(2)).decode()
write("catalog", "binary.vot", votable('<BINARY><STREAM encoding="base64">' + binary + "</STREAM></BINARY>"))
write("catalog", "binary2.vot", votable('<BINARY2><STREAM encoding="base64">' + binary2 + "</STREAM></BINARY2>"))
cell = base64.b64encode(struct.pack(">i", 42)).decode()
write("catalog", "tabledata.vot", votable(
    "<TABLEDATA><TR><TD encoding=\"base64\">" + cell + "</TD><TD>10.5</TD><TD>NaN</TD>"
    "<TD>T F ?</TD><TD>1 0 1 1 0 0 0 0 0 1</TD><TD>M31 &amp; x</TD><TD>caf\u00e9</TD>"
    "<TD>1 2 3 4</TD><TD>255</TD><TD>-1</TD><TD>1 2</TD><TD>1 2 3 4</TD></TR>"
    "<TR><TD>-1</TD><TD/><TD/><TD>TFT</TD><TD/><TD/><TD/><TD/><TD/><TD/><TD/><TD/></TR>"
    "</TABLEDATA>"))


def card(text):
    return text.ljust(80).encode()


def fits_table():
    primary = card("SIMPLE  =                    T") + card("BITPIX  =                    8") + \
        card("NAXIS   =                    0") + card("EXTEND  =                    T") + card("END")
    primary = primary.ljust(2880, b" ")
    rows = [struct.pack(">d", 10.5 * i) + struct.pack(">d", -5.0 + i) + b"M%02d    " % i + b"T"
            + struct.pack(">ii", 8, 0) for i in range(3)]
    heap = struct.pack(">" + "d" * 8, *range(8))
    data = b"".join(rows)
    header = [card("XTENSION= 'BINTABLE'"), card("BITPIX  =                    8"),
              card("NAXIS   =                    2"), card("NAXIS1  = %20d" % len(rows[0])),
              card("NAXIS2  =                    3"), card("PCOUNT  = %20d" % len(heap)),
              card("GCOUNT  =                    1"), card("TFIELDS =                    5"),
              card("TTYPE1  = 'RA      '"), card("TFORM1  = 'D       '"), card("TUNIT1  = 'deg     '"),
              card("TTYPE2  = 'DEC     '"), card("TFORM2  = 'D       '"),
              card("TTYPE3  = 'NAME    '"), card("TFORM3  = '7A      '"),
              card("TTYPE4  = 'OK      '"), card("TFORM4  = 'L       '"),
              card("TTYPE5  = 'SPEC    '"), card("TFORM5  = '1PD(8)  '"),
              card("EXTNAME = 'SOURCES '"), card("END")]
    ext = b"".join(header).ljust(2880, b" ") + (data + heap).ljust(2880, b"\0")
    return primary + ext


write("catalog", "table.fits", fits_table())

# ---- pipeline command lines (one word a line, as pipeline_harness.h reads them) ----
pipelines = {
    "blur.txt": ["--blur", "1.5", "--blur-truncate", "4", "--blur-nan-aware"],
    "deconvolve.txt": ["--deconvolve", "20", "--psf-sigma", "1.2,1.5,1.5", "--rl-mode", "3d",
                       "--slab", "5", "--boundary", "periodic", "--tv", "0.002", "--accelerate",
                       "--rl-epsilon", "1e-6"],
    "sources.txt": ["--median", "3", "--stats", "3,2.5,5", "--segment", "3,4,5",
                    "--segment-clip", "3", "--sources", "out.csv", "--statistics", "st.csv"],
    "psf_file.txt": ["--deconvolve", "10", "--psf", "psf file.fits", "--outliers", "5,3,hot"],
    "above.txt": ["--segment-above", "100,8,2"],
}
for name, words in pipelines.items():
    write("pipeline", name, "\n".join(words))

# ---- session files ----
session = {
    "format": "stacklens-session", "version": 1,
    "file": {"path": "/data/cube.fits", "relative": "cube.fits", "hdu": 1, "plane": 0, "slice": 3},
    "view": {"fit": False, "zoom": 2.5, "centre": [10.5, 20.5], "crosshair": [1, 2]},
    "display": {"colormap": "viridis", "scale": "asinh", "exponent": 2, "limits_mode": "99.5",
                "limits": [0, 1], "invert": True, "smooth": False, "nan_colour": "#ff00ff"},
    "pipeline": {"outliers": {"enabled": True, "size": 5, "threshold": 3, "mode": "both"},
                 "median": {"enabled": False, "size": 3},
                 "blur": {"enabled": True, "sigma": [0, 1.5, 1.5], "truncate": 4, "nan_aware": True},
                 "deconvolution": {"enabled": True, "iterations": 10, "three_d": False,
                                   "boundary": "reflect", "tv_lambda": 0, "accelerate": True,
                                   "slab_half_width": 2, "psf_sigma": [1, 2, 2],
                                   "psf_name": "inline", "psf_file": "",
                                   "psf": {"shape": [1, 1, 2], "spacing": [1, 1, 1],
                                           "spacing_known": False, "unit": "",
                                           "float32_le": "AAAAPwAAAD8="}},
                 "statistics": {"enabled": True, "kappa_lower": 3, "kappa_upper": 3,
                                "max_iterations": 10},
                 "segmentation": {"enabled": True, "nsigma": 5, "connectivity": 8,
                                  "min_pixels": 1}},
    "processing": {"backend": 0, "view_mode": 1},
    "regions_ds9": "# Region file format: DS9 version 4.1\nimage\ncircle(10,10,5)\n",
    "overlays": {"colorbar": True, "compass": False, "scale_bar": True, "grid": False},
}
write("session", "session.json", json.dumps(session, indent=1))
write("session", "minimal.json", json.dumps({"format": "stacklens-session", "version": 1,
                                             "file": {"path": "/x.fits"}}))
