// convertFitsSamples: the pread() path's conversion, value for value what cfitsio returns.
#include "io/fits_samples.h"

#include <fitsio.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace stacklens::io {
namespace {

template <class Raw, class Unsigned>
Raw bigEndian(const unsigned char* p) {
  Unsigned u;
  std::memcpy(&u, p, sizeof u);
  if constexpr (sizeof(Unsigned) == 2) u = __builtin_bswap16(u);
  if constexpr (sizeof(Unsigned) == 4) u = __builtin_bswap32(u);
  if constexpr (sizeof(Unsigned) == 8) u = __builtin_bswap64(u);
  Raw r;
  std::memcpy(&r, &u, sizeof r);
  return r;
}

template <class Raw, class Unsigned>
void convertSamples(const unsigned char* in, int64_t count, double bscale, double bzero,
                    const std::optional<int64_t>& blank, float* out) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const bool scaled = bscale != 1.0 || bzero != 0.0;
  const bool checkBlank = std::is_integral_v<Raw> && blank.has_value();
  const Raw blankValue = checkBlank ? static_cast<Raw>(*blank) : Raw{};
  // 8- and 16-bit samples with an integral offset (BZERO 32768: unsigned 16-bit) add exactly in
  // 32-bit integers, and every sum is a float exactly: the same values, vectorised.
  if constexpr (std::is_integral_v<Raw> && sizeof(Raw) <= 2) {
    if (!checkBlank && bscale == 1.0 && bzero == std::floor(bzero) && std::abs(bzero) < 1e6) {
      const int32_t offset = static_cast<int32_t>(bzero);
      for (int64_t i = 0; i < count; ++i)
        out[i] = static_cast<float>(
            static_cast<int32_t>(bigEndian<Raw, Unsigned>(in + i * int64_t(sizeof(Raw)))) + offset);
      return;
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    const Raw raw = bigEndian<Raw, Unsigned>(in + i * static_cast<int64_t>(sizeof(Raw)));
    if (checkBlank && raw == blankValue) {
      out[i] = nan;
    } else if (scaled) {
      out[i] = static_cast<float>(static_cast<double>(raw) * bscale + bzero);
    } else {
      out[i] = static_cast<float>(raw);
    }
  }
}

// raw + 2^63 is not exact in double; flipping the sign bit is (as cfitsio does).
void convertUInt64Samples(const unsigned char* in, int64_t count,
                          const std::optional<int64_t>& blank, float* out) {
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t u = bigEndian<uint64_t, uint64_t>(in + i * 8) ^ (uint64_t{1} << 63);
    out[i] = blank && bigEndian<int64_t, uint64_t>(in + i * 8) == *blank
                 ? std::numeric_limits<float>::quiet_NaN()
                 : static_cast<float>(u);
  }
}

}  // namespace

bool convertFitsSamples(const unsigned char* in, int64_t count, const FitsSampleScaling& scaling,
                        float* out) {
  const double s = scaling.bscale, b = scaling.bzero;
  switch (scaling.bitpix) {
    case BYTE_IMG:
      convertSamples<uint8_t, uint8_t>(in, count, s, b, scaling.blank, out);
      return true;
    case SHORT_IMG:
      convertSamples<int16_t, uint16_t>(in, count, s, b, scaling.blank, out);
      return true;
    case LONG_IMG:
      convertSamples<int32_t, uint32_t>(in, count, s, b, scaling.blank, out);
      return true;
    case LONGLONG_IMG:
      if (scaling.dtype == DType::UInt64)
        convertUInt64Samples(in, count, scaling.blank, out);
      else
        convertSamples<int64_t, uint64_t>(in, count, s, b, scaling.blank, out);
      return true;
    case FLOAT_IMG:
      convertSamples<float, uint32_t>(in, count, s, b, scaling.blank, out);
      return true;
    case DOUBLE_IMG:
      convertSamples<double, uint64_t>(in, count, s, b, scaling.blank, out);
      return true;
    default:
      return false;
  }
}

}  // namespace stacklens::io
