// The VOTable reader's fields and tables, and the decoding of its binary streams
// (catalog_votable_binary.cpp) that its parser (catalog_votable.cpp) calls. Internal to io/.
#pragma once

#include <string>
#include <vector>

namespace stacklens::io {

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

// A `<TD encoding="base64">` cell: its value written as in a BINARY stream (a variable array
// with its count). Sets error when the bytes do not hold one value of the field.
std::string decodeBase64Cell(const std::string& text, const VoField& field, std::string& error);
// Decodes t.stream (base64 of a BINARY or BINARY2 stream) into t.rows; IoError naming path when
// the stream does not hold whole rows, or holds more than the row limit allows.
void decodeBinary(VoTable& t, const std::string& path);

}  // namespace stacklens::io
