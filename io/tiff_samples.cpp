// tiffSampleType and convertTiffRow: TIFF sample formats as the reader's float32.
#include "io/tiff_samples.h"

#include <tiffio.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace stacklens::io {
namespace {

template <class T>
void convertRun(const unsigned char* in, size_t step, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, in + i * step * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(v);
  }
}

// IEEE 754 binary16 → float, exactly (subnormals, ±Inf and NaN included).
float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16, exponent = (h >> 10) & 0x1F,
                 mantissa = h & 0x3FFu;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    magnitude =
        mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

// Packed samples of 1, 2 or 4 bits, most significant bits first, one sample per pixel.
void unpackRow(const unsigned char* row, unsigned bits, size_t count, float* out) {
  const unsigned mask = (1u << bits) - 1;
  for (size_t i = 0; i < count; ++i) {
    const size_t bit = i * bits;
    out[i] = static_cast<float>((row[bit / 8] >> (8 - bits - bit % 8)) & mask);
  }
}

void convertHalfRun(const unsigned char* in, size_t step, size_t count, float* out) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t h;
    std::memcpy(&h, in + i * step * 2, 2);
    out[i] = halfToFloat(h);
  }
}

}  // namespace

void convertTiffRow(const TiffReader::Layout& l, DType type, const unsigned char* row, size_t step,
                    size_t sample, size_t count, float* out) {
  if (l.bits < 8) return unpackRow(row, l.bits, count, out);
  const unsigned char* in = row + sample * (l.bits / 8);
  if (l.format == SAMPLEFORMAT_IEEEFP && l.bits == 16) return convertHalfRun(in, step, count, out);
  switch (type) {
    case DType::UInt8:
      convertRun<uint8_t>(in, step, count, out);
      break;
    case DType::Int8:
      convertRun<int8_t>(in, step, count, out);
      break;
    case DType::UInt16:
      convertRun<uint16_t>(in, step, count, out);
      break;
    case DType::Int16:
      convertRun<int16_t>(in, step, count, out);
      break;
    case DType::UInt32:
      convertRun<uint32_t>(in, step, count, out);
      break;
    case DType::Int32:
      convertRun<int32_t>(in, step, count, out);
      break;
    case DType::UInt64:
      convertRun<uint64_t>(in, step, count, out);
      break;
    case DType::Int64:
      convertRun<int64_t>(in, step, count, out);
      break;
    case DType::Float32:
      convertRun<float>(in, step, count, out);
      break;
    case DType::Float64:
      convertRun<double>(in, step, count, out);
      break;
  }
}

DType tiffSampleType(const TiffReader::Layout& l, const std::string& path) {
  const bool isInt = l.format == SAMPLEFORMAT_INT;
  const bool isUInt = l.format == SAMPLEFORMAT_UINT || l.format == SAMPLEFORMAT_VOID;
  const bool isFloat = l.format == SAMPLEFORMAT_IEEEFP;
  // 1-, 2- and 4-bit samples (masks, bilevel scans) are unpacked to their stored values.
  if (isUInt && (l.bits == 1 || l.bits == 2 || l.bits == 4) && l.samples == 1) return DType::UInt8;
  if ((isInt || isUInt) && l.bits == 8) return isInt ? DType::Int8 : DType::UInt8;
  if ((isInt || isUInt) && l.bits == 16) return isInt ? DType::Int16 : DType::UInt16;
  if ((isInt || isUInt) && l.bits == 32) return isInt ? DType::Int32 : DType::UInt32;
  if ((isInt || isUInt) && l.bits == 64) return isInt ? DType::Int64 : DType::UInt64;
  if (isFloat && (l.bits == 16 || l.bits == 32)) return DType::Float32;  // half widened exactly
  if (isFloat && l.bits == 64) return DType::Float64;
  throw IoError(path, "unsupported sample type: " + std::to_string(l.bits) + "-bit " +
                          (isFloat  ? "float"
                           : isInt  ? "signed"
                           : isUInt ? "unsigned"
                                    : "complex") +
                          (l.samples > 1 ? " with " + std::to_string(l.samples) + " samples" : "") +
                          " (supported: 1/2/4-bit unsigned, 8/16/32/64-bit integers, "
                          "16/32/64-bit float)");
}

}  // namespace stacklens::io
