// Variant names and the rules of a sweep description (see sweep.h).
#include "compute/lab/sweep.h"

#include "compute/lab/lab_ops.h"
#include "compute/params.h"

namespace stacklens::compute::lab {

std::string variantName(Variant v, int threads, int allThreads) {
  if (v == Variant::GpuKernel) return "gpu-kernel";
  if (v == Variant::GpuWithTransfers) return "gpu-with-transfers";
  if (threads == 0 || threads == allThreads) return "cpu-all-threads";
  if (threads == 1) return "cpu-1-thread";
  return "cpu-" + std::to_string(threads) + "-threads";
}

void validate(const SweepSpec& s) {
  if (s.ops.empty()) throw InvalidParameter("ops", "lab: no operations chosen");
  for (const auto& op : s.ops)
    if (!isLabOp(op)) {
      std::string known;
      for (const auto& n : labOpNames()) known += (known.empty() ? "" : ", ") + n;
      throw InvalidParameter("ops", "lab: unknown operation '" + op + "' (known: " + known + ")");
    }
  if (s.sizes.empty()) throw InvalidParameter("sizes", "lab: no sizes chosen");
  for (int64_t n : s.sizes)
    if (n < 16 || n > 65536)
      throw InvalidParameter("sizes", "lab: size " + std::to_string(n) + " is outside 16..65536");
  for (int t : s.threads)
    if (t < 0)
      throw InvalidParameter("threads", "lab: thread count " + std::to_string(t) + " is below 0");
  if (s.repeats < 1 || s.repeats > 1000)
    throw InvalidParameter("repeats",
                           "lab: repeats must be 1..1000, got " + std::to_string(s.repeats));
  if (!s.source.empty() && (!s.source.onHost() || s.source.shape().z != 1))
    throw InvalidParameter("source", "lab: the source must be one 2D image on the host");
}

}  // namespace stacklens::compute::lab
