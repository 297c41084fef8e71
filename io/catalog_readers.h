// The catalog readers, one per format, that io/catalog.cpp chooses among (internal to io/).
#pragma once

#include <string>
#include <string_view>

#include "io/catalog.h"

namespace stacklens::io {

// CSV, TSV, semicolon-, bar- or blank-separated text with the delimiter sniffed
// (catalog_delimited.cpp).
CatalogTable parseDelimited(std::string_view text, const std::string& name);
// IPAC tables: the first line that is not blank or a comment starts with '|' (catalog_ipac.cpp).
bool looksLikeIpac(std::string_view text);
CatalogTable parseIpac(std::string_view text, const std::string& name);
// VOTable: TABLEDATA, BINARY and BINARY2 through expat (catalog_votable.cpp).
CatalogTable parseVoTable(const std::string& text, const std::string& path,
                          const CatalogReadOptions& options);
// FITS ASCII and binary tables through cfitsio (catalog_fits.cpp).
CatalogTable readFitsTable(const std::string& path, const CatalogReadOptions& options);

}  // namespace stacklens::io
