// The per-format writers behind writeStack/writeLabelStack (internal to stacklens_io).
#pragma once

#include <fitsio.h>

#include <cstdint>
#include <string>

#include "io/stack_writer.h"

namespace stacklens::io {

// What the writers store: float32 values or int32 labels.
enum class SampleKind { Float32, Int32 };

// A new FITS file at path with the image header (shape, the input's cards, spacing, HISTORY)
// and no data written yet; errors name target (the file the user asked for).
fitsfile* createFitsImage(const std::string& path, const std::string& target, SampleKind kind,
                          int64_t z, int64_t y, int64_t x, const WriteOptions& options);
void writeFitsFile(const std::string& path, const std::string& target, const void* data,
                   SampleKind kind, int64_t z, int64_t y, int64_t x, const WriteOptions& options);
void writeTiffFile(const std::string& path, const std::string& target, const void* data,
                   SampleKind kind, int64_t z, int64_t y, int64_t x, const WriteOptions& options);

// "micron", "µm" and "um" name the same unit; each format has its own spelling.
bool isMicron(const std::string& unit);

}  // namespace stacklens::io
