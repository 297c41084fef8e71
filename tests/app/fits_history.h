// The HISTORY of a FITS file as one text, for tests that look for what a command recorded.
#pragma once

#include <fstream>
#include <string>

namespace stacklens::testing {

// The primary header's HISTORY cards joined (a long record continues on the next card, split
// anywhere, even inside a word), with runs of blanks as one.
inline std::string fitsHistory(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::string text, card(80, ' ');
  while (file.read(card.data(), 80) && card.compare(0, 3, "END") != 0)
    if (card.compare(0, 8, "HISTORY ") == 0) text += card.substr(8);
  std::string joined;
  for (char c : text)
    if (c != ' ' || joined.empty() || joined.back() != ' ') joined += c;
  return joined;
}

}  // namespace stacklens::testing
