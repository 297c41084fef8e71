// A big region's median alone costs more than a frame: while scrubbing, the statistics wait until
// the slider rests for 100 ms.
#include "ui/region_stats_tool.h"

namespace stacklens::ui {

namespace {
QString hint() { return QObject::tr("Draw a rectangle or ellipse with the region tools."); }
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

void RegionStatsTool::setRegion(QRectF rect, bool ellipse) {
  region_ = rect;
  ellipse_ = ellipse;
  view_->setRegion(rect, ellipse);
  measure();
}

void RegionStatsTool::sliceShown(const ShownSlice& shown) {
  z_ = shown.z;
  slice_ = shown.data;
  width_ = shown.width;
  height_ = shown.height;
  if (region_) rest_.start();
}

void RegionStatsTool::stackOpened(const OpenedStackView&) {
  region_.reset();
  slice_.reset();
  view_->setRegion(std::nullopt, false);
  label_->setText(hint());
}

void RegionStatsTool::measure() {
  if (!region_ || !slice_) return;
  stats_ = regionStatistics(slice_->data(), width_, height_, *region_, ellipse_);
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

}  // namespace stacklens::ui
