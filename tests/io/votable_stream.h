// A big-endian byte stream for VOTable BINARY/BINARY2 tests, and its base64, written
// independently of the reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace stacklens::io::test {

struct Stream {
  std::string bytes;
  void be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void i16(int16_t v) { be(static_cast<uint16_t>(v), 2); }
  void i32(int32_t v) { be(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { be(static_cast<uint64_t>(v), 8); }
  void u8(uint8_t v) { be(v, 1); }
  void f32(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    be(b, 4);
  }
  void f64(double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    be(b, 8);
  }
  void fixedChars(const std::string& s, size_t n) {
    std::string c = s;
    c.resize(n, '\0');
    bytes += c;
  }
  void varChars(const std::string& s) {
    i32(static_cast<int32_t>(s.size()));
    bytes += s;
  }
  std::string base64() const {
    const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
      const uint32_t v =
          (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
      for (int k = 3; k >= 0; --k) out += a[(v >> (6 * k)) & 63];
      if (out.size() % 77 == 76) out += "\n";  // line breaks as writers put them
    }
    const size_t rest = bytes.size() - i;
    if (rest == 1) {
      const uint32_t v = uint8_t(bytes[i]) << 16;
      out += a[(v >> 18) & 63];
      out += a[(v >> 12) & 63];
      out += "==";
    } else if (rest == 2) {
      const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
      out += a[(v >> 18) & 63];
      out += a[(v >> 12) & 63];
      out += a[(v >> 6) & 63];
      out += "=";
    }
    return out;
  }
};

}  // namespace stacklens::io::test
