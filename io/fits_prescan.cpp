// prescanFits: header blocks read and parsed here, the checks a tile-compressed image needs
// before cfitsio's imcomp_get_compressed_image_par sees it.
#include "io/fits_prescan.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

namespace stacklens::io {
namespace {

constexpr int64_t kBlock = 2880;
constexpr int64_t kMaxHeaderBlocks = 10000;  // 28.8 MB of cards: more is no header

std::string trim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b);
}

// The value field of a keyword card (columns 11-80): a quoted string without its quotes, or the
// text before a comment. `closed` is false for a string without its closing quote.
// Where cfitsio's ffpsvc starts a card's value, or npos for a card without one. cfitsio reads a
// card without its trailing blanks, and one of fewer than 9 characters has no value; COMMENT,
// HISTORY, CONTINUE and blank-named cards have none either. Else the value follows '=' in column
// 9 (with a blank or anything else in column 10), or the card's first '=' wherever it is (found by
// fits_fuzzer: cfitsio reads 'ZVAL1      =    0   32' as ZVAL1 = 0, a RICE block size of 0, and
// divides by it in imcomp_calc_max_elem); HIERARCH takes its first '=' too.
size_t valueStart(const std::string& card) {
  const size_t last = card.find_last_not_of(' ');
  if (last == std::string::npos || last < 8) return std::string::npos;
  for (const char* none : {"COMMENT ", "HISTORY ", "CONTINUE", "        "})
    if (card.compare(0, 8, none) == 0) return std::string::npos;
  if (card[8] == '=') return 9;
  const size_t equals = card.find('=');
  return equals == std::string::npos ? std::string::npos : equals + 1;
}

// The value from `start` (valueStart) as cfitsio parses it.
std::string cardValue(const std::string& card, size_t start, bool& quoted, bool& closed) {
  const std::string field = card.size() > start ? card.substr(start) : "";
  const size_t first = field.find_first_not_of(' ');
  quoted = first != std::string::npos && field[first] == '\'';
  closed = true;
  if (!quoted) {
    // As cfitsio takes a value that is not a string: a complex number in parentheses, else the
    // first token up to a blank, '/' or ',' (found by fits_fuzzer: 'ZIMAGE  =  T ( comment' is
    // true for cfitsio, and 'NAXIS2 = 6   junk' is 6).
    if (first == std::string::npos) return "";
    if (field[first] == '(') {
      const size_t close = field.find(')', first);
      return trim(
          field.substr(first, close == std::string::npos ? std::string::npos : close - first + 1));
    }
    const size_t stop = field.find_first_of(" /,", first);
    return field.substr(first, stop == std::string::npos ? std::string::npos : stop - first);
  }
  std::string out;
  closed = false;
  for (size_t i = first + 1; i < field.size(); ++i) {
    if (field[i] == '\'') {
      if (i + 1 < field.size() && field[i + 1] == '\'') {
        out += '\'';
        ++i;
        continue;
      }
      closed = true;
      break;
    }
    out += field[i];
  }
  return trim(out);
}

struct Header {
  std::map<std::string, std::string> values;
  std::string problem;                 // a card no reader should see
  std::string repeated;                // the first keyword cfitsio's tile compression reads twice
  std::set<std::string> repeatedKeys;  // every keyword that appears twice
  std::string overlong;                // a value cfitsio cannot hold (71 characters or more)
  std::set<std::string> quotedKeys;    // keywords whose values are strings
  // cfitsio's mark of a tile-compressed image (ffbinit): any ZIMAGE card whose value starts with
  // T ('ZIMAGE = TRUE' too), whatever the other ZIMAGE cards say.
  bool zimage = false;
  bool has(const std::string& k) const { return values.count(k) > 0; }
  const std::string& get(const std::string& k) const {
    static const std::string none;
    auto it = values.find(k);
    return it == values.end() ? none : it->second;
  }
};

// An integer value, strictly (no fraction, no exponent), within [lo, hi].
bool integer(const std::string& text, int64_t lo, int64_t hi, int64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

// A logical keyword as cfitsio's ffc2l reads it: T, or a non-zero number; a string is no
// logical (cfitsio takes GROUPS = 1 for random groups).
bool logicalTrue(const Header& h, const std::string& key) {
  const std::string& v = h.get(key);
  if (h.quotedKeys.count(key) || v.empty()) return false;
  if (v == "T" || v == "F") return v == "T";
  std::string t = v;
  std::replace(t.begin(), t.end(), 'D', 'E');
  std::replace(t.begin(), t.end(), 'd', 'e');
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  return end != t.c_str() && *end == '\0' && d != 0.0;
}

// Whether cfitsio's tile-compression code or its table parser reads this keyword's value: two
// cards of such a name are ambiguous (cfitsio may take either, found by fits_fuzzer: a second
// ZTILE2 holding a string). Others (EXTNAME, OBJECT, ...) are descriptive; cfitsio and astropy
// read a file that repeats them.
bool readByTileCompression(const std::string& key) {
  static const std::set<std::string> structural = {"XTENSION", "BITPIX",  "PCOUNT",
                                                   "GCOUNT",   "TFIELDS", "THEAP"};
  if (key.empty() || key[0] == 'Z' || structural.count(key)) return true;
  for (const char* prefix : {"NAXIS", "TTYPE", "TFORM", "TDIM", "TSCAL", "TZERO", "TNULL"})
    if (key.rfind(prefix, 0) == 0) return true;
  return false;
}

// The primary, or an extension cfitsio reads as an image (ffpinit: anything but a table).
bool isImageHdu(const Header& h) {
  static const std::set<std::string> tables = {"TABLE", "BINTABLE", "A3DTABLE", "3DTABLE"};
  return !h.has("XTENSION") || !tables.count(h.get("XTENSION"));
}

// |bitpix|/8 × gcount × (pcount + elements), as cfitsio sizes a data unit, saturated at 2^62.
int64_t dataUnitBytes(int64_t bitpix, int64_t gcount, int64_t pcount, int64_t elements) {
  constexpr int64_t kSaturated = int64_t(1) << 62;
  const int64_t perGroup = std::min(kSaturated, pcount + elements);
  const int64_t bytes = std::abs(bitpix) / 8;
  if (gcount == 0 || perGroup == 0) return 0;
  if (perGroup > kSaturated / bytes / gcount) return kSaturated;
  return bytes * gcount * perGroup;
}

// A FITS integer or real (D exponents too) or a logical, and nothing else.
bool isNumberOrLogical(const std::string& text) {
  if (text == "T" || text == "F") return true;
  if (text.empty()) return false;
  std::string t = text;
  std::replace(t.begin(), t.end(), 'D', 'E');
  std::replace(t.begin(), t.end(), 'd', 'e');
  char* end = nullptr;
  std::strtod(t.c_str(), &end);
  return end != t.c_str() && *end == '\0' &&
         t.find_first_not_of("0123456789+-.Ee") == std::string::npos;
}

// Checks of a tile-compressed image table (ZIMAGE = T); "" when it is sound.
std::string compressedImageProblem(const Header& h, int64_t naxis1, int64_t naxis2, int64_t pcount,
                                   int64_t left) {
  int64_t znaxis = 0, v = 0;
  if (h.get("XTENSION") != "BINTABLE") return "ZIMAGE outside a binary table";
  if (!integer(h.get("ZNAXIS"), 1, 6, znaxis)) return "ZNAXIS missing or outside 1..6";
  for (int64_t i = 1; i <= znaxis; ++i) {
    const std::string n = std::to_string(i);
    int64_t len = 0;
    if (!integer(h.get("ZNAXIS" + n), 1, int64_t(1) << 40, len))
      return "ZNAXIS" + n + " missing or not a positive length";
    // A tile longer than its axis is clipped by cfitsio (astropy writes such files); zero or
    // less divides by zero there.
    if (h.has("ZTILE" + n) && !integer(h.get("ZTILE" + n), 1, int64_t(1) << 31, v))
      return "ZTILE" + n + " = " + h.get("ZTILE" + n) + " is not a positive tile length";
  }
  if (!integer(h.get("ZBITPIX"), -64, 64, v) ||
      !(v == 8 || v == 16 || v == 32 || v == 64 || v == -32 || v == -64))
    return "ZBITPIX missing or not 8, 16, 32, 64, -32 or -64";
  static const std::set<std::string> codecs = {"RICE_1", "RICE_ONE",    "GZIP_1",    "GZIP_2",
                                               "PLIO_1", "HCOMPRESS_1", "NOCOMPRESS"};
  if (!codecs.count(h.get("ZCMPTYPE"))) return "ZCMPTYPE '" + h.get("ZCMPTYPE") + "' is unknown";
  // The codec's parameters cfitsio divides by or sizes buffers from (found by fits_fuzzer:
  // BLOCKSIZE = 0 divides by zero in imcomp_calc_max_elem). For RICE cfitsio takes ZVAL1 as the
  // block size and ZVAL2 as the bytes per pixel whatever ZNAME1 and ZNAME2 say.
  const std::string& codec = h.get("ZCMPTYPE");
  if (codec == "RICE_1" || codec == "RICE_ONE") {
    if (h.has("ZVAL1") && !integer(h.get("ZVAL1"), 1, 1 << 16, v))
      return "the RICE block size (ZVAL1) is not positive";
    if (h.has("ZVAL2") &&
        !(integer(h.get("ZVAL2"), 1, 8, v) && (v == 1 || v == 2 || v == 4 || v == 8)))
      return "the RICE bytes per pixel (ZVAL2) is not 1, 2, 4 or 8";
  }
  for (int k = 1; k <= 99; ++k) {
    const std::string n = std::to_string(k);
    if (!h.has("ZNAME" + n)) break;
    const std::string& name = h.get("ZNAME" + n);
    if (name == "BLOCKSIZE" && !integer(h.get("ZVAL" + n), 1, 1 << 16, v))
      return "BLOCKSIZE (ZVAL" + n + ") is not a positive block size";
    if (name == "BYTEPIX" &&
        !(integer(h.get("ZVAL" + n), 1, 8, v) && (v == 1 || v == 2 || v == 4 || v == 8)))
      return "BYTEPIX (ZVAL" + n + ") is not 1, 2, 4 or 8";
  }
  if (h.has("ZQUANTIZ")) {
    static const std::set<std::string> q = {"NO_DITHER", "SUBTRACTIVE_DITHER_1",
                                            "SUBTRACTIVE_DITHER_2", "NONE"};
    if (!q.count(h.get("ZQUANTIZ"))) return "ZQUANTIZ '" + h.get("ZQUANTIZ") + "' is unknown";
  }
  if (h.has("ZDITHER0") && !integer(h.get("ZDITHER0"), 0, 10000, v))
    return "ZDITHER0 is not within 0..10000";
  // (Divided, not multiplied: the axes may be any length up to 2^63.)
  if (naxis1 < 1 || naxis2 < 0 || pcount > left || naxis2 > (left - pcount) / naxis1)
    return "the table (NAXIS1 x NAXIS2 + PCOUNT) does not fit in the file";
  if (h.has("THEAP") && (!integer(h.get("THEAP"), naxis1 * naxis2, naxis1 * naxis2 + pcount, v)))
    return "THEAP is outside the table's data";
  // The compressed-data column: a variable-length array descriptor, P or Q, of a known type.
  int64_t fields = 0;
  if (!integer(h.get("TFIELDS"), 1, 999, fields)) return "TFIELDS missing or outside 1..999";
  bool found = false;
  for (int64_t i = 1; i <= fields; ++i) {
    const std::string n = std::to_string(i);
    const std::string type = h.get("TTYPE" + n);
    if (type != "COMPRESSED_DATA" && type != "GZIP_COMPRESSED_DATA") continue;
    found = found || type == "COMPRESSED_DATA";
    std::string form = h.get("TFORM" + n);
    size_t p = 0;
    while (p < form.size() && std::isdigit(static_cast<unsigned char>(form[p]))) ++p;
    // One descriptor per row; an empty (0) field only for the optional GZIP column: cfitsio
    // reads a tile's descriptor from COMPRESSED_DATA whatever its width (found by fits_fuzzer:
    // '0PB(31)' made it read past the file).
    const std::string repeat = form.substr(0, p);
    if (p > 0 && repeat != "1" && !(repeat == "0" && type == "GZIP_COMPRESSED_DATA"))
      return "TFORM" + n + " '" + form + "' is not one descriptor per row";
    if (p + 2 > form.size() || (form[p] != 'P' && form[p] != 'Q') ||
        std::string("BIJKED").find(form[p + 1]) == std::string::npos)
      return "TFORM" + n + " '" + form + "' is not a P or Q descriptor of B, I, J, K, E or D";
    const std::string rest = form.substr(p + 2);
    if (!rest.empty()) {
      if (rest.front() != '(' || rest.back() != ')' ||
          !integer(rest.substr(1, rest.size() - 2), 0, pcount > 0 ? pcount : 0, v))
        return "TFORM" + n + " '" + form + "' has a maximum length outside the heap";
    }
  }
  if (!found && !h.has("ZCMPTYPE")) return "no COMPRESSED_DATA column";
  return {};
}

}  // namespace

std::vector<PrescannedHdu> prescanFits(const std::function<std::string(int64_t, size_t)>& readAt,
                                       int64_t fileSize) {
  std::vector<PrescannedHdu> hdus;
  int64_t offset = 0;
  while (offset + kBlock <= fileSize) {
    PrescannedHdu hdu;
    hdu.headerStart = offset;
    Header h;
    bool end = false;
    int64_t blocks = 0;
    for (; !end && blocks < kMaxHeaderBlocks && offset + kBlock <= fileSize; ++blocks) {
      const std::string block = readAt(offset, kBlock);
      offset += kBlock;
      if (static_cast<int64_t>(block.size()) < kBlock) break;
      for (size_t c = 0; c + 80 <= block.size(); c += 80) {
        // cfitsio holds a card as a C string: it ends at the first NUL ('END    \0' ends a
        // header there; found by fits_fuzzer: our pass read on past it, so the next HDU's
        // ZTILE3 = 0 went unchecked and divided by zero in imcomp_get_compressed_image_par).
        std::string card = block.substr(c, 80);
        if (const size_t nul = card.find('\0'); nul != std::string::npos) {
          card.resize(nul);
          card.resize(80, ' ');
        }
        // The header ends where cfitsio ends it: at the first card whose keyword field (columns
        // 1-8) reads END up to its first blank, whatever follows ('END    x' too). Keywords start
        // in column 1, so " END" ends nothing. (All found by fits_fuzzer: headers on which our
        // pass and cfitsio's disagreed about where the next HDU starts, so the next HDU went
        // unchecked.)
        std::string key = card.substr(0, 8);
        while (!key.empty() && key.back() == ' ') key.pop_back();
        if (key.substr(0, key.find(' ')) == "END") {
          end = true;
          break;
        }
        // cfitsio names a keyword by its characters up to the first blank or '=' (ffgknm, up to
        // 75 of them): 'ZTILE2 z=' is a second ZTILE2 to it (found by fits_fuzzer: holding a
        // string, it made a tile length of 0 and SIGFPE in imcomp_get_compressed_image_par), and
        // 'ZVAL1=0   x = 1' is ZVAL1. A blank first column names nothing.
        key = card.substr(0, std::min(card.find_first_of(" ="), size_t(75)));
        // A value follows '=' in column 9 whatever column 10 holds, as cfitsio reads it (found
        // by fits_fuzzer: 'ZVAL2   =(   2' went unchecked here and overflowed cfitsio's ffc2j),
        // or the card's first '=' elsewhere (valueStart).
        const size_t start = valueStart(card);
        if (start == std::string::npos || key.empty()) continue;
        bool quoted = false, closed = true;
        const std::string value = cardValue(card, start, quoted, closed);
        if (!closed && h.problem.empty())
          h.problem = key + " has a string without its closing quote";
        // cfitsio copies a value into 71 bytes: a token from column 10 to 80 (no blank after
        // '=') leaves no room for its end (found by fits_fuzzer: an unquoted TTYPE1 of 71
        // characters overflowed ffgtbp's strcpy as cfitsio moved into the table). A column's
        // name goes on into 70 bytes (tcolumn::ttype): an unquoted TTYPEn of 70 characters,
        // columns 11 to 80, overflowed it too (CI's fits_fuzzer at stop 46).
        const size_t room = key.rfind("TTYPE", 0) == 0 ? 69 : 70;
        if (value.size() > room && h.overlong.empty()) h.overlong = key;
        if (quoted) h.quotedKeys.insert(key);
        if (key == "ZIMAGE" && !quoted && !value.empty() && value[0] == 'T') h.zimage = true;
        if (!h.values.count(key)) {
          h.values[key] = value;
          continue;
        }
        h.repeatedKeys.insert(key);
        if (h.repeated.empty() && readByTileCompression(key)) h.repeated = key;
      }
    }
    hdu.headerBytes = blocks * kBlock;
    if (!end) {
      hdu.rejection = "a header without END";
      hdu.endsScan = true;
      hdus.push_back(hdu);
      break;
    }
    // The data unit's size, as cfitsio works it out (ffpinit, ffbinit): every HDU's PCOUNT and
    // GCOUNT count, the primary's too, and a first axis of length 0 with GROUPS = T marks random
    // groups, whose groups hold the product of the other axes (astropy's GroupsHDU; with the
    // groups read as a header, every later HDU was lost).
    int64_t bitpix = 0, naxis = 0, pcount = 0, gcount = 1;
    const bool primary = hdus.empty();
    std::string problem = h.problem;
    if (!integer(h.get("BITPIX"), -64, 64, bitpix) ||
        !(bitpix == 8 || bitpix == 16 || bitpix == 32 || bitpix == 64 || bitpix == -32 ||
          bitpix == -64))
      problem = "BITPIX missing or invalid";
    if (problem.empty() && !integer(h.get("NAXIS"), 0, 999, naxis)) problem = "NAXIS invalid";
    if (problem.empty() && primary &&
        (h.repeatedKeys.count("PCOUNT") || h.repeatedKeys.count("GCOUNT")))
      problem = "PCOUNT or GCOUNT appears twice in the primary header";
    if (problem.empty() && h.has("PCOUNT") && !integer(h.get("PCOUNT"), 0, fileSize, pcount))
      problem = "PCOUNT invalid";
    if (problem.empty() && h.has("GCOUNT") && !integer(h.get("GCOUNT"), 0, fileSize, gcount))
      problem = "GCOUNT invalid";
    int64_t elements = naxis > 0 ? 1 : 0, naxis1 = 0, naxis2 = 0;
    for (int64_t i = 1; problem.empty() && i <= naxis; ++i) {
      int64_t n = 0;
      // Any length: a primary of NAXIS1 = 10^12 and NAXIS2 = 0 holds no data and hides nothing.
      if (!integer(h.get("NAXIS" + std::to_string(i)), 0, std::numeric_limits<int64_t>::max(), n)) {
        problem = "NAXIS" + std::to_string(i) + " missing or invalid";
        break;
      }
      if (i == 1) naxis1 = n;
      if (i == 2) naxis2 = n;
      if (i == 1 && n == 0 && isImageHdu(h) && logicalTrue(h, "GROUPS")) continue;
      elements =
          n == 0 ? 0 : (elements > (int64_t(1) << 62) / n ? (int64_t(1) << 62) : elements * n);
    }
    const int64_t bytes = dataUnitBytes(bitpix, gcount, pcount, elements);
    hdu.dataBytes = (bytes + kBlock - 1) / kBlock * kBlock;
    const int64_t left = fileSize - offset;
    const bool compressed = h.zimage;
    if (!compressed && problem == h.problem) problem.clear();  // cfitsio parses those cleanly
    if (problem.empty() && !h.overlong.empty())
      problem = h.overlong + "'s value is too long for a header card";
    if (problem.empty() && compressed) {
      // cfitsio converts these values into fixed buffers: an overlong one, or one that is not
      // a number (found by fits_fuzzer: ZVAL2 = '(   2' overflows ffc2j's strncat), breaks it.
      for (const auto& [key, value] : h.values) {
        // (cfitsio reads ZIMAGE by its first letter only.)
        if (key.rfind("Z", 0) != 0 || h.quotedKeys.count(key) || key == "ZIMAGE") continue;
        if (value.size() > 30) {
          problem = key + "'s value is " + std::to_string(value.size()) + " characters long";
          break;
        }
        if (!isNumberOrLogical(value)) {
          problem = key + " = " + value + " is not a number";
          break;
        }
      }
      if (problem.empty() && !h.repeated.empty())
        problem = h.repeated + " appears twice in the header";
      if (problem.empty()) problem = compressedImageProblem(h, naxis1, naxis2, pcount, left);
    }
    if (problem.empty() && bytes > left) problem = "its data extends past the end of the file";
    // The primary HDU is left to cfitsio (it cannot be tile-compressed; its errors are clean).
    hdu.rejection = primary ? std::string() : problem;
    // Where the data unit cannot be sized, later HDUs cannot be located: the scan ends here
    // (and cfitsio must not go further, see endsScan); so too after a primary whose PCOUNT or
    // GCOUNT cannot be read, since no harmless header replaces a primary's. Where the file ends
    // inside the data unit there is nothing further to go to.
    const bool countsUnknown =
        primary && (problem.rfind("PCOUNT", 0) == 0 || problem.rfind("GCOUNT", 0) == 0);
    hdu.endsScan = !problem.empty() && (problem.rfind("BITPIX", 0) == 0 ||
                                        problem.rfind("NAXIS", 0) == 0 || countsUnknown);
    hdus.push_back(hdu);
    if (hdu.endsScan || (!problem.empty() && bytes > left)) break;
    offset += hdu.dataBytes;
  }
  return hdus;
}

std::string neutralHeader(int64_t headerBytes, int64_t dataBytes) {
  std::string h;
  auto card = [&](const std::string& text) {
    std::string c = text;
    c.resize(80, ' ');
    h += c;
  };
  auto number = [](const std::string& key, int64_t v) {
    std::string k = key;
    k.resize(8, ' ');
    std::string s = std::to_string(v);
    return k + "= " + std::string(20 - std::min<size_t>(20, s.size()), ' ') + s;
  };
  card("XTENSION= 'IMAGE   '");
  card(number("BITPIX", 8));
  card(number("NAXIS", dataBytes > 0 ? 1 : 0));
  if (dataBytes > 0) card(number("NAXIS1", dataBytes));
  card(number("PCOUNT", 0));
  card(number("GCOUNT", 1));
  card("EXTNAME = 'UNREADABLE'");
  card("END");
  h.resize(static_cast<size_t>(headerBytes), ' ');
  return h;
}

}  // namespace stacklens::io
