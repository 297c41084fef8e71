// Small device helpers shared by the CUDA operation files (boundary index maps, key transforms,
// asynchronous copies).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace stacklens::compute::cuda {

// scipy's 'reflect' (half-sample symmetric: d c b a | a b c d | d c b a), any distance out.
__host__ __device__ inline int64_t reflectIndex(int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (n == 1) return 0;
  int64_t period = 2 * n;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - 1 - i;
}

// scipy's 'mirror' (whole-sample symmetric: d c b | a b c d | c b a), any distance out.
__host__ __device__ inline int64_t mirrorIndex(int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (n == 1) return 0;
  int64_t period = 2 * n - 2;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

// Maps a float to an unsigned key with the same order (negative values below positive ones).
__device__ inline uint32_t orderedKey(float v) {
  uint32_t u = __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ inline float keyToFloat(uint32_t k) {
  uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  return __uint_as_float(u);
}

// Asynchronous copies from global to shared memory that bypass registers, so that a thread can
// issue all of its copies before waiting for any: 4 bytes (kept in L1 too), or 16 aligned bytes
// (L2 only). waitForAsyncCopies waits for all of the thread's copies.
__device__ __forceinline__ void copyAsync4(float* shared, const float* global) {
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(at), "l"(global) : "memory");
}
// copyAsync4 to a shared address itself (__cvta_generic_to_shared's), so that a thread's copies
// into one array can be its address plus constants.
__device__ __forceinline__ void copyAsync4(unsigned shared, const float* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared), "l"(global) : "memory");
}
__device__ __forceinline__ void copyAsync16(float* shared, const float* global) {
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(at), "l"(global) : "memory");
}
__device__ __forceinline__ void waitForAsyncCopies() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

}  // namespace stacklens::compute::cuda
