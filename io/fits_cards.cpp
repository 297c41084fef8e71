// parseCards with cfitsio's value parser, and the values of parsed cards.
#include "io/fits_cards.h"

#include <fitsio.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace stacklens::io {

std::string trimBlanks(const std::string& s) {
  auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

std::vector<HeaderCard> parseCards(const std::string& cards, int count) {
  std::vector<HeaderCard> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    std::string card = cards.substr(static_cast<size_t>(i) * 80, 80);
    HeaderCard c;
    if (card.compare(0, 8, "HIERARCH") == 0) {
      auto eq = card.find('=');
      c.key = trimBlanks(card.substr(0, eq));
      if (eq != std::string::npos) card = std::string(8, 'X') + "= " + card.substr(eq + 1);
    } else {
      c.key = trimBlanks(card.substr(0, 8));
    }
    if (c.key == "END") continue;
    if (card.compare(8, 2, "= ") == 0) {
      char value[FLEN_VALUE] = {}, comment[FLEN_COMMENT] = {};
      int status = 0;
      std::string copy = card;
      fits_parse_value(copy.data(), value, comment, &status);
      if (status == 0) {
        c.value = trimBlanks(value);
        c.comment = trimBlanks(comment);
      } else {
        fits_clear_errmsg();
        c.value = trimBlanks(card.substr(10));
      }
    } else if (c.key == "CONTINUE") {
      c.value = trimBlanks(card.substr(8));
    } else {
      c.comment = card.size() > 8 ? card.substr(8) : "";
      while (!c.comment.empty() && c.comment.back() == ' ') c.comment.pop_back();
      if (!c.comment.empty() && c.comment[0] == ' ') c.comment.erase(0, 1);
    }
    out.push_back(std::move(c));
  }
  return out;
}

const HeaderCard* findCard(const std::vector<HeaderCard>& header, const std::string& key) {
  for (const auto& c : header)
    if (c.key == key) return &c;
  return nullptr;
}

std::string unquote(const std::string& v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
    std::string s = v.substr(1, v.size() - 2);
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      out += s[i];
      if (s[i] == '\'' && i + 1 < s.size() && s[i + 1] == '\'') ++i;
    }
    return trimBlanks(out);
  }
  return v;
}

bool cardNumber(const std::vector<HeaderCard>& header, const std::string& key, double& out) {
  const HeaderCard* c = findCard(header, key);
  if (!c) return false;
  std::string v = c->value;
  std::replace(v.begin(), v.end(), 'D', 'E');
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || !std::isfinite(d)) return false;
  out = d;
  return true;
}

bool cardInteger(const std::vector<HeaderCard>& header, const std::string& key, int64_t& out) {
  const HeaderCard* c = findCard(header, key);
  if (!c) return false;
  const std::string& v = c->value;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || errno == ERANGE) return false;
  while (*end == ' ') ++end;
  if (*end != '\0') return false;
  out = n;
  return true;
}

}  // namespace stacklens::io
