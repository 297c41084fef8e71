// headerForSubset: wcspih on the carried cards, wcssub to the saved axes' order, reference pixels
// shifted to the chosen indices, wcshdo back to cards.
#include "io/wcs_subset.h"

#include <wcslib/wcs.h>
#include <wcslib/wcshdr.h>
#include <wcslib/wcsutil.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <string>

#include "io/fits_cards.h"
#include "io/wcs_cards.h"

namespace stacklens::io {
namespace {

bool isCommentary(const std::string& key) {
  return key.empty() || key == "HISTORY" || key == "COMMENT" || key == "CONTINUE";
}

// An axis-indexed WCS keyword (CTYPEn, PCi_j, CDi_j, PVi_m, ...) or WCSAXES, with or without an
// alternate letter.
bool isAxisWcsKey(const std::string& key) {
  static const char* kFamilies[] = {"CTYPE", "CUNIT", "CRPIX", "CRVAL", "CDELT", "CROTA", "CNAME",
                                    "CRDER", "CSYER", "PC",    "CD",    "PV",    "PS"};
  if (key.rfind("WCSAXES", 0) == 0) return true;
  for (const char* family : kFamilies) {
    const size_t n = std::strlen(family);
    if (key.compare(0, n, family) != 0 || key.size() <= n ||
        !std::isdigit(static_cast<unsigned char>(key[n])))
      continue;
    size_t i = n;
    while (i < key.size() && std::isdigit(static_cast<unsigned char>(key[i]))) ++i;
    const bool pair = std::strcmp(family, "PC") == 0 || std::strcmp(family, "CD") == 0 ||
                      std::strcmp(family, "PV") == 0 || std::strcmp(family, "PS") == 0;
    if (pair) {
      if (i >= key.size() || key[i] != '_') continue;
      ++i;
      if (i >= key.size() || !std::isdigit(static_cast<unsigned char>(key[i]))) continue;
      while (i < key.size() && std::isdigit(static_cast<unsigned char>(key[i]))) ++i;
    }
    // At most an alternate letter after the numbers.
    if (i == key.size() ||
        (i + 1 == key.size() && std::isupper(static_cast<unsigned char>(key[i]))))
      return true;
  }
  return false;
}

// The cards wcspih reads: every keyword card as "KEY     = value / comment", 80 characters.
std::string cardText(const std::vector<HeaderCard>& header, int& count) {
  std::string text;
  count = 0;
  for (const HeaderCard& c : header) {
    if (isCommentary(c.key) || c.key.size() > 8 || c.value.empty()) continue;
    std::string card = c.key;
    card.resize(8, ' ');
    card += "= " + c.value;
    if (!c.comment.empty()) card += " / " + c.comment;
    card.resize(80, ' ');
    text += card;
    ++count;
  }
  return text;
}

// The saved axes' order (1-based source axes for wcssub) and each one's reference-pixel shift.
void savedAxes(const AxisSubset& s, int naxis, std::vector<int>& axes, std::vector<double>& shift) {
  axes.clear();
  shift.clear();
  for (int role = 0; role < 3; ++role) {
    const int a = s.xyzAxis[static_cast<size_t>(role)];
    if (a < 0 || a >= naxis) continue;
    axes.push_back(a + 1);
    shift.push_back(role == 2 ? double(s.firstSlice) : 0.0);
  }
  for (int a = 0; a < naxis; ++a) {
    if (std::find(axes.begin(), axes.end(), a + 1) != axes.end()) continue;
    axes.push_back(a + 1);
    shift.push_back(static_cast<size_t>(a) < s.fixedPixel.size() ? s.fixedPixel[size_t(a)] : 0.0);
  }
}

// The saved image has the file's axes in their order from slice 0: nothing to rewrite.
bool isIdentity(const AxisSubset& s) {
  const int named = s.xyzAxis[2] >= 0 ? 3 : 2;
  for (int role = 0; role < named; ++role)
    if (s.xyzAxis[static_cast<size_t>(role)] != role) return false;
  return s.firstSlice == 0 && static_cast<int>(s.fixedPixel.size()) <= named;
}

// One WCS (an alternate) as cards for the saved axes; false when wcslib cannot.
bool rewrite(const wcsprm& source, const AxisSubset& subset, std::vector<HeaderCard>& out) {
  std::vector<int> axes;
  std::vector<double> shift;
  savedAxes(subset, source.naxis, axes, shift);
  int nsub = static_cast<int>(axes.size());
  wcsprm saved{};
  saved.flag = -1;
  bool ok = wcssub(1, &source, &nsub, axes.data(), &saved) == 0;
  if (ok) {
    for (int i = 0; i < saved.naxis; ++i) saved.crpix[i] -= shift[static_cast<size_t>(i)];
    saved.flag = 0;  // parameters changed: wcsset again
    int nkey = 0;
    char* text = nullptr;
    ok = wcsset(&saved) == 0 && wcshdo(WCSHDO_safe, &saved, &nkey, &text) == 0 && text;
    if (ok)
      for (HeaderCard& c : parseCards(std::string(text, size_t(nkey) * 80), nkey))
        if (!isCommentary(c.key) && !isDistortionKey(c.key)) out.push_back(std::move(c));
    if (text) wcsdealloc(text);
  }
  wcsfree(&saved);
  return ok;
}

}  // namespace

std::vector<HeaderCard> headerForSubset(const std::vector<HeaderCard>& header,
                                        const AxisSubset& subset) {
  if (isIdentity(subset)) return header;  // the saved axes are the file's, in order
  int count = 0;
  const std::string cards = cardText(header, count);  // sets count
  std::string text = wellFormedWcsCards(cards, count);
  if (count == 0) return header;
  int nreject = 0, nwcs = 0;
  wcsprm* all = nullptr;
  if (wcspih(text.data(), count, WCSHDR_all, 0, &nreject, &nwcs, &all) != 0 || nwcs < 1) {
    if (all) wcsvfree(&nwcs, &all);
    return header;
  }
  std::vector<HeaderCard> wcsCards;
  bool ok = true;
  for (int i = 0; i < nwcs && ok; ++i) ok = rewrite(all[i], subset, wcsCards);
  wcsvfree(&nwcs, &all);
  // The old WCS cards go; the new ones take the place of the first.
  std::set<std::string> replaced;
  for (const HeaderCard& c : wcsCards) replaced.insert(c.key);
  std::vector<HeaderCard> out;
  bool placed = false;
  for (const HeaderCard& c : header) {
    if (!isCommentary(c.key) && (isAxisWcsKey(c.key) || replaced.count(c.key))) {
      if (!placed && ok) out.insert(out.end(), wcsCards.begin(), wcsCards.end());
      placed = true;
      continue;
    }
    out.push_back(c);
  }
  if (!ok)
    out.push_back({"HISTORY", "",
                   "StackLens: the WCS could not be rewritten for the saved axes "
                   "and was left out"});
  else if (!placed)
    out.insert(out.end(), wcsCards.begin(), wcsCards.end());
  return out;
}

}  // namespace stacklens::io
