// Placeholder until the CPU operation lands.
#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

Image richardsonLucy(const Image&, const Image&, const DeconvolveParams&, const Job&, ThreadPool&) {
  throw InvalidArgument("richardson_lucy is not implemented yet");
}

}  // namespace stacklens::compute::cpu
