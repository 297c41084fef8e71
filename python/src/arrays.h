// Arrays in and out of compute::Image without copies where the layout allows: NumPy arrays on
// the host, and device arrays (CuPy, or anything with __cuda_array_interface__) on their GPU.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // in every file: casters must be the same everywhere

#include "compute/image.h"

namespace stacklens::python {

namespace py = pybind11;

// A 2D (y, x) or 3D (z, y, x) array as an Image. C-contiguous float32 arrays are used in place
// (the Image keeps the array alive); others are converted to float32 once (device arrays by
// CuPy). A device array's image is on its device, after the work queued on its stream. what
// names the argument in errors.
compute::Image imageFrom(const py::handle& array, const char* what);

// The same on the host, for code that reads the values there (writers, PSFs): a device array is
// copied down.
compute::Image hostImageFrom(const py::handle& array, const char* what);

// Whether an argument is a device array (__cuda_array_interface__).
bool onDevice(const py::handle& array);

// The image as an array sharing its storage: NumPy for a host image, CuPy for a device one;
// 2D when twoD (a z of 1 dropped).
py::object arrayFrom(const compute::Image& image, bool twoD);
py::object arrayFrom(const compute::LabelImage& labels, bool twoD);

// C-order strides in bytes of an array of dims of T. Arrays are made with explicit strides:
// pybind11 2.10 (Debian 12's) would take them from the dtype's item size, which it reads at
// NumPy 1's offset (NumPy 2 moved it).
std::vector<py::ssize_t> stridesOf(const std::vector<py::ssize_t>& dims, py::ssize_t itemBytes);

// Whether an array argument is 2D (the results then are too).
bool isTwoD(const py::handle& array);

}  // namespace stacklens::python
