// A sweep written as CSV reads back the same, machine lines and NaN included.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "compute/lab/sweep_csv.h"
#include "compute/params.h"

namespace stacklens::compute::lab {
namespace {

Sweep twoPointSweep() {
  Sweep s;
  s.machine.cpu = "Test CPU, 2 cores";  // a comma: the '#' line must keep it
  s.machine.cpuThreads = 2;
  s.machine.gpu = "NVIDIA H200, driver 570.1";
  s.machine.note = "";
  Point a;
  a.op = "blur";
  a.size = a.ny = a.nx = 256;
  a.variant = Variant::Cpu;
  a.threads = 2;
  a.variantName = "cpu-all-threads";
  a.repeats = 5;
  a.medianS = 0.0123456789, a.minS = 0.01, a.maxS = 0.02, a.q1S = 0.011, a.q3S = 0.013;
  a.bytes = 524288, a.bandwidth = 1.25e10, a.floorS = 524288 / 1.25e10;
  a.maxRelDiff = std::nan("");
  Point b = a;
  b.op = "rl3d";
  b.size = 256;
  b.nz = b.ny = b.nx = 40;
  b.variant = Variant::GpuWithTransfers;
  b.variantName = "gpu-with-transfers";
  b.threads = 0;
  b.transferS = 3.5e-5;
  b.maxRelDiff = 2.5e-7;
  Point c = b;
  c.variant = Variant::GpuKernel;
  c.variantName = "gpu-kernel";
  c.medianS = c.minS = c.maxS = c.q1S = c.q3S = std::nan("");
  c.error = "out of memory, \"really\"";
  s.points = {a, b, c};
  return s;
}

// %.9g keeps 9 significant digits: a relative error below 5e-9.
void expectClose(double a, double b) {
  if (std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a));
  } else {
    EXPECT_NEAR(a, b, 5e-9 * std::abs(b));
  }
}

TEST(LabSweepCsv, RoundTripKeepsEveryField) {
  const Sweep s = twoPointSweep();
  std::stringstream io;
  writeCsv(io, s);
  const Sweep r = readCsv(io);
  EXPECT_EQ(r.machine.cpu, s.machine.cpu);
  EXPECT_EQ(r.machine.cpuThreads, 2);
  EXPECT_EQ(r.machine.gpu, s.machine.gpu);
  ASSERT_EQ(r.points.size(), s.points.size());
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Point &p = r.points[i], &q = s.points[i];
    EXPECT_EQ(p.op, q.op);
    EXPECT_EQ(p.elements(), q.elements());
    EXPECT_EQ(p.nz, q.nz);
    EXPECT_EQ(p.size, q.size);
    EXPECT_EQ(p.variant, q.variant);
    EXPECT_EQ(p.variantName, q.variantName);
    EXPECT_EQ(p.threads, q.threads);
    EXPECT_EQ(p.repeats, q.repeats);
    expectClose(p.medianS, q.medianS);
    expectClose(p.minS, q.minS);
    expectClose(p.maxS, q.maxS);
    expectClose(p.q1S, q.q1S);
    expectClose(p.q3S, q.q3S);
    expectClose(p.bytes, q.bytes);
    expectClose(p.bandwidth, q.bandwidth);
    expectClose(p.floorS, q.floorS);
    expectClose(p.transferS, q.transferS);
    expectClose(p.maxRelDiff, q.maxRelDiff);
    EXPECT_EQ(p.error, q.error);
  }
}

TEST(LabSweepCsv, UnitsAreInTheColumnNames) {
  EXPECT_NE(csvHeader().find("median_s"), std::string::npos);
  EXPECT_NE(csvHeader().find("bandwidth_Bps"), std::string::npos);
  EXPECT_NE(csvHeader().find("floor_s"), std::string::npos);
}

TEST(LabSweepCsv, MalformedFilesNameTheLine) {
  std::stringstream noHeader("# cpu: x\n");
  EXPECT_THROW(readCsv(noHeader), InvalidArgument);
  std::stringstream badNumber(csvHeader() +
                              "\nblur,4,1,x,4,16,cpu-1-thread,1,1,1,1,1,1,1,1,1,1,0,nan,\n");
  try {
    readCsv(badNumber);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stacklens::compute::lab
