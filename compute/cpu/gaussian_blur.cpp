// Placeholder until the CPU operation lands.
#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

Image gaussianBlur(const Image&, const BlurParams&, const Job&, ThreadPool&) {
  throw InvalidArgument("gaussian_blur is not implemented yet");
}

}  // namespace stacklens::compute::cpu
