// Sexagesimal angles: the grammar of io/sexagesimal.h, shared by the catalog and region readers.
#include "io/sexagesimal.h"

#include <cstring>
#include <string>
#include <vector>

#include "io/text_fields.h"

namespace stacklens::io {
namespace {

constexpr const char* kMinusSign = "\xe2\x88\x92";  // U+2212

// Every separator and unit marker becomes a space; `hours` is set when an h is among them.
std::string fieldsSeparatedBySpaces(std::string s, bool& hours) {
  for (char& c : s) {
    if (c == 'h' || c == 'H') {
      hours = true;
      c = ' ';
    } else if (c == ':' || c == 'd' || c == 'D' || c == 'm' || c == '\'' || c == 's' || c == '"') {
      c = ' ';
    }
  }
  // The degree sign and the prime symbols.
  for (const char* mark : {"\xc2\xb0", "\xe2\x80\xb2", "\xe2\x80\xb3"}) {
    size_t p = 0;
    while ((p = s.find(mark, p)) != std::string::npos) s.replace(p, std::strlen(mark), " ");
  }
  return s;
}

// The space-separated numbers of s, each ≥ 0; false when one is not.
bool fieldValues(const std::string& s, std::vector<double>& values) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) {
      double v = 0;
      if (!parseNumber(std::string_view(s).substr(i, j - i), v) || v < 0) return false;
      values.push_back(v);
    }
    i = j;
  }
  return true;
}

// "12.5h": one number marked as hours, the one form with a single field.
bool isHoursAlone(const std::string& s) {
  if (s.size() < 2 || (s.back() != 'h' && s.back() != 'H')) return false;
  double v = 0;
  return parseNumber(std::string_view(s).substr(0, s.size() - 1), v) && v >= 0;
}

}  // namespace

std::optional<SexagesimalAngle> parseSexagesimal(std::string_view text) {
  std::string s = trimmed(text);
  if (s.empty()) return std::nullopt;
  bool negative = false;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    s.erase(0, 1);
  } else if (s.rfind(kMinusSign, 0) == 0) {
    negative = true;
    s.erase(0, std::strlen(kMinusSign));
  }
  SexagesimalAngle angle;
  std::vector<double> fields;
  if (!fieldValues(fieldsSeparatedBySpaces(s, angle.hours), fields)) return std::nullopt;
  const bool oneField = fields.size() == 1 && isHoursAlone(s);
  if (!oneField && (fields.size() < 2 || fields.size() > 3)) return std::nullopt;
  double value = fields[0];
  if (fields.size() > 1) value += fields[1] / 60.0;
  if (fields.size() > 2) value += fields[2] / 3600.0;
  angle.value = negative ? -value : value;
  return angle;
}

}  // namespace stacklens::io
