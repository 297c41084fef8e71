// 3D Richardson–Lucy on volumes larger than a memory budget, block by block (compute/blocked/
// block_plan.h), on any backend.
//
// An exchanging plan (BlockScheme::Exchange, CPU only) runs as compute/blocked/exchange_run.h
// says: the unblocked run's result. The rest of this comment is the overlapping scheme's.
//
// Boundary semantics: each block deconvolves its frame with periodic boundaries. At the volume's
// faces the frame is filled by the run's rule (reflect or zero), exactly as the unblocked run pads
// its own frame; periodic runs fill it wrapped around the volume. Between blocks a frame holds at
// least `halo` voxels of real data past its interior and wraps onto its own far side beyond. A
// plan of one block is the unblocked run. Inside, the results differ from the unblocked run's by
// what reaches a voxel from beyond the halo in the given iterations
// (tests/compute/blocked_deconvolution_test.cpp measures it).
//
// Pipelining: a reader thread fills the next block's frame (slab by slab, through the backend's
// BlockTransfers) and a writer thread empties the last block's interior while the backend
// deconvolves the current block.
//
// Several devices: one worker per backend, each with its own frames, transfers and pipeline,
// takes blocks from one shared queue (compute/blocked/block_queue.h); the reader and the writer
// are shared. A worker whose device fails (out of memory, a device
// error) hands its blocks back and stops; the others finish them. Every block's result is the
// same whichever worker computes it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/blocked/block_plan.h"
#include "compute/blocked/frame_fill.h"
#include "compute/job.h"

namespace stacklens::compute {

// Receives a part of a block's interior (C order). With several devices it is called from
// several threads at once, for boxes that do not overlap.
using BoxWriter = std::function<void(const Box& box, const float* data)>;

// Reads boxes out of a host volume (which must outlive the reader).
BoxReader boxReader(const Image& volume);
// Writes boxes into a host volume (which must outlive the writer).
BoxWriter boxWriter(Image& volume);

// When one block's steps began and ended, in seconds from the start of the run.
struct BlockTimes {
  size_t block = 0;
  double readFrom = 0, readTo = 0, computeFrom = 0, computeTo = 0, writeFrom = 0, writeTo = 0;
  // Within the read: locking the staging slabs, decoding the file into them, and waiting for
  // their copies to the device; within the write: waiting for the copies from the device, and
  // writing the file.
  double stagingSeconds = 0, decodingSeconds = 0, putWaitSeconds = 0;
  double getWaitSeconds = 0, writingSeconds = 0;
};

// What one worker (one backend) did.
struct WorkerReport {
  std::string device;  // the backend's deviceName()
  int blocks = 0;      // results it wrote
  // Time the reader spent filling frames, the backend deconvolving, the writer emptying results,
  // and the deconvolution waiting for them (what the pipelining did not hide).
  double readSeconds = 0, computeSeconds = 0, writeSeconds = 0, waitSeconds = 0;
  std::string failure;  // why it stopped early (its blocks went to the others), or empty
  std::vector<BlockTimes> timeline;  // the blocks it wrote, in the order it wrote them
  double finishedAt = 0;             // when it had no more blocks (seconds from the start)
};

struct BlockedRunReport {
  int blocks = 0;
  // Sums over the workers (one worker: its own figures).
  double readSeconds = 0, computeSeconds = 0, writeSeconds = 0, waitSeconds = 0;
  double releasedAt = 0;  // when the workers' frames and buffers were given back
  std::vector<WorkerReport> workers;
};

// Deconvolves plan.blocks in order (planSlabs must have run: frames move slabSlices at a time).
// Throws Cancelled (between slabs and blocks, and inside each as the backend checks); the writer
// may then have received some blocks but not all.
BlockedRunReport deconvolveBlocked(Backend& backend, const BoxReader& read, const BoxWriter& write,
                                   const Image& psf, const DeconvolveParams& p,
                                   const BlockPlan& plan, const Job& job = {});

// The same on several backends at once (one worker thread each). Throws the first failure when
// every worker failed before the blocks were done; a read or write error, or Cancelled, stops
// all of them.
BlockedRunReport deconvolveBlocked(const std::vector<Backend*>& backends, const BoxReader& read,
                                   const BoxWriter& write, const Image& psf,
                                   const DeconvolveParams& p, const BlockPlan& plan,
                                   const Job& job = {});

// The same on a host volume, returning a host volume.
Image deconvolveBlocked(Backend& backend, const Image& volume, const Image& psf,
                        const DeconvolveParams& p, const BlockPlan& plan, const Job& job = {},
                        BlockedRunReport* report = nullptr);

}  // namespace stacklens::compute
