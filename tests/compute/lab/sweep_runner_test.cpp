// A small CPU sweep: its schema and units, cancelling, progress, and refused descriptions.
#include <gtest/gtest.h>

#include <cmath>

#include "compute/lab/lab_ops.h"
#include "compute/lab/sweep_runner.h"

namespace stacklens::compute::lab {
namespace {

SweepSpec smallSpec() {
  SweepSpec s;
  s.ops = {"blur", "sigmaclip", "projection"};
  s.sizes = {16, 32};
  s.threads = {1, 0};
  s.gpu = false;  // the same on every machine: CPU curves only
  s.repeats = 3;
  return s;
}

TEST(LabSweepRunner, PointsFollowTheSchema) {
  const SweepSpec spec = smallSpec();
  int calls = 0, lastDone = 0, total = 0, machines = 0;
  SweepCallbacks cb;
  cb.machine = [&](const Machine& m) {
    EXPECT_EQ(calls, 0);  // before the first point
    EXPECT_GE(m.cpuThreads, 1);
    ++machines;
  };
  cb.point = [&](const Point&) { ++calls; };
  cb.progress = [&](int done, int all) {
    EXPECT_EQ(done, lastDone + 1);
    lastDone = done;
    total = all;
  };
  const Sweep s = runSweep(spec, cb);
  EXPECT_FALSE(s.cancelled);
  EXPECT_FALSE(s.machine.note.empty());  // says the GPU was not timed
  EXPECT_TRUE(s.machine.gpu.empty());
  EXPECT_GE(s.machine.cpuThreads, 1);
  const int expected = plannedPoints(spec, false);
  EXPECT_EQ(int(s.points.size()), expected);
  EXPECT_EQ(calls, expected);
  EXPECT_EQ(machines, 1);
  EXPECT_EQ(total, expected);
  for (const Point& p : s.points) {
    SCOPED_TRACE(p.op + " " + p.variantName + " " + std::to_string(p.elements()));
    EXPECT_TRUE(p.error.empty()) << p.error;
    EXPECT_EQ(p.variant, Variant::Cpu);
    EXPECT_TRUE(p.variantName == "cpu-1-thread" || p.variantName == "cpu-all-threads");
    EXPECT_EQ(p.repeats, 3);
    const Shape shape = labShape(p.op, p.size);
    EXPECT_TRUE(p.size == 16 || p.size == 32);
    EXPECT_EQ(p.ny, shape.y);
    EXPECT_EQ(p.nz, shape.z);
    EXPECT_EQ(p.nx, shape.x);
    EXPECT_LE(p.minS, p.q1S);
    EXPECT_LE(p.q1S, p.medianS);
    EXPECT_LE(p.medianS, p.q3S);
    EXPECT_LE(p.q3S, p.maxS);
    EXPECT_GT(p.minS, 0);
    EXPECT_LT(p.maxS, 60);  // seconds, not ms or ns: a 32² op cannot take a minute
    EXPECT_EQ(p.bytes, bytesMoved(p.op, {p.nz, p.ny, p.nx}));
    EXPECT_GT(p.bandwidth, 1e6);  // bytes per second: any machine streams more than 1 MB/s
    EXPECT_DOUBLE_EQ(p.floorS, p.bytes / p.bandwidth);
    EXPECT_TRUE(std::isnan(p.maxRelDiff));  // no GPU to compare
  }
}

TEST(LabSweepRunner, VolumeOpsUseACubeOfAsManyVoxels) {
  for (int64_t n : {256, 1024, 8192}) {
    const Shape s = labShape("rl3d", n);
    EXPECT_EQ(s.z, s.y);
    EXPECT_EQ(s.y, s.x);
    // An even edge within 2 of n^(2/3): voxels within 3 edges² of n² (relative 5 % here).
    EXPECT_NEAR(double(s.count()) / double(n * n), 1.0, 0.05) << n;
  }
  EXPECT_EQ(labShape("blur", 300), (Shape{1, 300, 300}));
}

TEST(LabSweepRunner, SourceImageIsMirroredToEachSize) {
  Image src = Image::host({1, 3, 5});
  for (int64_t i = 0; i < 15; ++i) src.data()[i] = float(i);
  const Image in = labInput("median", {1, 16, 16}, src);
  // Half-sample mirroring: rows 0 1 2 2 1 0 0 1 ..., columns 0..4 4..0 0..
  EXPECT_EQ(in.at(0, 3, 5), src.at(0, 2, 4));
  EXPECT_EQ(in.at(0, 6, 9), src.at(0, 0, 0));
  EXPECT_EQ(in.at(0, 1, 7), src.at(0, 1, 2));
}

TEST(LabSweepRunner, CancelStopsBetweenPoints) {
  std::atomic<bool> cancel{false};
  SweepCallbacks cb;
  cb.cancel = &cancel;
  cb.point = [&](const Point&) { cancel = true; };
  const Sweep s = runSweep(smallSpec(), cb);
  EXPECT_TRUE(s.cancelled);
  EXPECT_EQ(s.points.size(), 1u);
}

TEST(LabSweepRunner, RefusesBadDescriptionsNamingTheField) {
  auto expectField = [](SweepSpec s, const std::string& field) {
    try {
      runSweep(s);
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const InvalidParameter& e) {
      EXPECT_EQ(e.parameter(), field) << e.what();
    }
  };
  SweepSpec s = smallSpec();
  s.ops = {"fft"};
  expectField(s, "ops");
  s = smallSpec();
  s.sizes = {8};
  expectField(s, "sizes");
  s = smallSpec();
  s.repeats = 0;
  expectField(s, "repeats");
  s = smallSpec();
  s.threads = {-1};
  expectField(s, "threads");
}

TEST(LabOps, RelativeDifferenceIsToTheResultsScale) {
  LabOutput a, b;
  a.image = Image::host({1, 1, 4});
  b.image = Image::host({1, 1, 4});
  const float av[] = {0, 1, 2, 4.5f}, bv[] = {0.25f, 1, 2, 4};
  std::copy(av, av + 4, a.image.data());
  std::copy(bv, bv + 4, b.image.data());
  EXPECT_DOUBLE_EQ(maxRelativeDifference(a, b), 0.5 / 4);  // max |a−b| / max |b|
  LabOutput u, v;
  u.values = {10, 0, 3};
  v.values = {8, 0, 3};
  EXPECT_DOUBLE_EQ(maxRelativeDifference(u, v), 2.0 / 8);  // per value, 0 vs 0 is no difference
}

}  // namespace
}  // namespace stacklens::compute::lab
