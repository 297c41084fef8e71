// File ▸ Save stack / Save slice: the slices go to the file one at a time (the viewer's cached
// ones from its cache), never the whole stack in memory; the job reports progress and stops
// when asked. Plain C++, run off the GUI thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "compute/slice_store.h"
#include "io/stack.h"

namespace stacklens::ui {

struct SaveRequest {
  std::shared_ptr<const io::StackReader> reader;
  std::shared_ptr<compute::SliceStore> slices;  // the slices read already; may be null
  io::StackInfo info;
  int64_t first = 0, count = 1;  // the slices saved
  std::string path;
};

// Writes the slices to path (FITS or TIFF by extension, atomically, the WCS rewritten for the
// first slice: io::carriedFrom). Returns false, with nothing written, when cancel was set; throws
// IoError.
bool saveSlices(const SaveRequest& request, const std::atomic<bool>& cancel,
                const std::function<void(double)>& progress);

}  // namespace stacklens::ui
