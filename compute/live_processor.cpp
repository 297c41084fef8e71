// Live processing: frames assembled from the slice store, downloads.
#include "compute/live_processor.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <vector>

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

LiveProcessor::LiveProcessor(std::shared_ptr<Backend> backend, std::shared_ptr<SliceStore> store)
    : backend_(std::move(backend)),
      store_(std::move(store)),
      resultPool_(std::make_shared<PixelPool>()) {
  if (!backend_) throw InvalidArgument("live processing: no backend");
  if (!store_) throw InvalidArgument("live processing: no slice source");
  if (store_->source().shape.empty()) throw InvalidArgument("live processing: the stack is empty");
}

LiveProcessor::LiveProcessor(std::shared_ptr<Backend> backend, RawSliceReader source,
                             size_t budgetBytes, std::function<void()> readerStart)
    : LiveProcessor(std::move(backend), std::make_shared<SliceStore>(std::move(source), budgetBytes,
                                                                     std::move(readerStart))) {
  store_->pageLockFor(backend_);
}

LiveProcessor::Frame LiveProcessor::process(int64_t z, const Pipeline& pipeline, const Job& job) {
  pipeline.validate();
  const Shape stack = store_->source().shape;
  if (z < 0 || z >= stack.z)
    throw InvalidArgument("slice " + std::to_string(z) + " is outside the stack's " +
                          std::to_string(stack.z) + " slices");
  const Clock::time_point start = Clock::now();
  const int64_t half = pipeline.slabHalfWidth();
  const int64_t z0 = std::max<int64_t>(0, z - half);
  const int64_t z1 = std::min<int64_t>(stack.z - 1, z + half);
  const int64_t n = z1 - z0 + 1;
  const SliceStore::Hold hold(*store_, z0, z1);  // the frame's slices stay while it runs

  Frame frame;
  const auto readStart = Clock::now();
  for (int64_t k = z0; k <= z1; ++k) {
    job.checkCancelled();
    const Image slice = store_->hostImage(k);  // read now unless kept or read ahead
    if (k == z) frame.raw = slice;
  }
  const double readMs = msSince(readStart);
  const auto queueStart = Clock::now();
  // Each slice is uploaded once while the store keeps it; a 3D slab is stacked from the uploads
  // where the backend computes, so a step uploads only the slice that entered the slab.
  Image input;
  if (n == 1) {
    input = store_->onBackend(z, *backend_);
  } else {
    std::vector<Image> slices;
    for (int64_t k = z0; k <= z1; ++k) slices.push_back(store_->onBackend(k, *backend_));
    input = backend_->device().stackSlices(slices);
    input.spacing = store_->source().spacing;
  }
  const double queueMs = msSince(queueStart);

  RunOptions options;
  options.resultOnBackend = true;
  frame.result = runPipeline(*backend_, input, n > 1 ? z - z0 : 0, pipeline, job, options);
  frame.result.readMs = readMs;
  frame.result.uploadMs += queueMs;
  frame.result.totalMs = msSince(start);
  return frame;
}

Image LiveProcessor::download(const Image& image) {
  if (image.onHost()) return image;
  auto [pixels, host] = resultPool_->image(image.shape(), backend_);
  backend_->device().downloadInto(image, host);
  return host;
}

}  // namespace stacklens::compute
