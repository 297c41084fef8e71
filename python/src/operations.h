// The module's functions, one registration per file.
#pragma once

#include <pybind11/pybind11.h>

namespace stacklens::python {

void addFilters(pybind11::module_& m);        // blur, median, remove_outliers, resample
void addMeasurements(pybind11::module_& m);   // sigma_clipped_stats, segment
void addDeconvolution(pybind11::module_& m);  // deconvolve, gaussian_psf
void addStacks(pybind11::module_& m);         // open, read, write, Stack
void addCatalogs(pybind11::module_& m);       // read_regions, read_catalog, crossmatch
void addLab(pybind11::module_& m);            // _lab_sweep, _lab_read_csv (stacklens.lab)

}  // namespace stacklens::python
