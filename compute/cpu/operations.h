// The CPU implementations of the operations, one file each; CpuBackend forwards to them.
#pragma once

#include "compute/cpu/thread_pool.h"
#include "compute/image.h"
#include "compute/job.h"
#include "compute/params.h"

namespace stacklens::compute::cpu {

Image gaussianBlur(const Image& in, const BlurParams& p, const Job& job, ThreadPool& pool);
Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p, const Job& job,
                     ThreadPool& pool);
ClipStats sigmaClip(const Image& in, const ClipParams& p, const Job& job, ThreadPool& pool);
Segmentation segment(const Image& in, const SegmentParams& p, const Job& job, ThreadPool& pool);
Image medianFilter(const Image& in, int size, const Job& job, ThreadPool& pool);
Image removeOutliers(const Image& in, const OutlierParams& p, const Job& job, ThreadPool& pool);
Image resample(const Image& in, const ResampleParams& p, const Job& job, ThreadPool& pool);
Image project(const Image& in, const ProjectParams& p, const Job& job, ThreadPool& pool);
Image moment(const Image& in, const MomentParams& p, const Job& job, ThreadPool& pool);
Image renderVolume(const Image& in, const VolumeRenderParams& p, const Job& job, ThreadPool& pool);

}  // namespace stacklens::compute::cpu
