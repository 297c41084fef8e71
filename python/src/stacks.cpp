// Reading and writing stacks: a reader that reads only the slices and rows asked for (the lazy
// stacklens.Stack in Python builds on it), and the atomic writers.
#include <pybind11/stl.h>

#include <array>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "io/block_writer.h"
#include "io/prepared_block_file.h"
#include "io/read_stop.h"
#include "io/stack.h"
#include "io/stack_writer.h"
#include "python/src/arrays.h"
#include "python/src/interrupts.h"
#include "python/src/operations.h"

namespace stacklens::python {
namespace {

using namespace pybind11::literals;

// The reader behind stacklens.Stack.
class Reader {
 public:
  Reader(const std::string& path, int hdu, int plane) {
    io::OpenOptions o;
    o.hdu = hdu;
    o.plane = plane;
    // An open over HTTP waits on a server: other Python threads run meanwhile, and Ctrl-C ends
    // the wait (KeyboardInterrupt) instead of the server's timeouts.
    const InterruptibleCall call;
    try {
      py::gil_scoped_release release;
      const io::ReadStopScope stop(call.job().cancelFlag());
      reader_ = io::openStack(path, o);
    } catch (const io::ReadsStopped&) {
      call.raiseWhatPythonRaises();
      throw;
    }
  }
  const io::StackInfo& info() const { return reader_->info(); }
  // Rows [y0, y1) of slices [z0, z1), as float32 (scaling applied, BLANK as NaN).
  py::array read(int64_t z0, int64_t z1, int64_t y0, int64_t y1) const {
    const io::StackInfo& i = info();
    if (z0 < 0 || z1 > i.z || z0 > z1 || y0 < 0 || y1 > i.y || y0 > y1)
      throw py::index_error("read: outside the stack");
    const std::vector<py::ssize_t> dims{z1 - z0, y1 - y0, i.x};
    py::array_t<float> out(dims, stridesOf(dims, sizeof(float)));
    float* data = out.mutable_data();
    const int64_t slice = (y1 - y0) * i.x;
    const InterruptibleCall call;  // as for the open
    try {
      py::gil_scoped_release release;
      const io::ReadStopScope stop(call.job().cancelFlag());
      for (int64_t z = z0; z < z1; ++z) {
        if (y0 == 0 && y1 == i.y)
          reader_->readSlice(z, data + (z - z0) * slice);
        else if (y1 > y0)
          reader_->readRows(z, y0, y1, data + (z - z0) * slice);
      }
    } catch (const io::ReadsStopped&) {
      call.raiseWhatPythonRaises();
      throw;
    }
    return out;
  }

 private:
  std::unique_ptr<io::StackReader> reader_;
};

py::list headerList(const std::vector<io::HeaderCard>& cards) {
  py::list l;
  for (const io::HeaderCard& c : cards) l.append(py::make_tuple(c.key, c.value, c.comment));
  return l;
}

// The output's options from _write's and _BlockWriter's arguments.
io::WriteOptions writeOptions(const py::handle& spacing, const py::handle& units,
                              const py::handle& header, const std::vector<std::string>& history,
                              bool uint16, const Reader* like) {
  io::WriteOptions o = like ? io::carriedFrom(like->info()) : io::WriteOptions{};
  if (!spacing.is_none()) {
    const auto s = spacing.cast<std::vector<double>>();
    if (s.size() != 3) throw py::value_error("spacing: expected (z, y, x)");
    o.spacing = {s[0], s[1], s[2]};
    o.spacingKnown = true;
  }
  if (!units.is_none()) {
    const auto u = units.cast<std::vector<std::string>>();
    if (u.size() != 3) throw py::value_error("units: expected (z, y, x)");
    o.units = {u[0], u[1], u[2]};
  }
  if (!header.is_none())
    for (const auto& card : header.cast<std::vector<std::vector<std::string>>>()) {
      if (card.empty() || card.size() > 3)
        throw py::value_error("header: expected (key, value[, comment]) cards");
      o.header.push_back({card[0], card.size() > 1 ? card[1] : "", card.size() > 2 ? card[2] : ""});
    }
  o.history = history;
  o.tiffUInt16 = uint16;
  return o;
}

// A (z, y, x) of sizes at least 1, for zarr_chunks and zarr_shards.
std::array<int64_t, 3> zarrShape(const py::handle& value, const char* name) {
  const auto c = value.cast<std::vector<int64_t>>();
  if (c.size() != 3 || c[0] < 1 || c[1] < 1 || c[2] < 1)
    throw py::value_error(std::string(name) + ": expected (z, y, x), each at least 1");
  return {c[0], c[1], c[2]};
}

// write's OME-Zarr options (io/stack_writer.h ZarrWriteOptions), refused for other outputs;
// shards that are no multiple of the chunks are refused by the writer, which knows the chunks.
void applyZarrOptions(const std::string& path, const py::handle& version, const py::handle& chunks,
                      int levels, const py::handle& shards, io::WriteOptions& o) {
  const bool zarr = io::outputFormat(path) == io::OutputFormat::Zarr;
  if (!zarr && (!version.is_none() || !chunks.is_none() || !shards.is_none() || levels != 1))
    throw py::value_error(path +
                          ": zarr_version, zarr_chunks, zarr_shards and levels apply to a .zarr "
                          "output");
  if (!version.is_none()) o.zarr.omeVersion = version.cast<std::string>();
  if (!chunks.is_none()) o.zarr.chunks = zarrShape(chunks, "zarr_chunks");
  if (!shards.is_none()) {
    if (o.zarr.omeVersion != "0.5")
      throw py::value_error(
          "zarr_shards: shards are Zarr v3, written with zarr_version \"0.5\" "
          "only");
    o.zarr.shards = zarrShape(shards, "zarr_shards");
  }
  o.zarr.levels = levels;
}

// A box (z, y, x) or slice (y, x) as float32 C-order values, checked to lie inside shape.
compute::Image boxInside(const std::vector<int64_t>& shape, int64_t z0, int64_t y0, int64_t x0,
                         const py::handle& box) {
  compute::Image image = hostImageFrom(box, "box");
  const compute::Shape s = image.shape();
  if (z0 < 0 || y0 < 0 || x0 < 0 || z0 + s.z > shape[0] || y0 + s.y > shape[1] ||
      x0 + s.x > shape[2])
    throw py::index_error("write_box: the box is outside the stack");
  return image;
}

// Behind stacklens.dask.to_file on a dask.distributed cluster: the file a _BlockWriter prepared,
// which each task writes its own chunk into, in the worker that computed it (the object travels
// to the workers by pickle, as the plain values of io::PreparedBlockFile).
class PreparedFile {
 public:
  explicit PreparedFile(io::PreparedBlockFile file) : file_(std::move(file)) {}
  void writeBox(int64_t z0, int64_t y0, int64_t x0, const py::handle& box) const {
    // A float32 array whose rows are contiguous (a chunk's interior, as Dask trims it) goes in
    // as it is; others are converted first.
    if (py::isinstance<py::array_t<float>>(box)) {
      const auto a = py::reinterpret_borrow<py::array>(box);
      const py::ssize_t n = a.ndim();
      auto stride = [&](py::ssize_t axis) { return a.strides(axis) / py::ssize_t(sizeof(float)); };
      if ((n == 2 || n == 3) && a.strides(n - 1) == sizeof(float) && stride(n - 2) > 0 &&
          a.strides(n - 2) % sizeof(float) == 0 &&
          (n == 2 || (stride(0) > 0 && a.strides(0) % sizeof(float) == 0)) && a.size() > 0) {
        const int64_t bz = n == 3 ? a.shape(0) : 1, by = a.shape(n - 2), bx = a.shape(n - 1);
        if (z0 < 0 || y0 < 0 || x0 < 0 || z0 + bz > file_.z || y0 + by > file_.y ||
            x0 + bx > file_.x)
          throw py::index_error("write_box: the box is outside the stack");
        const auto* data = static_cast<const float*>(a.data());
        const int64_t rows = stride(n - 2), slices = n == 3 ? stride(0) : by * rows;
        py::gil_scoped_release release;
        io::writeBoxIntoPreparedFile(file_, z0, z0 + bz, y0, y0 + by, x0, x0 + bx, data, rows,
                                     slices);
        return;
      }
    }
    const compute::Image image = boxInside({file_.z, file_.y, file_.x}, z0, y0, x0, box);
    const compute::Shape s = image.shape();
    py::gil_scoped_release release;
    io::writeBoxIntoPreparedFile(file_, z0, z0 + s.z, y0, y0 + s.y, x0, x0 + s.x, image.data());
  }
  const io::PreparedBlockFile& file() const { return file_; }

 private:
  io::PreparedBlockFile file_;
};

py::tuple preparedState(const PreparedFile& p) {
  const io::PreparedBlockFile& f = p.file();
  const auto& c = f.zarrChunks;
  const auto& s = f.zarrShards;
  return py::make_tuple(f.path, f.target, f.z, f.y, f.x, f.dataStart, f.fileBytes,
                        static_cast<int>(f.samples), f.zarrVersion,
                        py::make_tuple(c[0], c[1], c[2]), py::make_tuple(s[0], s[1], s[2]));
}

PreparedFile preparedFromState(const py::tuple& t) {
  if (t.size() != 11) throw py::value_error("_PreparedBlockFile: a state of 11 values expected");
  io::PreparedBlockFile f;
  f.path = t[0].cast<std::string>();
  f.target = t[1].cast<std::string>();
  f.z = t[2].cast<int64_t>();
  f.y = t[3].cast<int64_t>();
  f.x = t[4].cast<int64_t>();
  f.dataStart = t[5].cast<int64_t>();
  f.fileBytes = t[6].cast<int64_t>();
  f.samples = static_cast<io::BlockSamples>(t[7].cast<int>());
  f.zarrVersion = t[8].cast<std::string>();
  const auto chunks = t[9].cast<std::vector<int64_t>>();
  if (chunks.size() != 3) throw py::value_error("_PreparedBlockFile: chunks (z, y, x) expected");
  f.zarrChunks = {chunks[0], chunks[1], chunks[2]};
  const auto shards = t[10].cast<std::vector<int64_t>>();
  if (shards.size() != 3) throw py::value_error("_PreparedBlockFile: shards (z, y, x) expected");
  f.zarrShards = {shards[0], shards[1], shards[2]};
  return PreparedFile(std::move(f));
}

// Behind stacklens.dask.to_file: a FITS/TIFF file or OME-Zarr image written box by box
// (io::StackBlockWriter), which appears at its path on commit() and is removed by close() (or when
// collected) before. Dask's threads may still be writing boxes when a failed or interrupted run
// closes it: close() waits for the boxes being written (the file is mapped, and unmapping it under
// them would crash) and later ones are refused. With for_workers the boxes come from other
// processes instead, through prepared_file().
class BlockWriter {
 public:
  BlockWriter(const std::string& path, const std::vector<int64_t>& shape,
              const io::WriteOptions& options, bool forWorkers)
      : shape_(shape) {
    if (!io::StackBlockWriter::supports(path))
      throw py::value_error(path + ": expected a .fits, .fit, .fts, .tif, .tiff or .zarr output");
    writer_ = std::make_unique<io::StackBlockWriter>(
        path, shape[0], shape[1], shape[2], options,
        forWorkers ? io::BoxWriters::OtherProcesses : io::BoxWriters::ThisWriter);
  }
  void writeBox(int64_t z0, int64_t y0, int64_t x0, const py::handle& box) {
    const compute::Image image = boxInside(shape_, z0, y0, x0, box);
    const compute::Shape s = image.shape();
    py::gil_scoped_release release;
    const std::shared_lock writing(use_);
    open().writeBox(z0, z0 + s.z, y0, y0 + s.y, x0, x0 + s.x, image.data());
  }
  PreparedFile preparedFile() {
    const std::shared_lock reading(use_);
    return PreparedFile(open().prepared());
  }
  void commit() {
    py::gil_scoped_release release;
    const std::unique_lock alone(use_);
    open().commit();
  }
  void close() {
    py::gil_scoped_release release;
    const std::unique_lock alone(use_);
    writer_.reset();
  }

 private:
  io::StackBlockWriter& open() {  // under use_
    if (!writer_) throw py::value_error("the writer was closed");
    return *writer_;
  }
  std::vector<int64_t> shape_;
  std::shared_mutex use_;  // shared by writeBox, alone by commit and close
  std::unique_ptr<io::StackBlockWriter> writer_;
};

// _Reader: the file behind the lazy stacklens.Stack, which reads only the slices asked for.
void addReader(py::module_& m) {
  py::class_<Reader>(m, "_Reader")
      .def(py::init<const std::string&, int, int>(), "path"_a, "hdu"_a = -1, "plane"_a = 0)
      .def_property_readonly("path", [](const Reader& r) { return r.info().path; })
      .def_property_readonly("format", [](const Reader& r) { return r.info().format; })
      .def_property_readonly("shape",
                             [](const Reader& r) {
                               const io::StackInfo& i = r.info();
                               return py::make_tuple(i.z, i.y, i.x);
                             })
      .def_property_readonly(
          "stored_dtype",
          [](const Reader& r) { return std::string(io::dtypeName(r.info().dtype)); })
      .def_property_readonly("hdu", [](const Reader& r) { return r.info().hdu; })
      .def_property_readonly("plane", [](const Reader& r) { return r.info().plane; })
      .def_property_readonly("planes", [](const Reader& r) { return r.info().planes; })
      .def_property_readonly("spacing",
                             [](const Reader& r) {
                               const auto& s = r.info().spacing;
                               return py::make_tuple(s[0], s[1], s[2]);
                             })
      .def_property_readonly("spacing_known", [](const Reader& r) { return r.info().spacingKnown; })
      .def_property_readonly("units",
                             [](const Reader& r) {
                               const auto& u = r.info().units;
                               return py::make_tuple(u[0], u[1], u[2]);
                             })
      .def_property_readonly("header", [](const Reader& r) { return headerList(r.info().header); })
      .def_property_readonly("read_unit",
                             [](const Reader& r) {
                               const auto& u = r.info().readUnit;
                               return py::make_tuple(u[0], u[1], u[2]);
                             })
      .def("read", &Reader::read, "z0"_a, "z1"_a, "y0"_a, "y1"_a);
}

// _write: stacklens.write's whole array at once, written beside the output and renamed.
void addWrite(py::module_& m) {
  m.def(
      "_write",
      [](const std::string& path, const py::handle& array, const py::handle& spacing,
         const py::handle& units, const py::handle& header, const std::vector<std::string>& history,
         bool uint16, const Reader* like, const py::handle& zarrVersion,
         const py::handle& zarrChunks, int levels, const py::handle& zarrShards) {
        io::WriteOptions o = writeOptions(spacing, units, header, history, uint16, like);
        applyZarrOptions(path, zarrVersion, zarrChunks, levels, zarrShards, o);
        const compute::Image image = hostImageFrom(array, "array");
        const compute::Shape s = image.shape();
        py::gil_scoped_release release;
        io::writeStack(path, image.data(), s.z, s.y, s.x, o);
      },
      "path"_a, "array"_a, "spacing"_a, "units"_a, "header"_a, "history"_a, "uint16"_a, "like"_a,
      "zarr_version"_a = py::none(), "zarr_chunks"_a = py::none(), "levels"_a = 1,
      "zarr_shards"_a = py::none());
}

// _BlockWriter: stacklens.dask.to_file's output, written box by box and committed at the end.
void addBlockWriter(py::module_& m) {
  py::class_<BlockWriter>(m, "_BlockWriter")
      .def(py::init([](const std::string& path, const std::vector<int64_t>& shape,
                       const py::handle& spacing, const py::handle& units, const py::handle& header,
                       const std::vector<std::string>& history, const Reader* like, bool forWorkers,
                       const py::handle& zarrVersion, const py::handle& zarrChunks, int levels,
                       const py::handle& zarrShards) {
             if (shape.size() != 3 || shape[0] < 1 || shape[1] < 1 || shape[2] < 1)
               throw py::value_error("shape: expected (z, y, x), each at least 1");
             io::WriteOptions o = writeOptions(spacing, units, header, history, false, like);
             applyZarrOptions(path, zarrVersion, zarrChunks, levels, zarrShards, o);
             return std::make_unique<BlockWriter>(path, shape, o, forWorkers);
           }),
           "path"_a, "shape"_a, "spacing"_a, "units"_a, "header"_a, "history"_a, "like"_a,
           "for_workers"_a = false, "zarr_version"_a = py::none(), "zarr_chunks"_a = py::none(),
           "levels"_a = 1, "zarr_shards"_a = py::none())
      .def("write_box", &BlockWriter::writeBox, "z0"_a, "y0"_a, "x0"_a, "box"_a)
      .def("prepared_file", &BlockWriter::preparedFile)
      .def("commit", &BlockWriter::commit)
      .def("close", &BlockWriter::close);
}

// _PreparedBlockFile: what Dask's worker processes write their chunks through (picklable).
void addPreparedBlockFile(py::module_& m) {
  py::class_<PreparedFile>(m, "_PreparedBlockFile")
      .def("write_box", &PreparedFile::writeBox, "z0"_a, "y0"_a, "x0"_a, "box"_a)
      .def_property_readonly("path", [](const PreparedFile& p) { return p.file().path; })
      .def_property_readonly("zarr_chunks",
                             [](const PreparedFile& p) -> py::object {
                               const io::PreparedBlockFile& f = p.file();
                               if (f.samples != io::BlockSamples::ZarrFloat32) return py::none();
                               const auto& c = f.zarrChunks;
                               return py::make_tuple(c[0], c[1], c[2]);
                             })
      .def_property_readonly("zarr_shards",
                             [](const PreparedFile& p) -> py::object {
                               const io::PreparedBlockFile& f = p.file();
                               const auto& s = f.zarrShards;
                               if (f.samples != io::BlockSamples::ZarrFloat32 || s[0] < 1)
                                 return py::none();
                               return py::make_tuple(s[0], s[1], s[2]);
                             })
      .def(py::pickle(&preparedState, &preparedFromState));
}

}  // namespace

void addStacks(py::module_& m) {
  addReader(m);
  addWrite(m);
  addBlockWriter(m);
  addPreparedBlockFile(m);
}

}  // namespace stacklens::python
