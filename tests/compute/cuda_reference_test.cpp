// The CUDA backend against SciPy/astropy results committed in tests/compute/data (made by
// make_cuda_reference.py); skipped where no CUDA device is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/gpu_test_backends.h"

using namespace stacklens::compute;

namespace {

class CudaReference : public stacklens::testing::GpuTest {};

template <class T>
std::vector<T> readRaw(const std::string& name, size_t count) {
  std::string path = std::string(STACKLENS_TEST_DATA) + "/" + name;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<T> v(count);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(T)));
  if (f.gcount() != static_cast<std::streamsize>(count * sizeof(T)))
    throw std::runtime_error("short read: " + path);
  return v;
}

Image imageFrom(const std::vector<float>& v, Shape s) {
  Image im = Image::host(s);
  std::copy(v.begin(), v.end(), im.data());
  return im;
}

template <class Ref>
double relativeL2(const Image& got, const std::vector<Ref>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = double(got.data()[i]) - double(want[i]);
    num += d * d;
    den += double(want[i]) * double(want[i]);
  }
  return std::sqrt(num / den);
}

TEST_F(CudaReference, ZoomMatchesScipyMirrorForOrdersOneAndThree) {
  Shape s{5, 7, 9};
  Image in = imageFrom(readRaw<float>("cuda_zoom_in.f32", s.count()), s);
  for (int order : {1, 3}) {
    ResampleParams p;
    p.zoomZ = 1.6;
    p.zoomY = 0.7;
    p.zoomX = 2.3;
    p.order = order;
    Image out = gpu->download(gpu->resample(in, p));
    ASSERT_EQ(out.shape(), (Shape{8, 5, 21}));
    std::vector<float> want =
        readRaw<float>("cuda_zoom_order" + std::to_string(order) + ".f32", 8 * 5 * 21);
    EXPECT_LT(relativeL2(out, want), 1e-6) << "order " << order;
  }
}

}  // namespace
