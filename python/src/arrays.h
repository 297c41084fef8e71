// NumPy arrays in and out of compute::Image without copies where the layout allows.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "compute/image.h"

namespace stacklens::python {

namespace py = pybind11;

// A 2D (y, x) or 3D (z, y, x) array as an Image. C-contiguous float32 arrays are used in place
// (the Image keeps the array alive); others are converted to float32 once. what names the
// argument in errors.
compute::Image imageFrom(const py::handle& array, const char* what);

// The host image as a NumPy array sharing its storage; 2D when twoD (a z of 1 dropped).
py::array arrayFrom(const compute::Image& image, bool twoD);
py::array arrayFrom(const compute::LabelImage& labels, bool twoD);

// Whether an array argument is 2D (the results then are too).
bool isTwoD(const py::handle& array);

}  // namespace stacklens::python
