// The host's memory bandwidth as the CPU backend sees it: the yardstick of the CPU floors.
#pragma once

namespace stacklens::compute::bench {

// Bytes per second (read + written, as the CUDA benchmark counts a device copy) of a copy of
// 1 GiB with cache-bypassing stores, split over `threads` threads of a thread pool like the
// backend's: the median of 5 copies after one that faults the pages in.
double hostCopyBandwidth(int threads);

}  // namespace stacklens::compute::bench
