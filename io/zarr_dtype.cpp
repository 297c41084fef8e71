// Zarr element types, fill values and the conversion of stored elements to float32.
#include "io/zarr_dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "io/io_error.h"

namespace stacklens::io {

DType ZarrDataType::stackType() const {
  switch (kind) {
    case ZarrScalar::Bool:
      return DType::UInt8;
    case ZarrScalar::Int:
      return bytes == 1   ? DType::Int8
             : bytes == 2 ? DType::Int16
             : bytes == 4 ? DType::Int32
                          : DType::Int64;
    case ZarrScalar::UInt:
      return bytes == 1   ? DType::UInt8
             : bytes == 2 ? DType::UInt16
             : bytes == 4 ? DType::UInt32
                          : DType::UInt64;
    case ZarrScalar::Float:
      return bytes == 8 ? DType::Float64 : DType::Float32;
  }
  return DType::Float32;
}

namespace {

[[noreturn]] void refuse(const std::string& file, const std::string& name, const char* why) {
  throw IoError(file, "data type " + name + " is not read by StackLens (" + why + ")");
}

}  // namespace

ZarrDataType parseZarrV2Type(const Json& dtype, const std::string& file) {
  if (!dtype.is_string())
    throw IoError(file, "structured data type " + jsonShort(dtype) +
                            " is not read by StackLens (one number per element is)");
  const std::string s = dtype.get<std::string>();
  ZarrDataType t;
  t.name = s;
  if (s.size() < 3 || (s[0] != '<' && s[0] != '>' && s[0] != '|'))
    throw IoError(file, "data type \"" + s + "\" is not a NumPy type string");
  t.bigEndian = s[0] == '>';
  const char kind = s[1];
  const std::string size = s.substr(2);
  if (size != "1" && size != "2" && size != "4" && size != "8") {
    if (kind == 'c') refuse(file, s, "complex values");
    refuse(file, s, "an element size other than 1, 2, 4 or 8 bytes");
  }
  t.bytes = std::stoi(size);
  switch (kind) {
    case 'b':
      if (t.bytes != 1) refuse(file, s, "a boolean of more than one byte");
      t.kind = ZarrScalar::Bool;
      break;
    case 'i':
      t.kind = ZarrScalar::Int;
      break;
    case 'u':
      t.kind = ZarrScalar::UInt;
      break;
    case 'f':
      if (t.bytes == 1) refuse(file, s, "a one-byte float");
      t.kind = ZarrScalar::Float;
      break;
    case 'c':
      refuse(file, s, "complex values");
    default:
      refuse(file, s, "not a boolean, integer or float type");
  }
  return t;
}

ZarrDataType parseZarrV3Type(const Json& dtype, const std::string& file) {
  if (!dtype.is_string())
    throw IoError(file,
                  "data type " + jsonShort(dtype) + " is an extension StackLens does not read");
  const std::string s = dtype.get<std::string>();
  struct Known {
    const char* name;
    ZarrScalar kind;
    int bytes;
  };
  static constexpr Known known[] = {
      {"bool", ZarrScalar::Bool, 1},     {"int8", ZarrScalar::Int, 1},
      {"int16", ZarrScalar::Int, 2},     {"int32", ZarrScalar::Int, 4},
      {"int64", ZarrScalar::Int, 8},     {"uint8", ZarrScalar::UInt, 1},
      {"uint16", ZarrScalar::UInt, 2},   {"uint32", ZarrScalar::UInt, 4},
      {"uint64", ZarrScalar::UInt, 8},   {"float16", ZarrScalar::Float, 2},
      {"float32", ZarrScalar::Float, 4}, {"float64", ZarrScalar::Float, 8}};
  for (const Known& k : known)
    if (s == k.name) {
      ZarrDataType t;
      t.kind = k.kind, t.bytes = k.bytes, t.name = s;
      return t;
    }
  if (s.rfind("complex", 0) == 0) refuse(file, s, "complex values");
  refuse(file, s, "not a boolean, integer or float type of the Zarr v3 core");
}

double parseZarrFillValue(const Json& fill, const ZarrDataType& type, const std::string& file) {
  if (fill.is_null()) return 0.0;
  if (fill.is_boolean()) {
    if (type.kind != ZarrScalar::Bool)
      throw IoError(file, "fill_value true/false for " + type.name);
    return fill.get<bool>() ? 1.0 : 0.0;
  }
  if (fill.is_number()) return fill.get<double>();
  if (fill.is_string()) {
    const std::string s = fill.get<std::string>();
    if (type.kind == ZarrScalar::Float) {
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
      // v3: the value's bits in hex, e.g. "0x7fc00000" (a NaN with a payload).
      if (s.size() == 2 + 2 * size_t(type.bytes) && s.rfind("0x", 0) == 0 &&
          s.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos) {
        const uint64_t bits = std::stoull(s.substr(2), nullptr, 16);
        if (type.bytes == 8) return std::bit_cast<double>(bits);
        if (type.bytes == 4) return std::bit_cast<float>(static_cast<uint32_t>(bits));
        unsigned char half[2] = {static_cast<unsigned char>(bits),
                                 static_cast<unsigned char>(bits >> 8)};
        ZarrDataType little = type;
        little.bigEndian = false;
        float out = 0;
        convertZarrElements(half, 1, little, &out);
        return out;
      }
    }
  }
  throw IoError(file, "fill_value " + jsonShort(fill) + " is not a value of type " + type.name);
}

namespace {

float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) {  // zero or subnormal: mantissa × 2^-24, exact in float
    const float v = std::ldexp(float(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Element i is read from in + i × stride elements.
template <class T, bool Swap>
void convertAs(const unsigned char* in, int64_t n, int64_t stride, float* out) {
  const int64_t step = stride * int64_t(sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, in + i * step, sizeof(T));
    if constexpr (Swap)
      for (size_t k = 0; k < sizeof(T) / 2; ++k) std::swap(bytes[k], bytes[sizeof(T) - 1 - k]);
    T v;
    std::memcpy(&v, bytes, sizeof(T));
    out[i] = static_cast<float>(v);
  }
}

template <class T>
void convertAs(const unsigned char* in, int64_t n, int64_t stride, bool swap, float* out) {
  // Separate loops for the contiguous, unswapped case: the one that is read most, vectorised.
  if (swap)
    convertAs<T, true>(in, n, stride, out);
  else if (stride == 1)
    convertAs<T, false>(in, n, 1, out);
  else
    convertAs<T, false>(in, n, stride, out);
}

void convertHalf(const unsigned char* in, int64_t n, int64_t stride, bool swap, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t a = in[2 * i * stride], b = in[2 * i * stride + 1];
    out[i] = halfToFloat(static_cast<uint16_t>(swap ? (a << 8) | b : (b << 8) | a));
  }
}

}  // namespace

void convertZarrElements(const unsigned char* in, int64_t n, const ZarrDataType& type, float* out) {
  convertZarrElements(in, n, 1, type, out);
}

void convertZarrElements(const unsigned char* in, int64_t n, int64_t stride,
                         const ZarrDataType& type, float* out) {
  const bool swap = type.bigEndian != (std::endian::native == std::endian::big);
  switch (type.kind) {
    case ZarrScalar::Bool:
      for (int64_t i = 0; i < n; ++i) out[i] = in[i * stride] ? 1.0f : 0.0f;
      return;
    case ZarrScalar::Int:
      if (type.bytes == 1) return convertAs<int8_t>(in, n, stride, false, out);
      if (type.bytes == 2) return convertAs<int16_t>(in, n, stride, swap, out);
      if (type.bytes == 4) return convertAs<int32_t>(in, n, stride, swap, out);
      return convertAs<int64_t>(in, n, stride, swap, out);
    case ZarrScalar::UInt:
      if (type.bytes == 1) return convertAs<uint8_t>(in, n, stride, false, out);
      if (type.bytes == 2) return convertAs<uint16_t>(in, n, stride, swap, out);
      if (type.bytes == 4) return convertAs<uint32_t>(in, n, stride, swap, out);
      return convertAs<uint64_t>(in, n, stride, swap, out);
    case ZarrScalar::Float:
      if (type.bytes == 2) return convertHalf(in, n, stride, swap, out);
      if (type.bytes == 4) return convertAs<float>(in, n, stride, swap, out);
      return convertAs<double>(in, n, stride, swap, out);
  }
}

}  // namespace stacklens::io
