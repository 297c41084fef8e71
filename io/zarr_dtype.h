// Zarr data types and fill values: v2 NumPy type strings ("<f4", "|u1") and v3 names
// ("float32"), fill values as numbers, "NaN", "Infinity", "-Infinity", booleans or v3 hex bits.
#pragma once

#include <cstdint>
#include <string>

#include "io/zarr_json.h"
#include "io/zarr_metadata.h"

namespace stacklens::io {

// Throws IoError(file, ...) for complex, structured, datetime and other types not read here.
ZarrDataType parseZarrV2Type(const Json& dtype, const std::string& file);
ZarrDataType parseZarrV3Type(const Json& dtype, const std::string& file);

// The fill value as the float it reads as; v2 null reads as 0 (zarr-python leaves such chunks
// uninitialised, so any value is as right; 0 is what a fresh NumPy array holds).
double parseZarrFillValue(const Json& fill, const ZarrDataType& type, const std::string& file);

// Converts n stored elements (in the stored byte order) to float32.
void convertZarrElements(const unsigned char* in, int64_t n, const ZarrDataType& type, float* out);
// The same for elements stride elements apart (a row of a chunk stored in F order).
void convertZarrElements(const unsigned char* in, int64_t n, int64_t stride,
                         const ZarrDataType& type, float* out);

}  // namespace stacklens::io
