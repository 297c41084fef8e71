// Placeholder until the CPU operation lands.
#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

Image resample(const Image&, const ResampleParams&, const Job&, ThreadPool&) {
  throw InvalidArgument("resample is not implemented yet");
}

}  // namespace stacklens::compute::cpu
