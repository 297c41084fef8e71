// Placeholder until the CPU operation lands.
#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

Image medianFilter(const Image&, int, const Job&, ThreadPool&) {
  throw InvalidArgument("median_filter is not implemented yet");
}

}  // namespace stacklens::compute::cpu
