// Placeholder until the CPU operation lands.
#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

Segmentation segment(const Image&, const SegmentParams&, const Job&, ThreadPool&) {
  throw InvalidArgument("segment is not implemented yet");
}

}  // namespace stacklens::compute::cpu
