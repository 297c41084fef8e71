// Catalogs: which reader a file or a text takes (FITS tables, VOTable, IPAC, delimited text),
// chosen by content; each format's reader is its own file (catalog_*.cpp).
#include "io/catalog.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "io/catalog_readers.h"
#include "io/file_checks.h"
#include "io/text_fields.h"

namespace stacklens::io {

namespace {

std::string readWholeFile(const std::string& path, uint64_t size) {
  if (size > allocationCap())
    throw IoError(path,
                  std::to_string(size >> 20) +
                      " MiB of text: more than the allocation cap (STACKLENS_ALLOCATION_CAP_MB)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError(path, "read error");
  return text;
}

bool looksLikeXml(std::string_view s) {
  if (s.substr(0, 3) == "\xef\xbb\xbf") s.remove_prefix(3);
  const size_t first = s.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && s[first] == '<';
}

}  // namespace

CatalogTable parseCatalogText(const std::string& text, const std::string& name,
                              const CatalogReadOptions& options) {
  if (looksLikeXml(text)) return parseVoTable(text, name, options);
  if (text.find('\0') != std::string::npos)
    throw IoError(name, "not a catalog: binary data of an unknown format");
  std::string_view body = text;
  if (body.substr(0, 3) == "\xef\xbb\xbf") body.remove_prefix(3);
  if (looksLikeIpac(body)) return parseIpac(body, name);
  return parseDelimited(body, name);
}

CatalogTable readCatalog(const std::string& path, const CatalogReadOptions& options) {
  const uint64_t size = checkReadableFile(path);
  std::string head;
  {
    std::ifstream in(path, std::ios::binary);
    char buffer[16] = {};
    in.read(buffer, sizeof buffer);
    head.assign(buffer, static_cast<size_t>(in.gcount()));
  }
  const std::string ext = lowerCase(std::filesystem::path(path).extension().string());
  const bool gzip = head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
                    static_cast<unsigned char>(head[1]) == 0x8b;
  const std::string stem = lowerCase(std::filesystem::path(path).stem().string());
  const bool fitsName = ext == ".fits" || ext == ".fit" || ext == ".fts" ||
                        (ext == ".gz" && (stem.ends_with(".fits") || stem.ends_with(".fit")));
  if (head.rfind("SIMPLE  =", 0) == 0 || (gzip && fitsName)) return readFitsTable(path, options);
  if (gzip) throw IoError(path, "compressed catalogs other than .fits.gz are not read");
  CatalogTable t = parseCatalogText(readWholeFile(path, size), path, options);
  if (t.name == path) t.name = std::filesystem::path(path).filename().string();
  return t;
}

}  // namespace stacklens::io
