// parseCards with cfitsio's value parser.
#include "io/fits_cards.h"

#include <fitsio.h>

namespace stacklens::io {
namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

}  // namespace

std::vector<HeaderCard> parseCards(const std::string& cards, int count) {
  std::vector<HeaderCard> out;
  out.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    std::string card = cards.substr(static_cast<size_t>(i) * 80, 80);
    HeaderCard c;
    if (card.compare(0, 8, "HIERARCH") == 0) {
      auto eq = card.find('=');
      c.key = trim(card.substr(0, eq));
      if (eq != std::string::npos) card = std::string(8, 'X') + "= " + card.substr(eq + 1);
    } else {
      c.key = trim(card.substr(0, 8));
    }
    if (c.key == "END") continue;
    if (card.compare(8, 2, "= ") == 0) {
      char value[FLEN_VALUE] = {}, comment[FLEN_COMMENT] = {};
      int status = 0;
      std::string copy = card;
      fits_parse_value(copy.data(), value, comment, &status);
      if (status == 0) {
        c.value = trim(value);
        c.comment = trim(comment);
      } else {
        fits_clear_errmsg();
        c.value = trim(card.substr(10));
      }
    } else if (c.key == "CONTINUE") {
      c.value = trim(card.substr(8));
    } else {
      c.comment = card.size() > 8 ? card.substr(8) : "";
      while (!c.comment.empty() && c.comment.back() == ' ') c.comment.pop_back();
      if (!c.comment.empty() && c.comment[0] == ' ') c.comment.erase(0, 1);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace stacklens::io
