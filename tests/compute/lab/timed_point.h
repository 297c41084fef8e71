// A sweep point with timings chosen by a test (the lab's engine, plot and window tests).
#pragma once

#include <cstdint>
#include <string>

#include "compute/lab/sweep.h"

namespace stacklens::testing {

// op on an edge × edge image, variant v with threads (named as on a CPU of cpuThreads): a median
// of seconds, min and first quartile at low × seconds, max and third quartile at high × seconds.
inline compute::lab::Point timedPoint(const std::string& op, int64_t edge, compute::lab::Variant v,
                                      int threads, int cpuThreads, double seconds, double low = 1.0,
                                      double high = 1.0) {
  compute::lab::Point p;
  p.op = op;
  p.ny = p.nx = edge;
  p.variant = v;
  p.threads = threads;
  p.variantName = compute::lab::variantName(v, threads, cpuThreads);
  p.medianS = seconds;
  p.minS = p.q1S = low * seconds;
  p.maxS = p.q3S = high * seconds;
  return p;
}

}  // namespace stacklens::testing
