// Delimited text catalogs: CSV (RFC 4180 quotes), TSV, semicolon-, bar- or blank-separated, the
// delimiter sniffed from the first lines, names from a header (or astropy's commented header).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "io/catalog_readers.h"
#include "io/catalog_rows.h"

namespace stacklens::io {

namespace {

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

using Records = std::vector<std::vector<std::string>>;

// Up to 12 non-blank lines for sniffing the delimiter, comment lines apart.
std::vector<std::string> sampleLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos <= text.size() && lines.size() < 12) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string l(text.substr(pos, end - pos));
    if (!l.empty() && l.back() == '\r') l.pop_back();
    pos = end + 1;
    if (trimmed(l).empty()) continue;
    if (l[0] == '#' || l[0] == '\\') continue;
    lines.push_back(l);
  }
  return lines;
}

// The text without its comment lines (a comment is a record whose first character is `#`);
// `lastComment` is the last one above the data, where astropy writes a commented header.
std::string withoutComments(std::string_view text, std::string& lastComment) {
  std::string body;
  body.reserve(text.size());
  size_t pos = 0;
  bool inQuotes = false;
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
  return body;
}

// The records with a field or more: blank lines apart.
Records dataRecords(const std::string& body, char delimiter) {
  auto records = splitRecords(body, delimiter);
  records.erase(std::remove_if(records.begin(), records.end(),
                               [](const std::vector<std::string>& r) {
                                 return r.empty() || (r.size() == 1 && r[0].empty());
                               }),
                records.end());
  return records;
}

// The column names: the first record unless it is all numbers, else astropy's commented header
// or col1, col2, …. Whether the names came from the first record.
bool readColumnNames(CatalogTable& t, const Records& records, const std::string& lastComment,
                     char delimiter) {
  const auto& head = records[0];
  const bool headNumeric =
      std::all_of(head.begin(), head.end(), [](const std::string& f) { return looksNumeric(f); });
  if (!headNumeric) {
    t.columns = head;
    return true;
  }
  // astropy's commented_header: the names on the last comment line above the data.
  const auto fromComment = splitRecords(trimmed(lastComment), delimiter);
  if (!fromComment.empty() && fromComment[0].size() == head.size()) {
    t.columns = fromComment[0];
  } else {
    for (size_t c = 0; c < head.size(); ++c) t.columns.push_back("col" + std::to_string(c + 1));
  }
  return false;
}

// The records before the data under a header of names: VizieR's TSV adds a units line and a
// rule of dashes under the names.
size_t recordsAfterNames(CatalogTable& t, const Records& records) {
  if (records.size() > 2 && isRule(records[2]) && !isRule(records[1])) {
    t.units = records[1];
    return 3;
  }
  if (records.size() > 1 && isRule(records[1])) return 2;
  return 1;
}

void nameBlankColumns(CatalogTable& t) {
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (t.columns[c].empty()) t.columns[c] = "col" + std::to_string(c + 1);
}

// The data records from `first` on, noting how many differ from the header in length.
void addRows(CatalogTable& t, Records& records, size_t first) {
  size_t ragged = 0;
  for (size_t r = first; r < records.size(); ++r) {
    if (records[r].size() != t.columns.size()) ++ragged;
    t.cells.push_back(std::move(records[r]));
  }
  if (ragged > 0)
    t.note = std::to_string(ragged) + " rows with a different number of fields than the header";
}

}  // namespace

CatalogTable parseDelimited(std::string_view text, const std::string& name) {
  const std::vector<std::string> lines = sampleLines(text);
  if (lines.empty()) throw IoError(name, "no table rows in the file");
  const char delimiter = sniffDelimiter(lines);

  std::string lastComment;
  Records records = dataRecords(withoutComments(text, lastComment), delimiter);
  if (records.empty()) throw IoError(name, "no table rows in the file");

  CatalogTable t;
  t.name = name;
  const size_t first =
      readColumnNames(t, records, lastComment, delimiter) ? recordsAfterNames(t, records) : 0;
  nameBlankColumns(t);
  addRows(t, records, first);
  finishTable(t, text.size(), name);
  return t;
}

}  // namespace stacklens::io
