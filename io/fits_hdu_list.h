// The HDUs of an open FITS file as the HDU chooser lists them, and the one a reader shows
// (internal to io).
#pragma once

#include <fitsio.h>

#include <map>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

// Every HDU (at most the first 10000) by name, type and axes. unreadable: HDUs (0-based) the
// header pass rejected, listed as "unreadable: reason" without being parsed. Leaves the file at
// the last HDU listed.
std::vector<HduInfo> listHdus(fitsfile* f, const std::string& path,
                              const std::map<int, std::string>& unreadable);

// The HDU to show: options.hdu when it is a readable image, else (options.hdu < 0) the first
// image HDU with data. A random groups primary (type "random groups array": uv data, records of
// parameters and small arrays, which astropy reads as a GroupsHDU) is no image and never shown;
// cfitsio steps over its groups (PCOUNT and GCOUNT), and the next image HDU is chosen. Throws
// IoError saying why there is none.
int chooseHdu(const std::vector<HduInfo>& hdus, const OpenOptions& options,
              const std::map<int, std::string>& unreadable, const std::string& path);

}  // namespace stacklens::io
