// OME-Zarr images (NGFF 0.4 in a v2 group's .zattrs, 0.5 in a v3 group's zarr.json under "ome"):
// which arrays hold the levels of a multiscale image, their axes, units, voxel scales and the
// omero channel display hints. A plain Zarr array (no OME metadata) is an image of one level.
#pragma once

#include <string>
#include <vector>

#include "io/stack.h"
#include "io/zarr_store.h"

namespace stacklens::io {

struct OmeAxis {
  std::string name;  // "t", "c", "z", "y", "x" or another name
  std::string type;  // "time", "channel", "space" or "" when not given
  std::string unit;  // as written, e.g. "micrometer"; "" when not given
};

// omero "channels" entry: a display hint for the viewer's first look.
struct OmeChannel {
  std::string label;
  std::string color;  // "RRGGBB" hex, "" when not given
  bool hasWindow = false;
  double start = 0, end = 0;  // the display window
  bool active = true;
};

struct ZarrImage {
  std::string folder;                       // the folder opened
  std::string omeVersion;                   // "0.4", "0.5", ...; "" for a plain array
  std::vector<std::string> levels;          // the arrays' folders, level 0 (finest) first
  std::vector<OmeAxis> axes;                // one per array axis; empty for a plain array
  std::vector<std::vector<double>> scales;  // per level, one per axis; empty where not given
  std::vector<OmeChannel> channels;
  std::vector<HeaderCard> describe;  // what the OME metadata says, for the header viewer
};

// True when path is a local folder holding Zarr metadata (zarr.json, .zarray, .zgroup or .zattrs).
bool isZarrFolder(const std::string& path);

// Finds the image in a Zarr folder (a path or URL, read through store): the folder's own array, or
// the multiscales of an OME-Zarr group (through a bioformats2raw layout's "0" image). Throws
// IoError naming the metadata file and the reason (no image, an escaping dataset path, axes that do
// not match).
ZarrImage findZarrImage(const ZarrStore& store, const std::string& folder);

// OME (UDUNITS-2) unit names in the spelling StackLens uses elsewhere ("micrometer" → "micron",
// "nanometer" → "nm", "second" → "s"); unknown names are kept.
std::string stackUnit(const std::string& omeUnit);

}  // namespace stacklens::io
