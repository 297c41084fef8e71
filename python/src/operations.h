// The module's functions, one registration per file.
#pragma once

#include <pybind11/pybind11.h>

namespace stacklens::python {

// blur, median, project, moment, remove_outliers, resample
void addFilters(pybind11::module_& m);
void addMeasurements(pybind11::module_& m);  // sigma_clipped_stats, segment
// deconvolve, auto_boundary, gaussian_psf, symmetric_psf, seam_estimate (and the whole-stack
// plan and frame lengths that stacklens.dask uses)
void addDeconvolution(pybind11::module_& m);
// _Reader, _write, _BlockWriter, _PreparedBlockFile (stacklens.open, read and write wrap them)
void addStacks(pybind11::module_& m);
void addCatalogs(pybind11::module_& m);  // read_regions, read_catalog, crossmatch
void addLab(pybind11::module_& m);       // _lab_sweep, _lab_read_csv (stacklens.lab)

}  // namespace stacklens::python
