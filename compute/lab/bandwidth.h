// The bandwidths the lab's floor divides by, measured on this machine through the Backend API.
#pragma once

#include "compute/backend.h"

namespace stacklens::compute::lab {

// Bytes per second the backend streams through its own memory: a sum projection of a
// 16 × 1024 × 1024 stack (reads 64 MiB, writes 4 MiB) already where the backend computes, best
// of three after a warm-up. A plain memory-bound op gives the figure a program can reach, which is
// what the floor should mean, rather than a vendor's peak.
double measureMemoryBandwidth(Backend& backend);

// Bytes per second over the host link: a 64 MiB upload and download, best of three, counting
// both directions. 0 for a backend that computes on the host.
double measureLinkBandwidth(Backend& backend);

}  // namespace stacklens::compute::lab
