// The speedup lab's operations: their inputs at a size, how each runs on a backend, the bytes it
// must move at least, and one sentence on the shape of its curve. Generic over compute::Backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace stacklens::compute::lab {

// blur, median, outliers, sigmaclip, segment, rl2d, rl3d, resample, projection, volume.
const std::vector<std::string>& labOpNames();
bool isLabOp(const std::string& op);
// True for the ops that work on a volume (rl3d, projection, volume).
bool isVolumeOp(const std::string& op);

// The input shape for edge n: N×N for 2D ops; for volume ops a cube of about as many voxels
// (edge round(n^(2/3)), even, at least 8), so that every op's x axis counts the same elements.
Shape labShape(const std::string& op, int64_t n);

// The input: for 2D ops the synthetic sky of `stacklens-cli bench` (compute/bench/workloads.h),
// or `source` (a host 2D image) mirrored or cropped to the shape; uniform noise for volumes.
// Inputs of Richardson–Lucy are made positive, as deconvolution needs.
Image labInput(const std::string& op, Shape shape, const Image& source, uint64_t seed = 1);

// What an op gives back, for comparing backends: an image (blur, median, ...) or a few numbers
// (sigmaclip: clipped median and std; segment: threshold, number of sources, total flux).
struct LabOutput {
  Image image;                 // where the backend left it
  std::vector<double> values;  // on the host
};
// Runs op on backend with the lab's parameters (lab_ops.cpp says which); job cancels it.
LabOutput runLabOp(const std::string& op, Backend& backend, const Image& input,
                   const Job& job = {});
// output.image brought to the host (a no-op when it is there already): into `into` when it is a
// host image of the same shape (output.image then shares it), else a new one.
void downloadOutput(Backend& backend, LabOutput& output, Image* into = nullptr);
// Max relative difference: for an image max |a − b| / max |b| (relative to the result's scale,
// so that pixels near zero do not blow it up); for values max_i |a_i − b_i| / |b_i| (0 / 0 = 0).
// Both outputs on the host; NaN when their shapes differ.
double maxRelativeDifference(const LabOutput& a, const LabOutput& b);

// The least bytes the op must read and write in main memory for this input (float32 in and out,
// one pass per iteration), the numerator of the bandwidth floor.
double bytesMoved(const std::string& op, Shape input);
// Bytes crossing the host link for the with-transfers variant: the input up, the result down.
double bytesTransferred(const std::string& op, Shape input);

// One sentence on why the op's curve looks as it does (memory- or compute-bound, launch
// overhead at small sizes), for the lecture.
std::string explainOp(const std::string& op);

}  // namespace stacklens::compute::lab
