// Placeholder until the CPU operation lands.
#include "compute/cpu/operations.h"

namespace stacklens::compute::cpu {

Image removeOutliers(const Image&, const OutlierParams&, const Job&, ThreadPool&) {
  throw InvalidArgument("outliers is not implemented yet");
}

}  // namespace stacklens::compute::cpu
