// _stacklens: the C++ half of the `stacklens` Python package (python/stacklens/__init__.py).
// Errors become Python exceptions with the C++ message: bad arguments ValueError, files OSError,
// a GPU out of memory MemoryError, a cancelled run KeyboardInterrupt.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "compute/backend.h"
#include "compute/job.h"
#include "compute/log.h"
#include "compute/params.h"
#include "io/io_error.h"
#include "python/src/arrays.h"
#include "python/src/interrupts.h"
#include "python/src/operations.h"

namespace py = pybind11;

PYBIND11_MODULE(_stacklens, m) {
  m.doc() = "StackLens's operations and readers (use the stacklens package)";
  // The library's messages (a GPU run falling back to the CPU, ...) go to stderr as the CLI's
  // do; a Python logger would need the GIL on the threads that log.
  stacklens::compute::setLogSink([](stacklens::compute::LogLevel, const std::string& text) {
    std::fprintf(stderr, "stacklens: %s\n", text.c_str());
  });
  py::register_exception_translator([](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const stacklens::compute::InvalidArgument& x) {
      PyErr_SetString(PyExc_ValueError, x.what());
    } catch (const stacklens::io::IoError& x) {
      PyErr_SetString(PyExc_OSError, x.what());
    } catch (const stacklens::compute::OutOfDeviceMemory& x) {
      PyErr_SetString(PyExc_MemoryError, x.what());
    } catch (const stacklens::compute::Cancelled& x) {
      PyErr_SetString(PyExc_KeyboardInterrupt, x.what());
    }
  });
  stacklens::python::addFilters(m);
  stacklens::python::addMeasurements(m);
  stacklens::python::addDeconvolution(m);
  stacklens::python::addStacks(m);
  stacklens::python::addInterruptScope(m);
  stacklens::python::addCatalogs(m);
  stacklens::python::addLab(m);
  // Where an array's values are read from (tests: no copy for C-contiguous float32).
  m.def("_input_address", [](const py::handle& array) {
    return reinterpret_cast<uintptr_t>(stacklens::python::imageFrom(array, "array").data());
  });
  m.def("cuda_device_count", &stacklens::compute::cudaDeviceCount,
        "The CUDA devices this process can use (CUDA_VISIBLE_DEVICES applies).");
  m.def("cuda_usable", [] {
    std::string why;
    const bool usable = stacklens::compute::cudaUsable(&why);
    return py::make_tuple(usable, why);
  });
}
