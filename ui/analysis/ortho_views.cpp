// The cut reads each slice once; the views' crosshairs move at a slider step when this thread is
// free (drawn later, at a timer, they would land when the processed frame arrives and delay it),
// and the z-profile plot, a QPainter plot whose text costs more than both ortho frames, is redrawn
// when the slider rests.
#include "ui/analysis/ortho_views.h"

#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "ui/stack/slice_fetcher.h"

namespace stacklens::ui {

OrthoViews::OrthoViews(QThreadPool* pool, QObject* parent)
    : QObject(parent),
      pool_(pool),
      xz_(new render::SliceView()),
      yz_(new render::SliceView()),
      zProfile_(new PlotWidget(tr("z (slice)"))) {
  connect(xz_, &render::SliceView::clicked, this, [this](QPointF p) {
    const QPoint c = crosshair_.value_or(QPoint(int(info_.x / 2), int(info_.y / 2)));
    emit pointed(QPoint(int(std::lround(p.x())), c.y()), int(std::lround(p.y())));
  });
  connect(yz_, &render::SliceView::clicked, this, [this](QPointF p) {
    const QPoint c = crosshair_.value_or(QPoint(int(info_.x / 2), int(info_.y / 2)));
    emit pointed(QPoint(c.x(), int(std::lround(p.y()))), int(std::lround(p.x())));
  });
  clock_.start();
  rest_.setSingleShot(true);
  rest_.setInterval(100);
  connect(&rest_, &QTimer::timeout, this, [this] {
    lastFollowMs_ = clock_.elapsed();
    placeCrosshairs();
  });
}

OrthoViews::~OrthoViews() { cancel(); }

void OrthoViews::stackOpened(const OpenedStackView& stack) {
  generation_->fetch_add(1);
  reader_ = stack.reader;
  slices_ = stack.slices;
  info_ = reader_->info();
  crosshair_.reset();
  for (render::SliceView* v : {xz_, yz_}) {
    v->setCrosshair(std::nullopt);
    v->setLine(std::nullopt);
    v->setRegion(std::nullopt, false);
    v->clearSlice();
  }
  // FITS images have their first row at the bottom; microscopy TIFFs at the top.
  yz_->setOriginBottom(info_.format == "fits");
  const auto& sp = info_.spacing;
  xz_->setPixelAspect(info_.spacingKnown ? sp[0] / sp[2] : 1.0);
  yz_->setPixelAspect(info_.spacingKnown ? sp[1] / sp[0] : 1.0);
  zProfile_->setData({}, {});
  // A single image has no z to cut along: its docks go, and come back with the next cube.
  const bool cube = info_.z > 1;
  for (QDockWidget* d : {docks_.xz, docks_.yz})
    if (d) d->setVisible(cube);
  if (cube && docks_.zProfile) docks_.zProfile->raise();
}

void OrthoViews::crosshairMoved(QPoint pixel, int z, bool wholeSlices) {
  if (wholeSlices) setCrosshair(pixel, z);
}

void OrthoViews::setDisplay(const render::DisplaySettings& display) {
  xz_->setDisplay(display);
  yz_->setDisplay(display);
}

void OrthoViews::setCrosshair(std::optional<QPoint> pixel, int z) {
  crosshair_ = pixel;
  z_ = z;
  placeCrosshairs();
  cut();
}

void OrthoViews::sliceShown(const ShownSlice& shown) {
  z_ = shown.z;
  const qint64 now = clock_.elapsed();
  if (now - lastFollowMs_ >= kFollowIntervalMs && crosshair_) {
    lastFollowMs_ = now;
    xz_->setCrosshair(QPointF(crosshair_->x(), z_));
    yz_->setCrosshair(QPointF(z_, crosshair_->y()));
  }
  rest_.start();
}

void OrthoViews::placeCrosshairs() {
  if (!crosshair_) return;
  xz_->setCrosshair(QPointF(crosshair_->x(), z_));
  yz_->setCrosshair(QPointF(z_, crosshair_->y()));
  if (!zProfile_->xs().empty()) zProfile_->setData(zProfile_->xs(), zProfile_->ys(), z_);
}

void OrthoViews::hover(QPointF imagePos, int z) {
  if (!reader_ || info_.z <= 1 || slices_->count() < static_cast<size_t>(info_.z)) return;
  const int x = int(std::lround(imagePos.x())), y = int(std::lround(imagePos.y()));
  if (x < 0 || y < 0 || x >= info_.x || y >= info_.y) return;
  std::vector<double> zs, values;
  for (int k = 0; k < info_.z; ++k) {
    SliceData s = slices_->find(k);
    if (!s) return;
    zs.push_back(k);
    values.push_back((*s)[static_cast<size_t>(y) * info_.x + x]);
  }
  zProfile_->setData(std::move(zs), std::move(values), z);
}

void OrthoViews::cut() {
  if (!reader_ || !crosshair_ || info_.z <= 1) return;
  auto token = generation_;
  const quint64 generation = token->fetch_add(1) + 1;
  auto reader = reader_;
  auto slices = slices_;
  const int64_t X = info_.x, Y = info_.y, Z = info_.z;
  const int cx = crosshair_->x(), cy = crosshair_->y();
  (void)QtConcurrent::run(pool_, [=, this] {
    auto xz = std::make_shared<std::vector<float>>(static_cast<size_t>(X * Z));
    auto yz = std::make_shared<std::vector<float>>(static_cast<size_t>(Z * Y));
    std::vector<double> zs(static_cast<size_t>(Z)), spectrum(static_cast<size_t>(Z));
    QString error;
    try {
      for (int64_t z = 0; z < Z; ++z) {
        if (token->load() != generation) return;
        const SliceData s = slices->get(z);
        const float* p = s->data();
        std::copy(p + cy * X, p + (cy + 1) * X, xz->begin() + z * X);
        for (int64_t y = 0; y < Y; ++y) (*yz)[static_cast<size_t>(y * Z + z)] = p[y * X + cx];
        zs[static_cast<size_t>(z)] = double(z);
        spectrum[static_cast<size_t>(z)] = p[cy * X + cx];
      }
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    // token is checked on this object's thread; the object outlives the check because its
    // destructor moves the generation on and the window waits for the pool.
    QMetaObject::invokeMethod(
        this,
        [=, this] {
          if (token->load() != generation) return;
          if (!error.isEmpty()) {
            emit failed(error);
            return;
          }
          xz_->setSlice(xz, int(X), int(Z));
          yz_->setSlice(yz, int(Z), int(Y));
          zProfile_->setData(zs, spectrum, z_);
          emit updated();
        },
        Qt::QueuedConnection);
  });
}

}  // namespace stacklens::ui
