// A catalog table as RFC 4180 CSV text, and written to a file atomically.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "io/catalog.h"
#include "io/file_checks.h"

namespace stacklens::io {

namespace {

std::string csvField(const std::string& s) {
  const bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
                     (!s.empty() && (s.front() == ' ' || s.back() == ' ' || s.front() == '#'));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string csvText(const CatalogTable& table) {
  std::string out;
  auto writeRow = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < table.columns.size(); ++i) {
      if (i) out += ',';
      out += csvField(i < row.size() ? row[i] : std::string());
    }
    out += "\r\n";  // RFC 4180
  };
  writeRow(table.columns);
  for (const auto& row : table.cells) writeRow(row);
  return out;
}

void writeCsv(const CatalogTable& table, const std::string& path) {
  AtomicOutput output(path, "");
  {
    std::ofstream out(output.tempPath(), std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(path, std::string("cannot write: ") + std::strerror(errno));
    out << csvText(table);
    out.flush();
    if (!out) throw IoError(path, std::string("write error: ") + std::strerror(errno));
  }
  output.commit();
}

}  // namespace stacklens::io
