// rlFrame: the smooth frame, or the fused one when every axis has a fused length and it is not
// much larger.
#include "compute/rl_frame.h"

namespace stacklens::compute {
namespace {

bool smooth(int64_t n) {
  for (int64_t f : {2, 3, 5, 7})
    while (n % f == 0) n /= f;
  return n == 1;
}

}  // namespace

bool isFastFrameLength(int64_t n) {
  if (n >= 128 && n <= 4096 && (n & (n - 1)) == 0) return true;
  for (int64_t m : {288, 576, 1152, 2304, 3456})
    if (n == m) return true;
  return false;
}

int64_t nextFastFrameLength(int64_t n) {
  int64_t best = 0;
  for (int64_t m : {128, 256, 288, 512, 576, 1024, 1152, 2048, 2304, 3456, 4096})
    if (m >= n && (best == 0 || m < best)) best = m;
  return best;
}

int64_t nextSmoothLength(int64_t n) {
  n = n < 1 ? 1 : n;
  while (!smooth(n)) ++n;
  return n;
}

Shape rlFrame(Shape need, std::array<bool, 3> padded) {
  const int64_t n[3] = {need.z, need.y, need.x};
  int64_t smoothFrame[3], fastFrame[3];
  bool fast = true;
  for (int a = 0; a < 3; ++a) {
    smoothFrame[a] = padded[a] ? nextSmoothLength(n[a]) : n[a];
    fastFrame[a] = padded[a] ? nextFastFrameLength(n[a]) : n[a];
    if (n[a] > 1 && !isFastFrameLength(fastFrame[a])) fast = false;
  }
  const double smoothCount = double(smoothFrame[0]) * double(smoothFrame[1]) * smoothFrame[2];
  const double fastCount = double(fastFrame[0]) * double(fastFrame[1]) * fastFrame[2];
  if (fast && fastCount <= kFastFrameGrowth * smoothCount)
    return {fastFrame[0], fastFrame[1], fastFrame[2]};
  return {smoothFrame[0], smoothFrame[1], smoothFrame[2]};
}

}  // namespace stacklens::compute
