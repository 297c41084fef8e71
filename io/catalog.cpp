// Catalog readers: delimited text and IPAC tables by hand, VOTable through expat (TABLEDATA,
// BINARY, BINARY2), FITS tables through cfitsio; everything ends as text cells.
#include "io/catalog.h"

#include <expat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string_view>

#include "io/file_checks.h"
#include "io/fits_support.h"
#include "io/fits_table_file.h"
#include "io/sexagesimal.h"
#include "io/text_fields.h"

namespace stacklens::io {

namespace {

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

void finishTable(CatalogTable& t, uint64_t sourceBytes, const std::string& path) {
  RowLimit(t.columns.size(), sourceBytes, path).check(t.cells.size());
  const size_t n = t.columns.size();
  t.units.resize(n);
  t.ucds.resize(n);
  t.datatypes.resize(n);
  for (auto& row : t.cells) row.resize(n);
}

// ---- Delimited text ----

// Splits text into records of fields: RFC 4180 quotes (a quoted field may hold the delimiter,
// "" for a quote and line breaks). delimiter ' ' means runs of blanks (spaces or tabs).
std::vector<std::vector<std::string>> splitRecords(std::string_view text, char delimiter,
                                                   std::vector<bool>* quotedFirst = nullptr) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> record;
  std::string field;
  bool inQuotes = false, fieldStarted = false, anyQuoted = false;
  const bool blanks = delimiter == ' ';
  auto endField = [&] {
    record.push_back(anyQuoted ? field : trimmed(field));
    field.clear();
    fieldStarted = false;
    anyQuoted = false;
  };
  auto endRecord = [&] {
    if (fieldStarted || !record.empty() || !field.empty()) endField();
    if (blanks) {
      record.erase(std::remove(record.begin(), record.end(), std::string()), record.end());
    }
    out.push_back(std::move(record));
    if (quotedFirst) quotedFirst->push_back(false);
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inQuotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          inQuotes = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"' && trimmed(field).empty()) {
      field.clear();
      inQuotes = true;
      fieldStarted = true;
      anyQuoted = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      endRecord();
    } else if (blanks ? (c == ' ' || c == '\t') : c == delimiter) {
      if (blanks && !fieldStarted && field.empty()) continue;
      endField();
    } else {
      field += c;
      fieldStarted = true;
    }
  }
  if (fieldStarted || !record.empty() || !field.empty()) endRecord();
  return out;
}

bool looksNumeric(const std::string& s) {
  double v = 0;
  return parseNumber(trimmed(s), v);
}

bool isRule(const std::vector<std::string>& fields) {
  if (fields.empty()) return false;
  for (const std::string& f : fields)
    if (f.empty() || f.find_first_not_of("-=+ ") != std::string::npos) return false;
  return true;
}

// The delimiter that splits the sample lines into the same number (>1) of fields.
char sniffDelimiter(const std::vector<std::string>& lines) {
  for (char d : {'\t', ',', ';', '|', ' '}) {
    size_t count = 0;
    bool consistent = true;
    for (const std::string& line : lines) {
      const auto r = splitRecords(line, d);
      const size_t n = r.empty() ? 0 : r[0].size();
      if (count == 0) count = n;
      if (n != count) consistent = false;
    }
    if (consistent && count > 1) return d;
  }
  // Inconsistent lines: the delimiter of the header, if any.
  for (char d : {'\t', ',', ';', '|'})
    if (!lines.empty() && lines[0].find(d) != std::string::npos) return d;
  return ' ';
}

bool isIpac(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) {
    if (l.empty() || l[0] == '\\') continue;
    return l[0] == '|';
  }
  return false;
}

// IPAC tables: `\` keyword and comment lines, then `|`-bounded header lines (names, types,
// units, nulls) whose bars give the fixed column boundaries of the data lines.
CatalogTable parseIpac(const std::vector<std::string>& lines, const std::string& name,
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

CatalogTable parseDelimited(std::string_view text, const std::string& name) {
  // Lines for sniffing: comments apart.
  std::vector<std::string> lines, comments;
  size_t pos = 0;
  while (pos <= text.size() && lines.size() < 12) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string l(text.substr(pos, end - pos));
    if (!l.empty() && l.back() == '\r') l.pop_back();
    pos = end + 1;
    if (trimmed(l).empty()) continue;
    if (l[0] == '#' || l[0] == '\\') {
      if (lines.empty()) comments.push_back(l);
      continue;
    }
    lines.push_back(l);
  }
  if (isIpac(lines)) {
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
    return parseIpac(all, name, text.size());
  }
  if (lines.empty()) throw IoError(name, "no table rows in the file");
  const char delimiter = sniffDelimiter(lines);

  // Records without the comment lines (a comment is a record whose first character is `#`).
  std::string body;
  body.reserve(text.size());
  pos = 0;
  bool inQuotes = false;
  std::string lastComment;
  bool seenData = false;
  while (pos < text.size()) {
    size_t end = pos;
    // A line ends at a newline outside quotes.
    for (; end < text.size(); ++end) {
      if (text[end] == '"') inQuotes = !inQuotes;
      if (text[end] == '\n' && !inQuotes) break;
    }
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    if (!l.empty() && l.front() == '#' && !inQuotes) {
      if (!seenData) lastComment = std::string(l.substr(1));
      continue;
    }
    if (!trimmed(l).empty()) seenData = true;
    body.append(l);
    body += '\n';
  }
  auto records = splitRecords(body, delimiter);
  records.erase(std::remove_if(records.begin(), records.end(),
                               [](const std::vector<std::string>& r) {
                                 return r.empty() || (r.size() == 1 && r[0].empty());
                               }),
                records.end());
  if (records.empty()) throw IoError(name, "no table rows in the file");

  CatalogTable t;
  t.name = name;
  size_t first = 0;
  const auto& head = records[0];
  const bool headNumeric =
      std::all_of(head.begin(), head.end(), [](const std::string& f) { return looksNumeric(f); });
  if (!headNumeric) {
    t.columns = head;
    first = 1;
  } else {
    // astropy's commented_header: the names on the last comment line above the data.
    const auto fromComment = splitRecords(trimmed(lastComment), delimiter);
    if (!fromComment.empty() && fromComment[0].size() == head.size()) {
      t.columns = fromComment[0];
    } else {
      for (size_t c = 0; c < head.size(); ++c) t.columns.push_back("col" + std::to_string(c + 1));
    }
  }
  // VizieR's TSV: a units line and a rule of dashes under the names.
  if (first == 1 && records.size() > 2 && isRule(records[2]) && !isRule(records[1])) {
    t.units = records[1];
    first = 3;
  } else if (first == 1 && records.size() > 1 && isRule(records[1])) {
    first = 2;
  }
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (t.columns[c].empty()) t.columns[c] = "col" + std::to_string(c + 1);
  size_t ragged = 0;
  for (size_t r = first; r < records.size(); ++r) {
    if (records[r].size() != t.columns.size()) ++ragged;
    t.cells.push_back(std::move(records[r]));
  }
  if (ragged > 0)
    t.note = std::to_string(ragged) + " rows with a different number of fields than the header";
  finishTable(t, text.size(), name);
  return t;
}

// ---- VOTable ----

struct VoField {
  std::string name, unit, ucd, datatype, arraysize, nullValue;
  bool hasNull = false;
};

struct VoTable {
  std::string name;
  std::vector<VoField> fields;
  std::vector<std::vector<std::string>> rows;
  std::string stream;  // base64 of BINARY/BINARY2
  int binary = 0;      // 1: BINARY, 2: BINARY2
  std::string unsupported;
};

std::string localName(const char* n) {
  const char* colon = std::strrchr(n, ':');
  return colon ? colon + 1 : n;
}

std::string attribute(const char** attrs, const char* key) {
  for (int i = 0; attrs[i]; i += 2)
    if (localName(attrs[i]) == key) return attrs[i + 1];
  return "";
}

// A `<TD encoding="base64">` cell: its value written as in a BINARY stream (a variable array
// with its count). Sets error when the bytes do not hold one value of the field.
std::string decodeBase64Cell(const std::string& text, const VoField& field, std::string& error);
std::string tableDataCell(const VoField& f, const std::string& cell);

struct VoParser {
  std::vector<VoTable> tables;
  std::vector<std::string> stack;
  std::string text;
  std::vector<std::string> row;
  bool inTable = false, collecting = false, base64Cell = false;
  std::string error;  // the first cell that could not be decoded

  static void start(void* data, const char* el, const char** attrs) {
    auto* p = static_cast<VoParser*>(data);
    const std::string n = localName(el);
    p->stack.push_back(n);
    if (n == "TABLE") {
      p->tables.emplace_back();
      p->tables.back().name = attribute(attrs, "name");
      if (p->tables.back().name.empty()) p->tables.back().name = attribute(attrs, "ID");
      p->inTable = true;
    } else if (!p->inTable || p->tables.empty()) {
      return;
    } else if (n == "FIELD") {
      VoField f;
      f.name = attribute(attrs, "name");
      if (f.name.empty()) f.name = attribute(attrs, "ID");
      f.unit = attribute(attrs, "unit");
      f.ucd = attribute(attrs, "ucd");
      f.datatype = attribute(attrs, "datatype");
      f.arraysize = attribute(attrs, "arraysize");
      p->tables.back().fields.push_back(f);
    } else if (n == "VALUES" && p->stack.size() >= 2 && p->stack[p->stack.size() - 2] == "FIELD" &&
               !p->tables.back().fields.empty()) {
      for (int i = 0; attrs[i]; i += 2)
        if (localName(attrs[i]) == "null") {
          p->tables.back().fields.back().nullValue = attrs[i + 1];
          p->tables.back().fields.back().hasNull = true;
        }
    } else if (n == "TR") {
      p->row.clear();
    } else if (n == "TD") {
      p->text.clear();
      p->collecting = true;
      p->base64Cell = attribute(attrs, "encoding") == "base64";
    } else if (n == "BINARY" || n == "BINARY2") {
      p->tables.back().binary = n == "BINARY" ? 1 : 2;
    } else if (n == "STREAM") {
      const std::string encoding = attribute(attrs, "encoding");
      if (!attribute(attrs, "href").empty())
        p->tables.back().unsupported = "its data are in an external stream";
      else if (!encoding.empty() && encoding != "base64")
        p->tables.back().unsupported = "its stream is encoded as " + encoding;
      p->text.clear();
      p->collecting = true;
    } else if (n == "FITS") {
      p->tables.back().unsupported = "its data are an embedded FITS file";
    }
  }

  static void end(void* data, const char* el) {
    auto* p = static_cast<VoParser*>(data);
    const std::string n = localName(el);
    if (!p->stack.empty()) p->stack.pop_back();
    if (n == "TABLE") {
      p->inTable = false;
    } else if (!p->inTable || p->tables.empty()) {
      return;
    } else if (n == "TD") {
      const std::vector<VoField>& fields = p->tables.back().fields;
      if (p->base64Cell && p->row.size() < fields.size()) {
        std::string why;
        p->row.push_back(decodeBase64Cell(p->text, fields[p->row.size()], why));
        if (!why.empty() && p->error.empty())
          p->error = "VOTable row " + std::to_string(p->tables.back().rows.size() + 1) +
                     ", column " + std::to_string(p->row.size()) + ": " + why;
      } else if (p->row.size() < fields.size()) {
        p->row.push_back(tableDataCell(fields[p->row.size()], p->text));
      } else {
        p->row.push_back(p->text);
      }
      p->collecting = false;
      p->base64Cell = false;
    } else if (n == "TR") {
      p->tables.back().rows.push_back(std::move(p->row));
      p->row.clear();
    } else if (n == "STREAM") {
      p->tables.back().stream = std::move(p->text);
      p->text.clear();
      p->collecting = false;
    }
  }

  static void characters(void* data, const char* s, int len) {
    auto* p = static_cast<VoParser*>(data);
    if (p->collecting) p->text.append(s, static_cast<size_t>(len));
  }
};

std::vector<uint8_t> decodeBase64(const std::string& s) {
  static const std::array<int8_t, 256> table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(a[i])] = static_cast<int8_t>(i);
    return t;
  }();
  std::vector<uint8_t> out;
  out.reserve(s.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    const int v = table[static_cast<unsigned char>(c)];
    if (v < 0) continue;  // whitespace, padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
    }
  }
  return out;
}

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& d) : d_(d) {}
  bool has(size_t n) const { return n <= d_.size() - pos_; }
  size_t position() const { return pos_; }
  bool atEnd() const { return pos_ >= d_.size(); }
  uint64_t big(size_t n) {  // n big-endian bytes
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | d_[pos_ + i];
    pos_ += n;
    return v;
  }
  const uint8_t* take(size_t n) {
    const uint8_t* p = d_.data() + pos_;
    pos_ += n;
    return p;
  }

 private:
  const std::vector<uint8_t>& d_;
  size_t pos_ = 0;
};

size_t primitiveSize(const std::string& t) {
  if (t == "boolean" || t == "unsignedByte" || t == "char") return 1;
  if (t == "short" || t == "unicodeChar") return 2;
  if (t == "int" || t == "float") return 4;
  if (t == "long" || t == "double" || t == "floatComplex") return 8;
  if (t == "doubleComplex") return 16;
  return 0;
}

// A product of array dimensions that saturates instead of wrapping: anything this large is
// more than a stream holds, and is refused as such.
constexpr uint64_t kHugeCount = uint64_t{1} << 56;
uint64_t saturatingProduct(uint64_t a, uint64_t b) {
  return b != 0 && a > kHugeCount / b ? kHugeCount : std::min(a * b, kHugeCount);
}

// Primitives per item of an arraysize ("3", "3x2": 6 per cell; "*", "10*": 1 per item; "3x*": 3
// per item), variable when its last dimension is ("*", "n*"): then the stream gives the number
// of items before the cell.
uint64_t fixedElements(const std::string& arraysize, bool& variable) {
  variable = false;
  if (arraysize.empty()) return 1;
  uint64_t total = 1;
  size_t start = 0;
  while (start <= arraysize.size()) {
    size_t x = arraysize.find('x', start);
    if (x == std::string::npos) x = arraysize.size();
    const std::string dim = trimmed(std::string_view(arraysize).substr(start, x - start));
    if (dim.find('*') != std::string::npos) {
      variable = true;
      return total;
    }
    double v = 0;
    if (!parseNumber(dim, v) || !(v >= 0)) return 1;
    total = saturatingProduct(total, v >= double(kHugeCount) ? kHugeCount : uint64_t(v));
    start = x + 1;
  }
  return total;
}

void appendUtf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

std::string stripPadding(std::string s) {
  const size_t nul = s.find('\0');
  if (nul != std::string::npos) s.resize(nul);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// One field's value from a binary stream as text ("" for null); false when the stream ends.
bool readBinaryValue(ByteReader& in, const VoField& f, std::string& out) {
  bool variable = false;
  uint64_t elements = fixedElements(f.arraysize, variable);
  if (variable) {
    if (!in.has(4)) return false;
    elements = saturatingProduct(elements, in.big(4));
  }
  const std::string& t = f.datatype;
  out.clear();
  if (t == "bit") {
    const uint64_t bytes = (elements + 7) / 8;
    if (!in.has(bytes)) return false;
    const size_t count = static_cast<size_t>(elements);
    const uint8_t* p = in.take(bytes);
    for (size_t i = 0; i < count; ++i) out += (p[i / 8] >> (7 - i % 8)) & 1 ? '1' : '0';
    return true;
  }
  const size_t size = primitiveSize(t);
  if (size == 0) throw std::runtime_error("unknown VOTable datatype '" + t + "'");
  // elements <= 2^56 and size <= 16: the product cannot wrap.
  if (!in.has(size * elements)) return false;
  const size_t count = static_cast<size_t>(elements);
  if (t == "char") {
    const uint8_t* p = in.take(count);
    out = stripPadding(std::string(reinterpret_cast<const char*>(p), count));
    return true;
  }
  if (t == "unicodeChar") {
    for (size_t i = 0; i < count; ++i) {
      const uint32_t c = static_cast<uint32_t>(in.big(2));
      if (c == 0) {
        for (size_t k = i + 1; k < count; ++k) in.big(2);
        break;
      }
      appendUtf8(out, c);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return true;
  }
  bool allNull = count > 0;
  std::string joined;
  for (size_t i = 0; i < count; ++i) {
    std::string v;
    if (t == "boolean") {
      const char c = static_cast<char>(in.big(1));
      v = (c == 'T' || c == 't' || c == '1')   ? "true"
          : (c == 'F' || c == 'f' || c == '0') ? "false"
                                               : "";
    } else if (t == "unsignedByte") {
      v = formatValue(static_cast<unsigned>(in.big(1)));
    } else if (t == "short") {
      v = formatValue(static_cast<int16_t>(in.big(2)));
    } else if (t == "int") {
      v = formatValue(static_cast<int32_t>(in.big(4)));
    } else if (t == "long") {
      v = formatValue(static_cast<int64_t>(in.big(8)));
    } else if (t == "float" || t == "floatComplex") {
      for (int part = 0; part < (t == "float" ? 1 : 2); ++part) {
        const uint32_t bits = static_cast<uint32_t>(in.big(4));
        float x = 0;
        std::memcpy(&x, &bits, 4);
        v += (part ? " " : "") + formatValue(x);
      }
    } else {  // double, doubleComplex
      for (int part = 0; part < (t == "double" ? 1 : 2); ++part) {
        const uint64_t bits = in.big(8);
        double x = 0;
        std::memcpy(&x, &bits, 8);
        v += (part ? " " : "") + formatValue(x);
      }
    }
    if (f.hasNull && v == f.nullValue) v.clear();
    if (!trimmed(v).empty()) allNull = false;
    joined += (i ? " " : "") + v;
  }
  out = allNull ? std::string() : joined;
  return true;
}

std::string decodeBase64Cell(const std::string& text, const VoField& field, std::string& error) {
  const std::vector<uint8_t> bytes = decodeBase64(text);
  ByteReader in(bytes);
  std::string value;
  try {
    if (!readBinaryValue(in, field, value)) error = "its base64 value is shorter than its FIELD";
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  return error.empty() ? value : std::string();
}

void decodeBinary(VoTable& t, const std::string& path) {
  const std::vector<uint8_t> bytes = decodeBase64(t.stream);
  ByteReader in(bytes);
  const size_t n = t.fields.size();
  const size_t flagBytes = (n + 7) / 8;
  const RowLimit limit(n, bytes.size(), path);
  while (!in.atEnd()) {
    const size_t rowStart = in.position();
    limit.check(t.rows.size() + 1);
    std::vector<bool> nulls(n, false);
    if (t.binary == 2) {
      if (!in.has(flagBytes)) break;
      const uint8_t* p = in.take(flagBytes);
      for (size_t i = 0; i < n; ++i) nulls[i] = (p[i / 8] >> (7 - i % 8)) & 1;
    }
    std::vector<std::string> row(n);
    for (size_t i = 0; i < n; ++i) {
      try {
        if (!readBinaryValue(in, t.fields[i], row[i]))
          throw IoError(
              path, "VOTable binary stream ends inside row " + std::to_string(t.rows.size() + 1));
      } catch (const std::runtime_error& e) {
        if (dynamic_cast<const IoError*>(&e)) throw;
        throw IoError(path, e.what());
      }
      if (nulls[i]) row[i].clear();
    }
    // Rows of no bytes (no FIELD, or only empty arrays) would never reach the end of the stream.
    if (in.position() == rowStart)
      throw IoError(path, "VOTable binary stream of " + std::to_string(bytes.size()) +
                              " bytes whose rows take none (no FIELD, or only empty arrays)");
    t.rows.push_back(std::move(row));
  }
  t.stream.clear();
}

// A TABLEDATA boolean: T, t, 1, true / F, f, 0, false in any case; "?" or blank is null (as is
// anything else).
std::string tableDataBoolean(const std::string& word) {
  const std::string w = lowerCase(word);
  if (w == "t" || w == "1" || w == "true") return "true";
  if (w == "f" || w == "0" || w == "false") return "false";
  return "";
}

// The words of a TABLEDATA array cell: blank-separated; a boolean array may also be written
// without separators ("TFT?").
std::vector<std::string> tableDataWords(const VoField& f, const std::string& cell) {
  std::vector<std::string> words;
  std::string word;
  for (char c : cell) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  if (f.datatype == "boolean" && words.size() == 1 && words[0].size() > 1 &&
      words[0].find_first_not_of("TtFf10?") == std::string::npos) {
    const std::string packed = words[0];
    words.clear();
    for (char c : packed) words.emplace_back(1, c);
  }
  return words;
}

// A TABLEDATA cell as text: strings keep their inner blanks; every other cell is a list of
// values (one for a scalar), each compared with the VALUES null, NaN and "?" (booleans) being
// null too; an array whose values are all null is a null cell.
std::string tableDataCell(const VoField& f, const std::string& cell) {
  if (f.datatype == "char" || f.datatype == "unicodeChar") {
    std::string s = trimmed(cell);
    return f.hasNull && s == f.nullValue ? std::string() : s;
  }
  if (f.datatype == "bit") {
    std::string bits;
    for (char c : cell)
      if (c == '0' || c == '1') bits += c;
    return bits;
  }
  const bool floating = f.datatype == "float" || f.datatype == "double" ||
                        f.datatype == "floatComplex" || f.datatype == "doubleComplex";
  std::string joined;
  bool allNull = true;
  const std::vector<std::string> words = tableDataWords(f, cell);
  for (size_t k = 0; k < words.size(); ++k) {
    std::string v = words[k];
    if ((f.hasNull && v == f.nullValue) || (floating && lowerCase(v) == "nan")) v.clear();
    if (f.datatype == "boolean") v = tableDataBoolean(v);
    if (!v.empty()) allNull = false;
    joined += (k ? " " : "") + v;
  }
  return allNull ? std::string() : joined;
}

CatalogTable parseVoTable(const std::string& text, const std::string& path,
                          const CatalogReadOptions& options) {
  VoParser p;
  XML_Parser parser = XML_ParserCreate(nullptr);
  if (!parser) throw IoError(path, "cannot create an XML parser");
  XML_SetUserData(parser, &p);
  XML_SetElementHandler(parser, &VoParser::start, &VoParser::end);
  XML_SetCharacterDataHandler(parser, &VoParser::characters);
  // Parsed in pieces: XML_Parse takes an int length.
  constexpr size_t kPiece = 1 << 26;
  bool ok = true;
  for (size_t pos = 0; ok && pos <= text.size(); pos += kPiece) {
    const size_t n = std::min(kPiece, text.size() - pos);
    const bool last = pos + n >= text.size();
    ok = XML_Parse(parser, text.data() + pos, static_cast<int>(n), last) != XML_STATUS_ERROR;
    if (last) break;
  }
  if (!ok) {
    const std::string why = std::string("not valid XML: ") +
                            XML_ErrorString(XML_GetErrorCode(parser)) + " at line " +
                            std::to_string(XML_GetCurrentLineNumber(parser));
    XML_ParserFree(parser);
    throw IoError(path, why);
  }
  XML_ParserFree(parser);
  if (!p.error.empty()) throw IoError(path, p.error);
  if (p.tables.empty()) throw IoError(path, "the VOTable holds no TABLE");
  for (VoTable& t : p.tables)
    if (t.binary && t.unsupported.empty()) decodeBinary(t, path);

  int pick = options.table;
  if (pick >= static_cast<int>(p.tables.size()))
    throw IoError(path, "the VOTable has " + std::to_string(p.tables.size()) + " tables, not " +
                            std::to_string(pick + 1));
  if (pick < 0) {
    for (size_t i = 0; i < p.tables.size(); ++i)
      if (!p.tables[i].rows.empty()) {
        pick = static_cast<int>(i);
        break;
      }
    if (pick < 0) pick = 0;
  }
  VoTable& v = p.tables[static_cast<size_t>(pick)];
  if (!v.unsupported.empty() && v.rows.empty())
    throw IoError(path, "VOTable table " + std::to_string(pick + 1) + ": " + v.unsupported);
  CatalogTable t;
  t.name = v.name.empty() ? std::filesystem::path(path).filename().string() : v.name;
  for (const VoField& f : v.fields) {
    t.columns.push_back(f.name);
    t.units.push_back(f.unit);
    t.ucds.push_back(f.ucd);
    t.datatypes.push_back(f.datatype + (f.arraysize.empty() ? "" : "[" + f.arraysize + "]"));
  }
  for (auto& row : v.rows) t.cells.push_back(std::move(row));
  if (p.tables.size() > 1)
    t.note = "table " + std::to_string(pick + 1) + " of " + std::to_string(p.tables.size()) +
             (v.name.empty() ? "" : " (" + v.name + ")") +
             (options.table < 0 ? ": the first with rows" : "");
  finishTable(t, text.size(), path);
  return t;
}

// ---- FITS tables ----

std::string fitsKeyString(fitsfile* f, const std::string& key) {
  char value[FLEN_VALUE] = {};
  int status = 0;
  if (fits_read_key(f, TSTRING, key.c_str(), value, nullptr, &status) != 0) return "";
  return trimmed(value);
}

template <typename T>
void readNumbers(fitsfile* f, int type, int col, long rows, long repeat,
                 std::vector<std::vector<std::string>>& cells, size_t c, FitsStatus& st) {
  std::vector<T> values(static_cast<size_t>(rows * repeat));
  std::vector<char> nulls(values.size(), 0);
  int anynul = 0;
  if (!values.empty())
    fits_read_colnull(f, type, col, 1, 1, rows * repeat, values.data(), nulls.data(), &anynul,
                      st.ptr());
  st.check("reading column " + std::to_string(col));
  for (long r = 0; r < rows; ++r) {
    std::string joined;
    bool allNull = true;
    for (long k = 0; k < repeat; ++k) {
      const size_t i = static_cast<size_t>(r * repeat + k);
      std::string v = nulls[i] ? std::string() : formatValue(values[i]);
      if (!v.empty()) allNull = false;
      joined += (k ? " " : "") + v;
    }
    cells[static_cast<size_t>(r)][c] = allNull ? std::string() : joined;
  }
}

// The current table HDU's rows must lie within the file (for a .gz file, within what was
// inflated) and its cells within the allocation cap, before anything is allocated for them.
// Returns the file's size in bytes.
uint64_t checkTableFits(fitsfile* f, const std::string& path, long nrows, int ncols) {
  FitsStatus st(path);
  LONGLONG headStart = 0, dataStart = 0, dataEnd = 0, rowBytes = 0;
  fits_get_hduaddrll(f, &headStart, &dataStart, &dataEnd, st.ptr());
  fits_read_key(f, TLONGLONG, "NAXIS1", &rowBytes, nullptr, st.ptr());
  st.check("reading the table size");
  const LONGLONG fileBytes = f->Fptr->logfilesize;
  if (nrows < 0 || ncols < 0 || rowBytes < 0 || dataStart > fileBytes)
    throw IoError(path, "the table's size is damaged");
  const uint64_t rows = static_cast<uint64_t>(nrows), width = static_cast<uint64_t>(rowBytes);
  const uint64_t room = static_cast<uint64_t>(fileBytes - dataStart);
  if (width != 0 && rows > room / width)
    throw IoError(path, "the table claims " + std::to_string(rows) + " rows of " +
                            std::to_string(width) + " bytes, more than the " +
                            std::to_string(room) + " bytes after its header");
  RowLimit(static_cast<uint64_t>(ncols), static_cast<uint64_t>(fileBytes), path).check(rows);
  return static_cast<uint64_t>(fileBytes);
}

CatalogTable readFitsTable(const std::string& path, const CatalogReadOptions& options) {
  FitsStatus st(path);
  const FitsTableFile file(path);
  fitsfile* f = file.get();
  int hdus = 0;
  fits_get_num_hdus(f, &hdus, st.ptr());
  st.check("counting HDUs");
  std::vector<int> tables;  // 1-based HDU numbers of the table HDUs
  int pick = -1;
  for (int h = 1; h <= hdus; ++h) {
    int type = 0;
    fits_movabs_hdu(f, h, &type, st.ptr());
    st.check("moving to HDU " + std::to_string(h));
    if (type != BINARY_TBL && type != ASCII_TBL) continue;
    long rows = 0;
    fits_get_num_rows(f, &rows, st.ptr());
    st.check("reading NAXIS2");
    tables.push_back(h);
    if (options.table < 0 && pick < 0 && rows > 0) pick = h;
    if (options.table >= 0 && static_cast<int>(tables.size()) == options.table + 1) pick = h;
  }
  if (tables.empty()) {
    std::string why;
    for (const std::string& r : file.rejected()) why += (why.empty() ? " (" : "; ") + r;
    throw IoError(path,
                  "the FITS file holds no readable table HDU" + why + (why.empty() ? "" : ")"));
  }
  if (options.table >= static_cast<int>(tables.size()))
    throw IoError(path, "the FITS file has " + std::to_string(tables.size()) + " tables, not " +
                            std::to_string(options.table + 1));
  if (pick < 0) pick = tables[0];
  int type = 0;
  fits_movabs_hdu(f, pick, &type, st.ptr());
  st.check("moving to the table");

  CatalogTable t;
  t.name = fitsKeyString(f, "EXTNAME");
  if (t.name.empty()) t.name = std::filesystem::path(path).filename().string();
  const size_t index =
      static_cast<size_t>(std::find(tables.begin(), tables.end(), pick) - tables.begin());
  if (tables.size() > 1)
    t.note = "table " + std::to_string(index + 1) + " of " + std::to_string(tables.size()) +
             " (HDU " + std::to_string(pick - 1) + ")" +
             (options.table < 0 ? ": the first with rows" : "");
  int ncols = 0;
  long nrows = 0;
  fits_get_num_cols(f, &ncols, st.ptr());
  fits_get_num_rows(f, &nrows, st.ptr());
  st.check("reading the table size");
  const uint64_t fileBytes = checkTableFits(f, path, nrows, ncols);
  t.cells.assign(static_cast<size_t>(nrows), std::vector<std::string>(static_cast<size_t>(ncols)));
  std::vector<std::string> skipped;
  for (int col = 1; col <= ncols; ++col) {
    const size_t c = static_cast<size_t>(col - 1);
    const std::string n = std::to_string(col);
    std::string name = fitsKeyString(f, "TTYPE" + n);
    if (name.empty()) name = "col" + n;
    t.columns.push_back(name);
    t.units.push_back(fitsKeyString(f, "TUNIT" + n));
    t.ucds.push_back(fitsKeyString(f, "TUCD" + n));
    t.datatypes.push_back(fitsKeyString(f, "TFORM" + n));
    int typecode = 0;
    long repeat = 0, width = 0;
    fits_get_eqcoltype(f, col, &typecode, &repeat, &width, st.ptr());
    st.check("reading the type of column " + n);
    if (typecode < 0) {
      // Variable-length arrays: row by row.
      const int base = -typecode;
      for (long r = 0; r < nrows; ++r) {
        long length = 0, offset = 0;
        fits_read_descript(f, col, r + 1, &length, &offset, st.ptr());
        st.check("reading column " + n);
        // Each element takes at least a byte of the heap (bit arrays are not read).
        if (length < 0 || static_cast<uint64_t>(length) > fileBytes)
          throw IoError(path, "column " + n + ", row " + std::to_string(r + 1) + " claims " +
                                  std::to_string(length) + " elements, more than the file holds");
        std::string& cell = t.cells[static_cast<size_t>(r)][c];
        if (base == TSTRING) {
          std::vector<char> text(static_cast<size_t>(length) + 1, 0);
          char* ptrs[1] = {text.data()};
          int anynul = 0;
          fits_read_col_str(f, col, r + 1, 1, 1, const_cast<char*>(""), ptrs, &anynul, st.ptr());
          st.check("reading column " + n);
          cell = stripPadding(text.data());
        } else if (base != TBIT && base != TCOMPLEX && base != TDBLCOMPLEX && length > 0) {
          std::vector<double> values(static_cast<size_t>(length));
          std::vector<char> nulls(values.size(), 0);
          int anynul = 0;
          fits_read_colnull(f, TDOUBLE, col, r + 1, 1, length, values.data(), nulls.data(), &anynul,
                            st.ptr());
          st.check("reading column " + n);
          for (size_t k = 0; k < values.size(); ++k)
            cell += (k ? " " : "") + (nulls[k] ? std::string() : formatValue(values[k]));
        }
      }
      continue;
    }
    if (nrows == 0) continue;
    switch (typecode) {
      case TSTRING: {
        std::vector<std::vector<char>> buffers(static_cast<size_t>(nrows),
                                               std::vector<char>(static_cast<size_t>(width) + 1));
        std::vector<char*> ptrs;
        for (auto& b : buffers) ptrs.push_back(b.data());
        int anynul = 0;
        fits_read_col_str(f, col, 1, 1, nrows, const_cast<char*>(""), ptrs.data(), &anynul,
                          st.ptr());
        st.check("reading column " + n);
        for (long r = 0; r < nrows; ++r)
          t.cells[static_cast<size_t>(r)][c] = stripPadding(buffers[static_cast<size_t>(r)].data());
        break;
      }
      case TLOGICAL: {
        std::vector<char> values(static_cast<size_t>(nrows * repeat)), nulls(values.size());
        int anynul = 0;
        fits_read_colnull(f, TLOGICAL, col, 1, 1, nrows * repeat, values.data(), nulls.data(),
                          &anynul, st.ptr());
        st.check("reading column " + n);
        for (long r = 0; r < nrows; ++r) {
          std::string joined;
          for (long k = 0; k < repeat; ++k) {
            const size_t i = static_cast<size_t>(r * repeat + k);
            joined += (k ? " " : "") + std::string(nulls[i] ? "" : values[i] ? "true" : "false");
          }
          t.cells[static_cast<size_t>(r)][c] = trimmed(joined).empty() ? "" : joined;
        }
        break;
      }
      case TBYTE:
      case TSBYTE:
      case TSHORT:
      case TUSHORT:
      case TINT:
      case TUINT:
      case TLONG:
      case TLONGLONG:
        readNumbers<long long>(f, TLONGLONG, col, nrows, repeat, t.cells, c, st);
        break;
      case TULONG:
      case TULONGLONG:
        readNumbers<unsigned long long>(f, TULONGLONG, col, nrows, repeat, t.cells, c, st);
        break;
      case TFLOAT:
        readNumbers<float>(f, TFLOAT, col, nrows, repeat, t.cells, c, st);
        break;
      case TDOUBLE:
        readNumbers<double>(f, TDOUBLE, col, nrows, repeat, t.cells, c, st);
        break;
      case TBIT: {
        std::vector<char> bits(static_cast<size_t>(repeat));
        for (long r = 0; r < nrows; ++r) {
          fits_read_col_bit(f, col, r + 1, 1, repeat, bits.data(), st.ptr());
          st.check("reading column " + n);
          std::string& cell = t.cells[static_cast<size_t>(r)][c];
          for (char b : bits) cell += b ? '1' : '0';
        }
        break;
      }
      default:
        skipped.push_back(name);  // complex columns
    }
  }
  if (!skipped.empty()) {
    std::string list;
    for (const auto& s : skipped) list += (list.empty() ? "" : ", ") + s;
    t.note += (t.note.empty() ? "" : "; ") + std::string("complex columns left empty: ") + list;
  }
  finishTable(t, fileBytes, path);
  return t;
}

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

// ---- Columns ----

namespace {

bool isSexagesimalText(const std::string& cell) {
  return !looksNumeric(cell) && parseSexagesimal(cell).has_value();
}

}  // namespace

std::vector<double> numericColumn(const CatalogTable& table, int column, bool hours) {
  std::vector<double> out(table.cells.size(), std::numeric_limits<double>::quiet_NaN());
  if (column < 0 || column >= static_cast<int>(table.columns.size())) return out;
  for (size_t r = 0; r < table.cells.size(); ++r) {
    const auto& row = table.cells[r];
    if (static_cast<size_t>(column) >= row.size()) continue;
    const std::string cell = trimmed(row[static_cast<size_t>(column)]);
    double v = 0;
    if (parseNumber(cell, v)) {
      out[r] = hours ? v * 15.0 : v;
    } else if (const auto angle = parseSexagesimal(cell)) {
      out[r] = hours || angle->hours ? angle->value * 15.0 : angle->value;
    }
  }
  return out;
}

PositionColumns guessPositionColumns(const CatalogTable& table) {
  PositionColumns p;
  const size_t n = table.columns.size();
  auto ucd = [&](size_t c) {
    return c < table.ucds.size() ? lowerCase(table.ucds[c]) : std::string();
  };
  // Score: UCD with meta.main 3, a listed name 2 (earlier names first), UCD alone 1.
  auto find = [&](const std::string& ucdWord, const std::vector<std::string>& names) {
    int best = -1;
    double bestScore = 0;
    for (size_t c = 0; c < n; ++c) {
      const std::string u = ucd(c), name = lowerCase(trimmed(table.columns[c]));
      double score = 0;
      if (!ucdWord.empty()) {
        // The UCD's first word must be the position itself (not e.g. stat.error;pos.eq.ra).
        const std::string firstWord = u.substr(0, u.find(';'));
        if (firstWord == ucdWord) score = u.find("meta.main") != std::string::npos ? 30 : 10;
      }
      for (size_t k = 0; k < names.size(); ++k)
        if (name == names[k]) score = std::max(score, 20.0 - static_cast<double>(k) / 100.0);
      if (score > bestScore) {
        bestScore = score;
        best = static_cast<int>(c);
      }
    }
    return best;
  };
  const std::vector<std::string> raNames = {
      "ra",          "raj2000",         "_raj2000",    "ra_icrs",         "ra_j2000", "radeg",
      "ra_deg",      "ra2000",          "alpha_j2000", "alpha",           "ra_d",     "ra (deg)",
      "ra(deg)",     "rab1950",         "_rab1950",    "ra1950",          "ra_b1950", "alpha_b1950",
      "ra_hms",      "rahms",           "raj2000_hms", "right_ascension", "_ra",      "ra_x",
      "ra_centroid", "sky_centroid.ra", "skycoord.ra"};
  const std::vector<std::string> decNames = {"dec",
                                             "dej2000",
                                             "_dej2000",
                                             "decj2000",
                                             "de_icrs",
                                             "dec_icrs",
                                             "dec_j2000",
                                             "decdeg",
                                             "dec_deg",
                                             "dec2000",
                                             "delta_j2000",
                                             "delta",
                                             "dec_d",
                                             "dec (deg)",
                                             "dec(deg)",
                                             "deb1950",
                                             "_deb1950",
                                             "dec1950",
                                             "dec_b1950",
                                             "delta_b1950",
                                             "dec_dms",
                                             "dedms",
                                             "dej2000_dms",
                                             "declination",
                                             "decl",
                                             "de",
                                             "_de",
                                             "_dec",
                                             "dec_x",
                                             "dec_centroid",
                                             "sky_centroid.dec",
                                             "skycoord.dec"};
  p.lon = find("pos.eq.ra", raNames);
  p.lat = find("pos.eq.dec", decNames);
  p.frame = SkyFrame::Icrs;
  if (p.lon >= 0 && p.lat >= 0) {
    const std::string a = lowerCase(table.columns[static_cast<size_t>(p.lon)]);
    if (a.find("1950") != std::string::npos)
      p.frame = SkyFrame::Fk4;
    else if (a.find("2000") != std::string::npos)
      p.frame = SkyFrame::Fk5;
    else if (a.find("icrs") != std::string::npos)
      p.frame = SkyFrame::Icrs;
  } else {
    p.lon = find("pos.galactic.lon", {"glon", "_glon", "l", "gal_long", "glon_deg", "lii"});
    p.lat = find("pos.galactic.lat", {"glat", "_glat", "b", "gal_lat", "glat_deg", "bii"});
    if (p.lon >= 0 && p.lat >= 0) {
      p.frame = SkyFrame::Galactic;
    } else {
      p.lon = find("pos.ecliptic.lon", {"elon", "_elon", "ecl_lon", "elong", "lambda"});
      p.lat = find("pos.ecliptic.lat", {"elat", "_elat", "ecl_lat", "elat", "beta"});
      if (p.lon >= 0 && p.lat >= 0)
        p.frame = SkyFrame::Ecliptic;
      else
        p.lon = p.lat = -1;
    }
  }
  if (p.lon >= 0 && p.frame != SkyFrame::Galactic && p.frame != SkyFrame::Ecliptic) {
    const size_t c = static_cast<size_t>(p.lon);
    const std::string unit = c < table.units.size() ? lowerCase(trimmed(table.units[c])) : "";
    std::string u = unit;
    u.erase(std::remove(u.begin(), u.end(), '"'), u.end());
    if (u == "h" || u == "hour" || u == "hours" || u == "hr" || u == "hms" || u == "h:m:s" ||
        u == "hourangle" || u == "h m s")
      p.lonInHours = true;
    else if (u.empty() || u == "") {
      // Sexagesimal text in an RA column is hours.
      for (const auto& row : table.cells) {
        if (c >= row.size() || trimmed(row[c]).empty()) continue;
        p.lonInHours = isSexagesimalText(row[c]);
        break;
      }
    }
  }
  p.x = find("pos.cartesian.x",
             {"x", "x_image", "xcentroid", "x_centroid", "xcenter", "x_center", "xwin_image",
              "x_pix", "xpix", "xpos", "x_pos", "peak_x", "x_world_pix", "col", "column"});
  p.y = find("pos.cartesian.y",
             {"y", "y_image", "ycentroid", "y_centroid", "ycenter", "y_center", "ywin_image",
              "y_pix", "ypix", "ypos", "y_pos", "peak_y", "y_world_pix", "row", "line"});
  if (p.x < 0 || p.y < 0) p.x = p.y = -1;
  return p;
}

// ---- CSV export ----

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
