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

}  // namespace

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

}  // namespace stacklens::io
