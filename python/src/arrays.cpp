#include "python/src/arrays.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "compute/backend.h"

namespace stacklens::python {

using namespace pybind11::literals;

namespace {

compute::Shape shapeOf(const std::vector<int64_t>& dims, const char* what) {
  if (dims.size() != 2 && dims.size() != 3)
    throw py::value_error(std::string(what) + ": expected a 2D (y, x) or 3D (z, y, x) array, got " +
                          std::to_string(dims.size()) + " dimensions");
  const compute::Shape shape = dims.size() == 2 ? compute::Shape{1, dims[0], dims[1]}
                                                : compute::Shape{dims[0], dims[1], dims[2]};
  if (shape.empty()) throw py::value_error(std::string(what) + ": the array is empty");
  return shape;
}

// Storage that keeps a Python object alive; the last reference may go on a thread without the
// GIL.
std::shared_ptr<float> keeping(const py::object& owner, const void* data) {
  auto* held = new py::object(owner);
  return std::shared_ptr<float>(static_cast<float*>(const_cast<void*>(data)), [held](float*) {
    py::gil_scoped_acquire gil;
    delete held;
  });
}

compute::Image deviceImage(const py::handle& given, const char* what) {
  py::object array = py::reinterpret_borrow<py::object>(given);
  py::dict cai = array.attr("__cuda_array_interface__");
  const bool contiguous = cai.contains("strides") && cai["strides"].is_none();
  if (cai["typestr"].cast<std::string>() != "<f4" || !contiguous) {
    // Converted once, on the device, by CuPy.
    py::module_ cupy = py::module_::import("cupy");
    array = cupy.attr("ascontiguousarray")(array, "dtype"_a = cupy.attr("float32"));
    cai = array.attr("__cuda_array_interface__");
  }
  const compute::Shape shape = shapeOf(cai["shape"].cast<std::vector<int64_t>>(), what);
  const auto pointer = cai["data"].cast<py::tuple>()[0].cast<uintptr_t>();
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    const int device = compute::cudaDeviceOfPointer(reinterpret_cast<const void*>(pointer));
    if (device < 0)
      throw py::type_error(std::string(what) + ": the device array's memory is not on a GPU");
    compute::cudaWaitForStream(cai["stream"].cast<uintptr_t>(), device);
  }
  return compute::Image(shape, compute::Location::Cuda,
                        keeping(array, reinterpret_cast<const void*>(pointer)));
}

// A device buffer handed to CuPy: CuPy frees it when its array goes, maybe while its own kernels
// (on its streams) still read it, and the memory could go to our next result at once. So the
// device finishes its work first.
template <class T>
struct HandedToCupy {
  compute::Buffer<T> buffer;
  int device;
  ~HandedToCupy() { compute::cudaSynchronizeDevice(device); }
};

template <class T>
py::object share(const compute::Buffer<T>& image, bool twoD) {
  const compute::Shape s = image.shape();
  std::vector<py::ssize_t> dims = twoD && s.z == 1 ? std::vector<py::ssize_t>{s.y, s.x}
                                                   : std::vector<py::ssize_t>{s.z, s.y, s.x};
  if (image.onHost()) {
    auto* kept = new compute::Buffer<T>(image);
    py::capsule owner(kept, [](void* p) { delete static_cast<compute::Buffer<T>*>(p); });
    return py::array_t<T>(dims, stridesOf(dims, sizeof(T)), kept->data(), owner);
  }
  // A CuPy array over the device buffer, which the capsule keeps.
  py::module_ cupy = py::module_::import("cupy");
  const int device = compute::cudaDeviceOfPointer(image.data());
  auto* kept = new HandedToCupy<T>{image, device};
  py::capsule owner(kept, [](void* p) { delete static_cast<HandedToCupy<T>*>(p); });
  py::object memory = cupy.attr("cuda").attr("UnownedMemory")(
      reinterpret_cast<uintptr_t>(image.data()), image.bytes(), owner, device);
  py::object pointer = cupy.attr("cuda").attr("MemoryPointer")(memory, 0);
  return cupy.attr("ndarray")(
      py::tuple(py::cast(dims)),
      cupy.attr(sizeof(T) == 4 && std::is_floating_point_v<T> ? "float32" : "int32"),
      "memptr"_a = pointer);
}

}  // namespace

std::vector<py::ssize_t> stridesOf(const std::vector<py::ssize_t>& dims, py::ssize_t itemBytes) {
  std::vector<py::ssize_t> strides(dims.size());
  py::ssize_t step = itemBytes;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = step;
    step *= dims[i];
  }
  return strides;
}

bool onDevice(const py::handle& array) { return py::hasattr(array, "__cuda_array_interface__"); }

compute::Image imageFrom(const py::handle& array, const char* what) {
  if (onDevice(array)) return deviceImage(array, what);
  auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  if (!a) {
    PyErr_Clear();
    throw py::type_error(std::string(what) + ": expected an array of numbers");
  }
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  return compute::Image(shapeOf(dims, what), compute::Location::Host, keeping(a, a.data()));
}

compute::Image hostImageFrom(const py::handle& array, const char* what) {
  if (!onDevice(array)) return imageFrom(array, what);
  // Copied down by CuPy, after the work queued on the array's stream (CuPy honours the
  // interface's stream, and its own arrays are on its current stream).
  py::module_ cupy = py::module_::import("cupy");
  const py::object host = cupy.attr("asnumpy")(cupy.attr("asarray")(array));
  return imageFrom(host, what);
}

py::object arrayFrom(const compute::Image& image, bool twoD) { return share(image, twoD); }
py::object arrayFrom(const compute::LabelImage& labels, bool twoD) { return share(labels, twoD); }

bool isTwoD(const py::handle& array) {
  if (py::hasattr(array, "ndim")) return array.attr("ndim").cast<int>() == 2;
  // A nested list or tuple: its dimensions as NumPy counts them, so that a 2D list gives a 2D
  // result as numpy.asarray would.
  return py::module_::import("numpy").attr("ndim")(array).cast<int>() == 2;
}

}  // namespace stacklens::python
