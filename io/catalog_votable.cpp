// VOTable catalogs through expat: the fields, TABLEDATA cells (base64 ones included) and the
// choice among several tables; BINARY and BINARY2 streams are decoded in
// catalog_votable_binary.cpp.
#include <expat.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/catalog_readers.h"
#include "io/catalog_rows.h"
#include "io/catalog_votable.h"

namespace stacklens::io {

namespace {

std::string localName(const char* n) {
  const char* colon = std::strrchr(n, ':');
  return colon ? colon + 1 : n;
}

std::string attribute(const char** attrs, const char* key) {
  for (int i = 0; attrs[i]; i += 2)
    if (localName(attrs[i]) == key) return attrs[i + 1];
  return "";
}

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

}  // namespace

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

}  // namespace stacklens::io
