// Host memory for results the device hands back, recycled: a fresh buffer is zeroed and faulted
// in page by page by the kernel, which costs more than the DMA that fills it, so buffers of a
// finished result are kept for the next one of the same size. (For compute/cuda/*.cu only.)
#pragma once

#include <cstddef>
#include <memory>

#include "compute/image.h"

namespace stacklens::compute::cuda {

// bytes of host memory with unspecified contents, 2 MiB aligned (huge pages where the kernel
// allows); a buffer of 2 MiB or more returns to a cache of at most min(2 GiB, RAM / 16) when its
// last holder lets go (the oldest kept buffers freed to make room), and is handed out again for the
// same size. Throws std::bad_alloc.
std::shared_ptr<void> hostResultMemory(size_t bytes);

// A host buffer of `shape` in such memory, for results written in full.
template <class T>
Buffer<T> hostResult(Shape shape) {
  const size_t bytes = static_cast<size_t>(shape.count()) * sizeof(T);
  return Buffer<T>(shape, Location::Host,
                   std::static_pointer_cast<T>(hostResultMemory(std::max<size_t>(bytes, 1))));
}

// Bytes the cache holds now (tests).
size_t hostResultMemoryCached();

}  // namespace stacklens::compute::cuda
