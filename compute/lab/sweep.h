// The speedup lab's data: what a sweep asks for, one measured point, the machine, the whole sweep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compute/image.h"

namespace stacklens::compute::lab {

// Where and how a point ran. CPU variants carry their thread count (Point::threads); the two GPU
// variants are the same run seen twice: kernel-only (the input already on the device, the result
// left there) and with transfers (upload + operation + download, the path a host program pays).
enum class Variant { Cpu, GpuKernel, GpuWithTransfers };

// "cpu-1-thread", "cpu-all-threads" (threads == 0 or the machine's count), "cpu-4-threads",
// "gpu-kernel", "gpu-with-transfers".
std::string variantName(Variant v, int threads, int allThreads);

struct SweepSpec {
  std::vector<std::string> ops;  // names from labOpNames() (compute/lab/lab_ops.h)
  std::vector<int64_t> sizes;    // edge N of the N×N image; 3D ops use a cube of as many voxels
  std::vector<int> threads = {1, 0};  // CPU thread counts; 0 = all hardware threads
  bool gpu = true;                    // time the GPU variants when a GPU is usable
  int repeats = 5;                    // timed runs after one warm-up
  // Optional 2D image (e.g. the viewer's slice): 2D ops then run on it, mirrored or cropped to
  // each size, instead of the synthetic sky. Must be on the host.
  Image source;
};
// Throws InvalidArgument naming the field: no ops, an unknown op, no sizes, a size below 16 or
// above 65536, a thread count below 0, repeats outside 1..1000.
void validate(const SweepSpec& spec);

// One operation at one size on one variant. Times in seconds, bytes in bytes, bandwidth in bytes
// per second; NaN where a figure does not apply (e.g. maxRelDiff without a GPU).
struct Point {
  std::string op;
  int64_t size = 0;                // the edge N asked for (labShape(op, size) gives the shape)
  int64_t nz = 1, ny = 0, nx = 0;  // the input's shape
  Variant variant = Variant::Cpu;
  int threads = 0;          // CPU threads used (the resolved count); 0 for the GPU
  std::string variantName;  // variantName(variant, ...) at the time of the run
  int repeats = 0;
  double medianS = 0, minS = 0, maxS = 0, q1S = 0, q3S = 0;
  // The bytes the operation must move at least (compute/lab/lab_ops.h: bytesMoved) and the
  // bandwidth measured on this variant's memory; floorS = bytes ÷ bandwidth, plus the copies over
  // the host link for gpu-with-transfers.
  double bytes = 0, bandwidth = 0, floorS = 0;
  double transferS = 0;   // gpu-with-transfers: median of upload + download; else 0
  double maxRelDiff = 0;  // GPU vs all-threads CPU: max |gpu − cpu| / max |cpu|; NaN for CPU rows
  std::string error;      // non-empty when this point failed (then the times are NaN)

  int64_t elements() const { return nz * ny * nx; }
};

struct Machine {
  std::string cpu;     // CPU model
  int cpuThreads = 0;  // hardware threads
  std::string gpu;     // GPU name and driver; empty without a usable GPU
  std::string note;    // e.g. why there is no GPU
};

struct Sweep {
  Machine machine;
  std::vector<Point> points;
  bool cancelled = false;
};

}  // namespace stacklens::compute::lab
