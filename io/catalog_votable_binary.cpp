// VOTable BINARY and BINARY2 streams (and base64 TABLEDATA cells): base64, then big-endian values
// of each FIELD's datatype and arraysize, with BINARY2's null flags.
#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/catalog_rows.h"
#include "io/catalog_votable.h"

namespace stacklens::io {

namespace {

std::vector<uint8_t> decodeBase64(const std::string& s) {
  static const std::array<int8_t, 256> table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(a[i])] = static_cast<int8_t>(i);
    return t;
  }();
  std::vector<uint8_t> out;
  out.reserve(s.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    const int v = table[static_cast<unsigned char>(c)];
    if (v < 0) continue;  // whitespace, padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xff));
    }
  }
  return out;
}

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& d) : d_(d) {}
  bool has(size_t n) const { return n <= d_.size() - pos_; }
  size_t position() const { return pos_; }
  bool atEnd() const { return pos_ >= d_.size(); }
  uint64_t big(size_t n) {  // n big-endian bytes
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | d_[pos_ + i];
    pos_ += n;
    return v;
  }
  const uint8_t* take(size_t n) {
    const uint8_t* p = d_.data() + pos_;
    pos_ += n;
    return p;
  }

 private:
  const std::vector<uint8_t>& d_;
  size_t pos_ = 0;
};

size_t primitiveSize(const std::string& t) {
  if (t == "boolean" || t == "unsignedByte" || t == "char") return 1;
  if (t == "short" || t == "unicodeChar") return 2;
  if (t == "int" || t == "float") return 4;
  if (t == "long" || t == "double" || t == "floatComplex") return 8;
  if (t == "doubleComplex") return 16;
  return 0;
}

// A product of array dimensions that saturates instead of wrapping: anything this large is
// more than a stream holds, and is refused as such.
constexpr uint64_t kHugeCount = uint64_t{1} << 56;
uint64_t saturatingProduct(uint64_t a, uint64_t b) {
  return b != 0 && a > kHugeCount / b ? kHugeCount : std::min(a * b, kHugeCount);
}

// Primitives per item of an arraysize ("3", "3x2": 6 per cell; "*", "10*": 1 per item; "3x*": 3
// per item), variable when its last dimension is ("*", "n*"): then the stream gives the number
// of items before the cell.
uint64_t fixedElements(const std::string& arraysize, bool& variable) {
  variable = false;
  if (arraysize.empty()) return 1;
  uint64_t total = 1;
  size_t start = 0;
  while (start <= arraysize.size()) {
    size_t x = arraysize.find('x', start);
    if (x == std::string::npos) x = arraysize.size();
    const std::string dim = trimmed(std::string_view(arraysize).substr(start, x - start));
    if (dim.find('*') != std::string::npos) {
      variable = true;
      return total;
    }
    double v = 0;
    if (!parseNumber(dim, v) || !(v >= 0)) return 1;
    total = saturatingProduct(total, v >= double(kHugeCount) ? kHugeCount : uint64_t(v));
    start = x + 1;
  }
  return total;
}

void appendUtf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

// One field's value from a binary stream as text ("" for null); false when the stream ends.
bool readBinaryValue(ByteReader& in, const VoField& f, std::string& out) {
  bool variable = false;
  uint64_t elements = fixedElements(f.arraysize, variable);
  if (variable) {
    if (!in.has(4)) return false;
    elements = saturatingProduct(elements, in.big(4));
  }
  const std::string& t = f.datatype;
  out.clear();
  if (t == "bit") {
    const uint64_t bytes = (elements + 7) / 8;
    if (!in.has(bytes)) return false;
    const size_t count = static_cast<size_t>(elements);
    const uint8_t* p = in.take(bytes);
    for (size_t i = 0; i < count; ++i) out += (p[i / 8] >> (7 - i % 8)) & 1 ? '1' : '0';
    return true;
  }
  const size_t size = primitiveSize(t);
  if (size == 0) throw std::runtime_error("unknown VOTable datatype '" + t + "'");
  // elements <= 2^56 and size <= 16: the product cannot wrap.
  if (!in.has(size * elements)) return false;
  const size_t count = static_cast<size_t>(elements);
  if (t == "char") {
    const uint8_t* p = in.take(count);
    out = stripPadding(std::string(reinterpret_cast<const char*>(p), count));
    return true;
  }
  if (t == "unicodeChar") {
    for (size_t i = 0; i < count; ++i) {
      const uint32_t c = static_cast<uint32_t>(in.big(2));
      if (c == 0) {
        for (size_t k = i + 1; k < count; ++k) in.big(2);
        break;
      }
      appendUtf8(out, c);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return true;
  }
  bool allNull = count > 0;
  std::string joined;
  for (size_t i = 0; i < count; ++i) {
    std::string v;
    if (t == "boolean") {
      const char c = static_cast<char>(in.big(1));
      v = (c == 'T' || c == 't' || c == '1')   ? "true"
          : (c == 'F' || c == 'f' || c == '0') ? "false"
                                               : "";
    } else if (t == "unsignedByte") {
      v = formatValue(static_cast<unsigned>(in.big(1)));
    } else if (t == "short") {
      v = formatValue(static_cast<int16_t>(in.big(2)));
    } else if (t == "int") {
      v = formatValue(static_cast<int32_t>(in.big(4)));
    } else if (t == "long") {
      v = formatValue(static_cast<int64_t>(in.big(8)));
    } else if (t == "float" || t == "floatComplex") {
      for (int part = 0; part < (t == "float" ? 1 : 2); ++part) {
        const uint32_t bits = static_cast<uint32_t>(in.big(4));
        float x = 0;
        std::memcpy(&x, &bits, 4);
        v += (part ? " " : "") + formatValue(x);
      }
    } else {  // double, doubleComplex
      for (int part = 0; part < (t == "double" ? 1 : 2); ++part) {
        const uint64_t bits = in.big(8);
        double x = 0;
        std::memcpy(&x, &bits, 8);
        v += (part ? " " : "") + formatValue(x);
      }
    }
    if (f.hasNull && v == f.nullValue) v.clear();
    if (!trimmed(v).empty()) allNull = false;
    joined += (i ? " " : "") + v;
  }
  out = allNull ? std::string() : joined;
  return true;
}

}  // namespace

std::string decodeBase64Cell(const std::string& text, const VoField& field, std::string& error) {
  const std::vector<uint8_t> bytes = decodeBase64(text);
  ByteReader in(bytes);
  std::string value;
  try {
    if (!readBinaryValue(in, field, value)) error = "its base64 value is shorter than its FIELD";
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  return error.empty() ? value : std::string();
}

void decodeBinary(VoTable& t, const std::string& path) {
  const std::vector<uint8_t> bytes = decodeBase64(t.stream);
  ByteReader in(bytes);
  const size_t n = t.fields.size();
  const size_t flagBytes = (n + 7) / 8;
  const RowLimit limit(n, bytes.size(), path);
  while (!in.atEnd()) {
    const size_t rowStart = in.position();
    limit.check(t.rows.size() + 1);
    std::vector<bool> nulls(n, false);
    if (t.binary == 2) {
      if (!in.has(flagBytes)) break;
      const uint8_t* p = in.take(flagBytes);
      for (size_t i = 0; i < n; ++i) nulls[i] = (p[i / 8] >> (7 - i % 8)) & 1;
    }
    std::vector<std::string> row(n);
    for (size_t i = 0; i < n; ++i) {
      try {
        if (!readBinaryValue(in, t.fields[i], row[i]))
          throw IoError(
              path, "VOTable binary stream ends inside row " + std::to_string(t.rows.size() + 1));
      } catch (const std::runtime_error& e) {
        if (dynamic_cast<const IoError*>(&e)) throw;
        throw IoError(path, e.what());
      }
      if (nulls[i]) row[i].clear();
    }
    // Rows of no bytes (no FIELD, or only empty arrays) would never reach the end of the stream.
    if (in.position() == rowStart)
      throw IoError(path, "VOTable binary stream of " + std::to_string(bytes.size()) +
                              " bytes whose rows take none (no FIELD, or only empty arrays)");
    t.rows.push_back(std::move(row));
  }
  t.stream.clear();
}

}  // namespace stacklens::io
