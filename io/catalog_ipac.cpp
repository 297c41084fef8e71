// IPAC tables: `\` keyword and comment lines, `|`-bounded header lines, fixed-width data lines.
#include <string>
#include <string_view>
#include <vector>

#include "io/catalog_readers.h"
#include "io/catalog_rows.h"

namespace stacklens::io {

namespace {

// The lines of text, without their line ends ("\n" or "\r\n").
std::vector<std::string> linesOf(std::string_view text) {
  std::vector<std::string> all;
  size_t p = 0;
  while (p <= text.size()) {
    size_t e = text.find('\n', p);
    if (e == std::string_view::npos) e = text.size();
    std::string l(text.substr(p, e - p));
    if (!l.empty() && l.back() == '\r') l.pop_back();
    all.push_back(l);
    p = e + 1;
  }
  return all;
}

// IPAC tables: `\` keyword and comment lines, then `|`-bounded header lines (names, types,
// units, nulls) whose bars give the fixed column boundaries of the data lines.
CatalogTable parseIpacLines(const std::vector<std::string>& lines, const std::string& name,
                            uint64_t sourceBytes) {
  CatalogTable t;
  t.name = name;
  std::vector<std::string> header;
  size_t i = 0;
  for (; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (!l.empty() && l[0] == '\\') continue;
    if (!l.empty() && l[0] == '|') {
      header.push_back(l);
      continue;
    }
    if (!header.empty()) break;
  }
  if (header.empty()) throw IoError(name, "IPAC table without a header line");
  std::vector<size_t> bars;
  for (size_t k = 0; k < header[0].size(); ++k)
    if (header[0][k] == '|') bars.push_back(k);
  auto slice = [&](const std::string& l, size_t c) {
    const size_t a = bars[c] + 1, b = bars[c + 1];
    return a >= l.size() ? std::string() : trimmed(std::string_view(l).substr(a, b - a));
  };
  const size_t n = bars.size() < 2 ? 0 : bars.size() - 1;
  std::vector<std::string> nulls(n);
  // Names and types may be padded with dashes as well as blanks (`|---ra---|`); units and nulls
  // keep theirs (a unit or a null value may be "-").
  auto undashed = [](std::string s) {
    const size_t a = s.find_first_not_of(" -"), b = s.find_last_not_of(" -");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  for (size_t c = 0; c < n; ++c) {
    t.columns.push_back(undashed(slice(header[0], c)));
    t.datatypes.push_back(header.size() > 1 ? undashed(slice(header[1], c)) : "");
    t.units.push_back(header.size() > 2 ? slice(header[2], c) : "");
    nulls[c] = header.size() > 3 ? slice(header[3], c) : "null";
  }
  const RowLimit limit(n, sourceBytes, name);
  for (; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (trimmed(l).empty() || l[0] == '\\' || l[0] == '|') continue;
    limit.check(t.cells.size() + 1);
    std::vector<std::string> row(n);
    for (size_t c = 0; c < n; ++c) {
      // Data lines are often one character longer or shorter than the bars: take up to the bar.
      const size_t a = bars[c] == 0 ? 0 : bars[c] + 1;
      const size_t b = c + 1 == n ? l.size() : bars[c + 1] + 1;
      std::string v = a >= l.size() ? std::string() : trimmed(std::string_view(l).substr(a, b - a));
      if (v == nulls[c] || v == "null") v.clear();
      row[c] = v;
    }
    t.cells.push_back(std::move(row));
  }
  finishTable(t, sourceBytes, name);
  return t;
}

}  // namespace

bool looksLikeIpac(std::string_view text) {
  for (const std::string& l : linesOf(text)) {
    if (trimmed(l).empty() || l[0] == '#' || l[0] == '\\') continue;
    return l[0] == '|';
  }
  return false;
}

CatalogTable parseIpac(std::string_view text, const std::string& name) {
  return parseIpacLines(linesOf(text), name, text.size());
}

}  // namespace stacklens::io
