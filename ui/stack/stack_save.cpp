// saveSlices: slice by slice into io::StackBlockWriter.
#include "ui/stack/stack_save.h"

#include <algorithm>
#include <vector>

#include "io/block_writer.h"

namespace stacklens::ui {

bool saveSlices(const SaveRequest& request, const std::atomic<bool>& cancel,
                const std::function<void(double)>& progress) {
  const io::StackInfo& info = request.info;
  io::WriteOptions options = io::carriedFrom(info, request.first);
  if (request.count == 1 && info.z > 1)
    options.history.push_back("StackLens: slice " + std::to_string(request.first) + " of " +
                              info.path);
  io::StackBlockWriter writer(request.path, request.count, info.y, info.x, options);
  std::vector<float> slice(static_cast<size_t>(info.y * info.x));
  for (int64_t k = 0; k < request.count; ++k) {
    if (cancel.load()) return false;  // the writer removes its temporary file
    const int64_t z = request.first + k;
    if (compute::SliceStore::Pixels cached = request.slices ? request.slices->find(z) : nullptr)
      std::copy(cached->begin(), cached->end(), slice.begin());
    else
      request.reader->readSlice(z, slice.data());
    writer.writeBox(k, k + 1, 0, info.y, 0, info.x, slice.data());
    if (progress) progress(double(k + 1) / double(request.count));
  }
  if (cancel.load()) return false;
  writer.commit();
  return true;
}

}  // namespace stacklens::ui
