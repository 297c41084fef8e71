#include "python/src/arrays.h"

#include <string>

namespace stacklens::python {

compute::Image imageFrom(const py::handle& array, const char* what) {
  auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  if (!a) {
    PyErr_Clear();
    throw py::type_error(std::string(what) + ": expected an array of numbers");
  }
  if (a.ndim() != 2 && a.ndim() != 3)
    throw py::value_error(std::string(what) + ": expected a 2D (y, x) or 3D (z, y, x) array, got " +
                          std::to_string(a.ndim()) + " dimensions");
  const compute::Shape shape = a.ndim() == 2 ? compute::Shape{1, a.shape(0), a.shape(1)}
                                             : compute::Shape{a.shape(0), a.shape(1), a.shape(2)};
  if (shape.empty()) throw py::value_error(std::string(what) + ": the array is empty");
  // The image holds the array; the last reference may go on a thread without the GIL.
  auto* owner = new py::object(a);
  std::shared_ptr<float> storage(const_cast<float*>(a.data()), [owner](float*) {
    py::gil_scoped_acquire gil;
    delete owner;
  });
  return compute::Image(shape, compute::Location::Host, std::move(storage));
}

namespace {

template <class T>
py::array share(const compute::Buffer<T>& image, bool twoD) {
  if (!image.onHost()) throw std::logic_error("arrayFrom: the image is not on the host");
  auto* kept = new compute::Buffer<T>(image);
  py::capsule owner(kept, [](void* p) { delete static_cast<compute::Buffer<T>*>(p); });
  const compute::Shape s = image.shape();
  if (twoD && s.z == 1) return py::array_t<T>({s.y, s.x}, kept->data(), owner);
  return py::array_t<T>({s.z, s.y, s.x}, kept->data(), owner);
}

}  // namespace

py::array arrayFrom(const compute::Image& image, bool twoD) { return share(image, twoD); }
py::array arrayFrom(const compute::LabelImage& labels, bool twoD) { return share(labels, twoD); }

bool isTwoD(const py::handle& array) {
  return py::hasattr(array, "ndim") && array.attr("ndim").cast<int>() == 2;
}

}  // namespace stacklens::python
