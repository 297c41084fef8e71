// The header of a tile-compressed image rebuilt from its binary table's cards, for the files on
// which cfitsio's own rebuilding fails (internal to io).
#pragma once

#include <string>

namespace stacklens::io {

// The image's header (80-character cards, END left out) from the table's: the table's own
// structure and the compression's keywords dropped, ZSIMPLE/ZTENSION, ZBITPIX, ZNAXIS, ZNAXISn,
// ZEXTEND, ZPCOUNT and ZGCOUNT renamed, every other card copied in order, as cfitsio's
// fits_img_decompress_header does; but the structural cards go first whatever their order in
// the table. cfitsio 4.2.0 copies them in the table's order, so that a table whose ZTENSION
// follows ZBITPIX (as in astropy's own test file comp.fits, written by PyFITS) gives a header
// starting with BITPIX, and fits_convert_hdr2str fails with status 252 ("1st key not SIMPLE or
// XTENSION") while the image itself reads cleanly.
std::string imageHeaderFromTableCards(const std::string& tableCards);

}  // namespace stacklens::io
