// Checks on a tile-compressed image's tile table made before cfitsio decodes any tile, since its
// allocations and decoders trust what the table says (internal to io).
#pragma once

#include <fitsio.h>

#include <string>

namespace stacklens::io {

// cfitsio allocates each compressed tile's buffer from the length in its heap descriptor before
// reading it, so a damaged descriptor can ask for gigabytes. Throws IoError unless every
// descriptor lies inside the heap (PCOUNT bytes). where: " of HDU n", or "" for the primary.
void checkTileDescriptors(fitsfile* f, const std::string& path, const std::string& where);

// RICE tiles whose bit stream would run past their bytes (io/rice_check.h) and PLIO tiles whose
// line list would (io/plio_check.h) throw IoError: cfitsio's decoders read past a damaged tile's
// end. Other compressions, and tables whose parameters cannot be read, pass (the header pass and
// cfitsio's own checks report those).
void checkTileStreams(fitsfile* f, const std::string& path, const std::string& where);

}  // namespace stacklens::io
