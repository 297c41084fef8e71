// Hand-made TIFF files for the readers' tests of damaged input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace stacklens::io::test {

// A little-endian classic TIFF with one uncompressed 16-bit page of width x height whose single
// strip claims stripBytes at offset 8 + IFD.
inline std::string tiffFile(uint32_t width, uint32_t height, uint32_t stripBytes,
                            size_t dataBytes) {
  std::string t = std::string("II*\0", 4);
  auto u16 = [&](uint16_t v) { t.append(reinterpret_cast<const char*>(&v), 2); };
  auto u32 = [&](uint32_t v) { t.append(reinterpret_cast<const char*>(&v), 4); };
  u32(8);
  const uint16_t entries = 8;
  const uint32_t dataOffset = 8 + 2 + entries * 12 + 4;
  u16(entries);
  auto entry = [&](uint16_t tag, uint16_t type, uint32_t value) {
    u16(tag);
    u16(type);
    u32(1);
    if (type == 3) {
      u16(static_cast<uint16_t>(value));
      u16(0);
    } else {
      u32(value);
    }
  };
  entry(256, 4, width);
  entry(257, 4, height);
  entry(258, 3, 16);
  entry(259, 3, 1);
  entry(262, 3, 1);
  entry(273, 4, dataOffset);
  entry(278, 4, height);
  entry(279, 4, stripBytes);
  u32(0);
  return t + std::string(dataBytes, '\x01');
}

}  // namespace stacklens::io::test
