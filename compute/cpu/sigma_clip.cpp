// Placeholder until the CPU operation lands.
#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

ClipStats sigmaClip(const Image&, const ClipParams&, const Job&, ThreadPool&) {
  throw InvalidArgument("sigma_clip is not implemented yet");
}

}  // namespace stacklens::compute::cpu
