// The bandwidths the lab's floor divides by, measured on this machine through the Backend API.
#pragma once

#include "compute/backend.h"

namespace stacklens::compute::lab {

// Bytes per second the backend streams through its own memory, best of three after a warm-up.
// On the host: a 64 MiB copy split over the backend's threads (read + write counted, as STREAM's
// copy), the most a program streams there. On a device: a sum projection of a 16 × 1024 × 1024
// stack already there (reads 64 MiB, writes 4 MiB), the device's plainest memory-bound op
// reachable through the Backend API. The CPU's own projection is not used for the host: it walks
// z per pixel and runs well below the memory's speed, which would put the floor above the blur.
double measureMemoryBandwidth(Backend& backend);

// Bytes per second over the host link: images of 4, 16 and 64 MiB uploaded, and downloaded into a
// buffer the program holds, best of three each; the fastest rate of any size and direction, so
// that the floor it gives is a floor whichever way and at whatever size an op's bytes go. 0 for a
// backend that computes on the host.
double measureLinkBandwidth(Backend& backend);

}  // namespace stacklens::compute::lab
