// A big region's median alone costs more than a frame: while scrubbing, the statistics wait until
// the slider rests for 100 ms.
#include "ui/analysis/region_stats_tool.h"

#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "io/region_geometry.h"
#include "ui/frame/future_result.h"

namespace stacklens::ui {

namespace {

QString hint() { return QObject::tr("Draw a rectangle or ellipse with the region tools."); }

QString number(double v) { return QString::number(v, 'g', 7); }

// The most pixels a region read from the file may cover (64 MiB of float32).
constexpr int64_t kMaxFilePixels = int64_t(1) << 24;
constexpr int64_t kBandRows = 256;

// What a part of a DS9 region covers, e.g. "r 10–20" or "90°–180°, 5 × 2.5–10 × 5" (pixels).
QString partName(const io::PixelRegion& r, int part) {
  const int rings = io::regionRings(r);
  if (rings <= 0) return {};
  const int ring = part % rings, sector = part / rings;
  using S = io::RegionShape;
  const bool round = r.shape == S::Annulus || r.shape == S::Panda;
  if (!round && r.shape != S::EllipseAnnulus && r.shape != S::BoxAnnulus && r.shape != S::Epanda &&
      r.shape != S::Bpanda)
    return QObject::tr("inside");
  const size_t stride = round ? 1 : 2;
  auto boundary = [&](int k) {
    const size_t i = static_cast<size_t>(k) * stride;
    return stride == 1 ? number(r.sizes[i])
                       : QString("%1 × %2").arg(number(r.sizes[i]), number(r.sizes[i + 1]));
  };
  QString name = QObject::tr("r %1–%2").arg(boundary(ring), boundary(ring + 1));
  if (r.angles.size() >= 2 && size_t(sector) + 1 < r.angles.size())
    name = QString("%1°–%2°, ").arg(number(r.angles[sector]), number(r.angles[sector + 1])) + name;
  return name;
}

}  // namespace

RegionStatsTool::RegionStatsTool(render::SliceView* view, QObject* parent)
    : QObject(parent), view_(view), label_(new QLabel(hint())) {
  label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label_->setWordWrap(true);
  label_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  rest_.setSingleShot(true);
  rest_.setInterval(100);
  connect(&rest_, &QTimer::timeout, this, &RegionStatsTool::measure);
}

void RegionStatsTool::regionDrawn(QRectF rect, bool ellipse) {
  setRegion(rect, ellipse);
  if (dock_) dock_->raise();
}

void RegionStatsTool::setRegion(QRectF rect, bool ellipse) {
  ds9_.reset();
  partStats_.clear();
  region_ = rect;
  ellipse_ = ellipse;
  view_->setRegion(rect, ellipse);
  measure();
}

void RegionStatsTool::sliceShown(const ShownSlice& shown) {
  z_ = shown.z;
  slice_ = shown.data;
  fromFile_ = !shown.data && shown.overview;
  width_ = shown.width;
  height_ = shown.height;
  if (region_ || ds9_) rest_.start();
}

void RegionStatsTool::setDs9Region(const io::PixelRegion& region) {
  ds9_ = region;
  measure();
}

void RegionStatsTool::clearDs9Region() {
  if (!ds9_) return;
  ds9_.reset();
  partStats_.clear();
  stats_ = {};
  if (region_)
    measure();
  else
    label_->setText(hint());
}

void RegionStatsTool::stackOpened(const OpenedStackView& stack) {
  reader_ = stack.reader;
  fromFile_ = false;
  ++generation_;
  region_.reset();
  ds9_.reset();
  partStats_.clear();
  slice_.reset();
  view_->setRegion(std::nullopt, false);
  label_->setText(hint());
  if (dock_ && reader_ && reader_->info().z <= 1) dock_->raise();
}

void RegionStatsTool::measure() {
  if (ds9_) return measureDs9Region();
  if (!region_) return;
  if (!slice_) {
    if (fromFile_ && reader_) measureFromFile();
    return;
  }
  stats_ = regionStatistics(slice_->data(), width_, height_, *region_, ellipse_);
  showStats();
}

void RegionStatsTool::measureFromFile() {
  const QRectF r = *region_;
  // Every pixel whose centre may lie inside, clamped to the plane.
  auto clampTo = [](double v, int n) { return std::clamp<int64_t>(int64_t(v), 0, n); };
  const int64_t x0 = clampTo(std::floor(r.left()) - 1, width_);
  const int64_t x1 = clampTo(std::ceil(r.right()) + 2, width_);
  const int64_t y0 = clampTo(std::floor(r.top()) - 1, height_);
  const int64_t y1 = clampTo(std::ceil(r.bottom()) + 2, height_);
  const quint64 generation = ++generation_;
  if (x0 >= x1 || y0 >= y1) {
    stats_ = {};  // outside the plane: no pixels
    return showStats();
  }
  if ((x1 - x0) * (y1 - y0) > kMaxFilePixels) {
    label_->setText(tr("The region covers more than %1 pixels: draw a smaller one to measure it "
                       "at full resolution.")
                        .arg(kMaxFilePixels));
    return;
  }
  label_->setText(tr("Measuring the region at full resolution…"));
  auto read = [reader = reader_, z = z_, x0, x1, y0, y1, r, ellipse = ellipse_] {
    std::vector<float> box(size_t((x1 - x0) * (y1 - y0)));
    // In bands of rows: a reader may read whole rows of the plane to give a box's columns.
    for (int64_t b = y0; b < y1; b += kBandRows)
      reader->readBox(z, b, std::min(y1, b + kBandRows), x0, x1,
                      box.data() + size_t((b - y0) * (x1 - x0)));
    return regionStatistics(box.data(), int(x1 - x0), int(y1 - y0),
                            r.translated(-double(x0), -double(y0)), ellipse);
  };
  whenDone(
      this, QtConcurrent::run(QThreadPool::globalInstance(), read),
      [this, generation](const RegionStats& stats) {
        if (generation != generation_) return;
        stats_ = stats;
        showStats();
      },
      [this, generation](const std::exception& e) {
        if (generation == generation_)
          label_->setText(tr("Cannot read the region: %1").arg(QString::fromUtf8(e.what())));
      });
}

void RegionStatsTool::showStats() {
  const RegionStats& s = stats_;
  auto n = [](double v) { return QString::number(v, 'g', 7); };
  label_->setText(
      tr("<b>%1</b> x %2…%3, y %4…%5, z %6<br>npix %7<br>mean %8<br>median %9<br>std %10<br>"
         "sum %11<br>min %12<br>max %13")
          .arg(ellipse_ ? tr("Ellipse") : tr("Rectangle"))
          .arg(region_->left(), 0, 'f', 1)
          .arg(region_->right(), 0, 'f', 1)
          .arg(region_->top(), 0, 'f', 1)
          .arg(region_->bottom(), 0, 'f', 1)
          .arg(z_)
          .arg(s.npix)
          .arg(n(s.mean), n(s.median), n(s.std), n(s.sum), n(s.min), n(s.max)));
}

// One row per part in DS9's order: an annulus ring by ring, a panda sector by sector.
void RegionStatsTool::measureDs9Region() {
  if (!slice_) return;
  const io::PixelRegion& r = *ds9_;
  partStats_ = regionStatistics(slice_->data(), width_, height_, r);
  stats_ = partStats_.empty() ? RegionStats{} : partStats_.front();
  if (partStats_.empty()) {
    label_->setText(tr("A %1 region holds no pixels to measure.")
                        .arg(r.shape == io::RegionShape::Point  ? tr("point")
                             : r.shape == io::RegionShape::Line ? tr("line")
                                                                : tr("text")));
    return;
  }
  QString rows;
  for (size_t k = 0; k < partStats_.size(); ++k) {
    const RegionStats& s = partStats_[k];
    rows += QString(
                "<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td>"
                "<td>%7</td><td>%8</td><td>%9</td></tr>")
                .arg(k + 1)
                .arg(partName(r, int(k)))
                .arg(s.npix)
                .arg(number(s.mean), number(s.median), number(s.std), number(s.sum), number(s.min),
                     number(s.max));
  }
  const QString from = r.line > 0 ? tr(" (line %1 of its file)").arg(r.line) : QString();
  label_->setText(tr("<b>DS9 region</b>%1, z %2, pixels whose centre is inside<br>"
                     "<table><tr><th>reg</th><th>part</th><th>npix</th><th>mean</th>"
                     "<th>median</th><th>std</th><th>sum</th><th>min</th><th>max</th></tr>%3"
                     "</table>")
                      .arg(from)
                      .arg(z_)
                      .arg(rows));
}

}  // namespace stacklens::ui
