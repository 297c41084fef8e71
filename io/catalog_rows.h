// What every catalog reader shares: the limit on the rows a table may claim, the last touches of
// a table, and how a value becomes a cell's text.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "io/catalog.h"
#include "io/file_checks.h"
#include "io/text_fields.h"

namespace stacklens::io {

// Shortest text that reads back to the same value (std::to_chars), locale-free.
template <typename T>
std::string formatValue(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return "";
  }
  char text[64];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, v);
  return ec == std::errc() ? std::string(text, end) : std::string();
}

// Every cell is a std::string and every row a vector of them: a header may claim far more than
// the file holds (a million columns over rows of one value, a billion rows of no bytes). A
// table is refused when its cells would take more memory than the allocation cap, or when there
// are more cells than the bytes it was read from can hold: a cell takes at least a byte in
// every format, and the empty cells of short text rows are allowed up to 16 per byte. Checked
// before each row is stored, so that nothing is allocated past the limit.
class RowLimit {
 public:
  RowLimit(uint64_t columns, uint64_t sourceBytes, std::string name)
      : columns_(columns), sourceBytes_(sourceBytes), name_(std::move(name)) {
    constexpr uint64_t kCellsPerByte = 16, kSmallTable = 4096;
    const uint64_t rowBytes = sizeof(std::vector<std::string>) + columns * sizeof(std::string);
    const uint64_t perRow = std::max<uint64_t>(columns, 1);
    byMemory_ = allocationCap() / rowBytes;
    bySize_ = std::max(sourceBytes, kSmallTable / kCellsPerByte) * kCellsPerByte / perRow;
  }
  void check(uint64_t rows) const {
    if (rows <= std::min(byMemory_, bySize_)) return;
    const std::string table =
        "a table of " + std::to_string(rows) + " rows of " + std::to_string(columns_) + " columns";
    if (rows > bySize_)
      throw IoError(name_, table + " cannot come from " + std::to_string(sourceBytes_) + " bytes");
    throw IoError(name_, table + " would take more memory than the allocation cap (" +
                             std::to_string(allocationCap() >> 20) +
                             " MiB, STACKLENS_ALLOCATION_CAP_MB)");
  }

 private:
  uint64_t columns_, sourceBytes_, byMemory_ = 0, bySize_ = 0;
  std::string name_;
};

// The row limit checked once more, and every row and column list made as long as the columns.
inline void finishTable(CatalogTable& t, uint64_t sourceBytes, const std::string& path) {
  RowLimit(t.columns.size(), sourceBytes, path).check(t.cells.size());
  const size_t n = t.columns.size();
  t.units.resize(n);
  t.ucds.resize(n);
  t.datatypes.resize(n);
  for (auto& row : t.cells) row.resize(n);
}

// A fixed-width text value without its padding: up to the first NUL, trailing blanks dropped.
inline std::string stripPadding(std::string s) {
  const size_t nul = s.find('\0');
  if (nul != std::string::npos) s.resize(nul);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// A cell that reads as a number (after trimming).
inline bool looksNumeric(const std::string& s) {
  double v = 0;
  return parseNumber(trimmed(s), v);
}

}  // namespace stacklens::io
