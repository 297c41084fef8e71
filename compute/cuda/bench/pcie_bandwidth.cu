// Host ↔ device copy bandwidth from page-locked memory (the PCIe floor of the transfer-inclusive
// benchmark figures). Not part of the build: nvcc -O2 -arch=sm_90 pcie_bandwidth.cu -o
// pcie_bandwidth
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

static float timeCopies(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                        cudaStream_t st, int repeats) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int r = 0; r < repeats; ++r) {
    cudaEventRecord(a, st);
    cudaMemcpyAsync(dst, src, bytes, kind, st);
    cudaEventRecord(b, st);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main() {
  const size_t bytes = size_t(256) << 20;
  void *host = nullptr, *host2 = nullptr, *dev = nullptr, *dev2 = nullptr;
  if (cudaMallocHost(&host, bytes) != cudaSuccess || cudaMallocHost(&host2, bytes) != cudaSuccess ||
      cudaMalloc(&dev, bytes) != cudaSuccess || cudaMalloc(&dev2, bytes) != cudaSuccess) {
    std::fprintf(stderr, "allocation failed\n");
    return 1;
  }
  cudaStream_t s1, s2;
  cudaStreamCreate(&s1);
  cudaStreamCreate(&s2);
  const float h2d = timeCopies(dev, host, bytes, cudaMemcpyHostToDevice, s1, 7);
  const float d2h = timeCopies(host, dev, bytes, cudaMemcpyDeviceToHost, s1, 7);
  // Both directions at once (two copy engines): wall time of the pair.
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaDeviceSynchronize();
  cudaEventRecord(a, s1);
  cudaStreamWaitEvent(s2, a);
  cudaMemcpyAsync(dev2, host2, bytes, cudaMemcpyHostToDevice, s1);
  cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s2);
  cudaEvent_t c;
  cudaEventCreate(&c);
  cudaEventRecord(c, s2);
  cudaStreamWaitEvent(s1, c);
  cudaEventRecord(b, s1);
  cudaEventSynchronize(b);
  float both = 0;
  cudaEventElapsedTime(&both, a, b);
  std::printf(
      "{\"bytes\": %zu, \"h2d_GBps\": %.2f, \"d2h_GBps\": %.2f, \"both_directions_GBps\": %.2f}\n",
      bytes, bytes / (h2d * 1e6), bytes / (d2h * 1e6), 2.0 * bytes / (both * 1e6));
  return 0;
}
