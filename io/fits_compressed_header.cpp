// imageHeaderFromTableCards: cfitsio's keyword translation for tile-compressed images, with the
// structural cards in the order the standard requires.
#include "io/fits_compressed_header.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

namespace stacklens::io {
namespace {

// The keyword (columns 1-8, without blanks).
std::string keyOf(const std::string& card) {
  std::string key = card.substr(0, 8);
  while (!key.empty() && key.back() == ' ') key.pop_back();
  return key;
}

// name followed by one or more digits (cfitsio's "NAXISm" patterns).
bool indexed(const std::string& key, const std::string& name) {
  if (key.size() <= name.size() || key.compare(0, name.size(), name) != 0) return false;
  for (size_t i = name.size(); i < key.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(key[i]))) return false;
  return true;
}

// The cards cfitsio drops: the table's structure, the compression's parameters and the
// checksums (they describe the table, not the image).
bool dropped(const std::string& key) {
  static const std::set<std::string> exact = {
      "XTENSION", "BITPIX",  "NAXIS",    "PCOUNT",   "GCOUNT",   "TFIELDS",
      "THEAP",    "ZIMAGE",  "ZQUANTIZ", "ZDITHER0", "ZCMPTYPE", "ZBLANK",
      "CHECKSUM", "DATASUM", "ZBLOCKED", "ZHECKSUM", "ZDATASUM", "END"};
  if (exact.count(key)) return true;
  for (const char* name : {"NAXIS", "TTYPE", "TFORM", "ZTILE", "ZNAME", "ZVAL"})
    if (indexed(key, name)) return true;
  return false;
}

// The card with its keyword replaced (value and comment kept, as cfitsio renames them).
std::string renamed(const std::string& card, const std::string& key) {
  std::string out = key;
  out.resize(8, ' ');
  return out + card.substr(8);
}

std::string fixedCard(const std::string& key, const std::string& value) {
  std::string out = key;
  out.resize(8, ' ');
  out += "= " + std::string(value.size() < 20 ? 20 - value.size() : 0, ' ') + value;
  out.resize(80, ' ');
  return out;
}

}  // namespace

std::string imageHeaderFromTableCards(const std::string& tableCards) {
  std::map<std::string, std::string> structural;  // the image's structural card by keyword
  std::string rest;
  for (size_t at = 0; at + 80 <= tableCards.size(); at += 80) {
    const std::string card = tableCards.substr(at, 80);
    const std::string key = keyOf(card);
    if (key == "END") break;
    if (key == "ZSIMPLE" || key == "ZTENSION" || key == "ZBITPIX" || key == "ZNAXIS" ||
        key == "ZEXTEND" || key == "ZPCOUNT" || key == "ZGCOUNT" || indexed(key, "ZNAXIS")) {
      const std::string image = key == "ZTENSION" ? "XTENSION" : key.substr(1);
      structural.emplace(image, renamed(card, image));  // should one repeat, the first
      continue;
    }
    if (dropped(key)) continue;
    // cfitsio names an image after its table unless the table has the default name.
    if (key == "EXTNAME" && card.compare(0, 28, "EXTNAME = 'COMPRESSED_IMAGE'") == 0) continue;
    rest += card;
  }
  const bool primary = structural.count("SIMPLE") > 0;
  std::string out = primary                        ? structural["SIMPLE"]
                    : structural.count("XTENSION") ? structural["XTENSION"]
                                                   : fixedCard("XTENSION", "'IMAGE   '");
  for (const char* key : {"BITPIX", "NAXIS"})
    if (structural.count(key)) out += structural[key];
  int naxis = 0;
  if (structural.count("NAXIS")) naxis = std::atoi(structural["NAXIS"].substr(10, 20).c_str());
  for (int i = 1; i <= naxis && i <= 999; ++i)
    if (structural.count("NAXIS" + std::to_string(i)))
      out += structural["NAXIS" + std::to_string(i)];
  if (primary) {
    if (structural.count("EXTEND")) out += structural["EXTEND"];
  } else {
    out += structural.count("PCOUNT") ? structural["PCOUNT"] : fixedCard("PCOUNT", "0");
    out += structural.count("GCOUNT") ? structural["GCOUNT"] : fixedCard("GCOUNT", "1");
  }
  return out + rest;
}

}  // namespace stacklens::io
