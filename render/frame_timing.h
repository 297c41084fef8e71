// When a view's last frame was painted, filled and swapped: the render end of the per-stage
// timestamps that --scrub-benchmark reports (slider event to presented frame).
#pragma once

#include <chrono>
#include <cstdint>

namespace stacklens::render {

// One monotonic clock for every thread (GUI, worker, read-ahead), in ns.
inline int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct FrameTiming {
  int64_t paintStartNs = 0;  // paintGL entered
  int64_t fillEndNs = 0;     // the slice texture filled (== paintStartNs when nothing was filled)
  int64_t paintEndNs = 0;    // draw commands issued
  int64_t swappedNs = 0;     // the buffer swap returned (frameSwapped)
  bool filled = false;       // this frame (re)filled the slice texture
  bool external = false;     // by a TextureSink (CUDA–OpenGL interop), not a host upload
};

}  // namespace stacklens::render
