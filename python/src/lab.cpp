// stacklens.lab's C++ half: _lab_sweep runs a speedup-lab sweep (compute/lab) with the GIL
// released (writing its CSV and SVG when asked) and returns its columns as NumPy arrays;
// _lab_read_csv reads a saved sweep the same way.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "compute/lab/break_even.h"
#include "compute/lab/lab_ops.h"
#include "compute/lab/svg_plot.h"
#include "compute/lab/sweep_csv.h"
#include "compute/lab/sweep_runner.h"
#include "io/whole_file.h"
#include "python/src/arrays.h"
#include "python/src/interrupts.h"
#include "python/src/operations.h"

namespace stacklens::python {
namespace {

namespace lab = compute::lab;

template <class T, class F>
py::array_t<T> column(const std::vector<lab::Point>& points, F get) {
  py::array_t<T> a(std::vector<py::ssize_t>{py::ssize_t(points.size())},
                   stridesOf({py::ssize_t(points.size())}, sizeof(T)));
  auto m = a.template mutable_unchecked<1>();
  for (size_t i = 0; i < points.size(); ++i) m(py::ssize_t(i)) = get(points[i]);
  return a;
}

py::list strings(const std::vector<lab::Point>& points, std::string lab::Point::*field) {
  py::list l;
  for (const auto& p : points) l.append(p.*field);
  return l;
}

// The sweep as the Python side's dict: columns (NumPy arrays; op, variant and error as lists of
// str), machine, cancelled, and break_even {op: elements or None}, explain {op: sentence}.
py::dict toPython(const lab::Sweep& s) {
  const auto& pts = s.points;
  py::dict c;
  c["op"] = strings(pts, &lab::Point::op);
  c["variant"] = strings(pts, &lab::Point::variantName);
  c["error"] = strings(pts, &lab::Point::error);
  c["size"] = column<int64_t>(pts, [](const lab::Point& p) { return p.size; });
  c["nz"] = column<int64_t>(pts, [](const lab::Point& p) { return p.nz; });
  c["ny"] = column<int64_t>(pts, [](const lab::Point& p) { return p.ny; });
  c["nx"] = column<int64_t>(pts, [](const lab::Point& p) { return p.nx; });
  c["elements"] = column<int64_t>(pts, [](const lab::Point& p) { return p.elements(); });
  c["threads"] = column<int32_t>(pts, [](const lab::Point& p) { return p.threads; });
  c["repeats"] = column<int32_t>(pts, [](const lab::Point& p) { return p.repeats; });
  c["median_s"] = column<double>(pts, [](const lab::Point& p) { return p.medianS; });
  c["min_s"] = column<double>(pts, [](const lab::Point& p) { return p.minS; });
  c["max_s"] = column<double>(pts, [](const lab::Point& p) { return p.maxS; });
  c["q1_s"] = column<double>(pts, [](const lab::Point& p) { return p.q1S; });
  c["q3_s"] = column<double>(pts, [](const lab::Point& p) { return p.q3S; });
  c["bytes"] = column<double>(pts, [](const lab::Point& p) { return p.bytes; });
  c["bandwidth_Bps"] = column<double>(pts, [](const lab::Point& p) { return p.bandwidth; });
  c["floor_s"] = column<double>(pts, [](const lab::Point& p) { return p.floorS; });
  c["transfer_s"] = column<double>(pts, [](const lab::Point& p) { return p.transferS; });
  c["max_rel_diff"] = column<double>(pts, [](const lab::Point& p) { return p.maxRelDiff; });
  py::dict machine;
  machine["cpu"] = s.machine.cpu;
  machine["cpu_threads"] = s.machine.cpuThreads;
  machine["gpu"] = s.machine.gpu;
  machine["note"] = s.machine.note;
  py::dict breakEven, explain;
  for (const auto& op : lab::opsOf(pts)) {
    const auto be = lab::breakEven(pts, op);
    breakEven[py::str(op)] = be ? py::object(py::float_(be->elements)) : py::object(py::none());
    explain[py::str(op)] = lab::explainOp(op);
  }
  py::dict out;
  out["columns"] = c;
  out["machine"] = machine;
  out["cancelled"] = s.cancelled;
  out["break_even"] = breakEven;
  out["explain"] = explain;
  return out;
}

}  // namespace

void addLab(py::module_& m) {
  m.def(
      "_lab_sweep",
      [](const std::vector<std::string>& ops, const std::vector<int64_t>& sizes,
         const std::vector<int>& threads, int repeats, bool gpu, const py::object& source,
         const std::string& csv, const std::string& plot) {
        lab::SweepSpec spec;
        spec.ops = ops, spec.sizes = sizes, spec.threads = threads;
        spec.repeats = repeats, spec.gpu = gpu;
        if (!source.is_none()) spec.source = hostImageFrom(source, "source");
        lab::validate(spec);
        InterruptibleCall call;
        lab::SweepCallbacks cb;
        cb.cancel = call.job().cancelFlag();
        lab::Sweep s;
        {
          py::gil_scoped_release release;
          s = lab::runSweep(spec, cb);
        }
        if (s.cancelled) {
          call.raiseWhatPythonRaises();
          throw compute::Cancelled();
        }
        if (!csv.empty()) io::writeWholeFile(csv, lab::csvText(s));
        if (!plot.empty()) io::writeWholeFile(plot, lab::sweepSvg(s));
        return toPython(s);
      },
      py::arg("ops"), py::arg("sizes"), py::arg("threads"), py::arg("repeats"), py::arg("gpu"),
      py::arg("source"), py::arg("csv"), py::arg("plot"));
  m.def("_lab_read_csv", [](const std::string& path) { return toPython(lab::readCsvFile(path)); });
}

}  // namespace stacklens::python
