// The FFTW-only yardstick of the CPU's Richardson–Lucy (compute/cpu/rl_transforms_only.h) runs the
// transforms a deconvolver runs, no more and no fewer, for every kind of run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compute/backend.h"
#include "compute/cpu/rl_deconvolver.h"
#include "compute/cpu/rl_transforms_only.h"
#include "compute/cpu/thread_pool.h"
#include "compute/rl_psf.h"
#include "tests/compute/image_checks.h"

namespace {

using namespace stacklens::compute;
using stacklens::testing::randomImage;

struct Case {
  std::string name;
  Shape shape;
  bool threeD;
  Boundary boundary;
  bool accelerate;
  double tvLambda;
};

TEST(RlTransformsOnly, RunsAsManyTransformsAsTheDeconvolver) {
  const std::vector<Case> cases = {
      {"2D periodic, three slices", {3, 24, 30}, false, Boundary::Periodic, false, 0},
      {"2D reflect, accelerated", {2, 20, 27}, false, Boundary::Reflect, true, 0},
      {"2D zero, TV", {1, 22, 22}, false, Boundary::Zero, false, 0.002},
      {"2D reflect-exact", {2, 21, 19}, false, Boundary::ReflectExact, false, 0},
      {"3D reflect, accelerated with TV", {8, 12, 14}, true, Boundary::Reflect, true, 0.002},
      {"3D reflect-exact", {7, 9, 11}, true, Boundary::ReflectExact, false, 0}};
  cpu::ThreadPool pool(2);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DeconvolveParams p;
    p.iterations = 3;
    p.threeD = c.threeD;
    p.boundary = c.boundary;
    p.accelerate = c.accelerate;
    p.tvLambda = c.tvLambda;
    const Image psf = rlPsf(gaussianPsf(c.threeD ? 1.0 : 0, 1.0, 1.0, {c.threeD ? 5 : 1, 5, 5}), p);
    const Image image = randomImage(c.shape, 7);
    Image out = Image::host(c.shape);
    // As richardsonLucy: one deconvolver for the stack in 3D, one for every slice in 2D.
    const Shape block = c.threeD ? c.shape : Shape{1, c.shape.y, c.shape.x};
    cpu::Deconvolver rl(block, psf, p, pool);
    for (int64_t z = 0; z < (c.threeD ? 1 : c.shape.z); ++z)
      rl.run(image.slice(z), out.slice(z), Job(), 0, 1);
    const cpu::TransformsOnly alone = cpu::runTransformsOnly(c.shape, psf.shape(), p, pool.size());
    EXPECT_EQ(alone.executed, rl.transformsExecuted());
    const int64_t blocks = c.threeD ? 1 : c.shape.z;
    EXPECT_EQ(alone.executed.backward, blocks * p.iterations * 2);
    EXPECT_GE(alone.seconds, 0);
  }
}

}  // namespace
