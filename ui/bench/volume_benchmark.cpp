#include "ui/bench/volume_benchmark.h"

#include <QJsonDocument>
#include <QTimer>
#include <algorithm>
#include <limits>

#include "compute/volume_render.h"
#include "ui/frame/main_window.h"
#include "ui/volume/volume_panel.h"
#include "ui/volume/volume_tool.h"

namespace stacklens::ui {
namespace {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[size_t(q * double(v.size() - 1) + 0.5)];
}

}  // namespace

VolumeBenchmark::VolumeBenchmark(MainWindow* window, int frames, QSize output,
                                 compute::VolumeMode mode, QObject* parent)
    : QObject(parent),
      window_(window),
      frames_(std::max(1, frames)),
      output_(output),
      mode_(mode) {}

void VolumeBenchmark::start() {
  load_.start();
  panel_ = showVolumeView(window_);
  panel_->setOutputSize(output_);
  panel_->setMode(mode_);
  connect(panel_, &VolumePanel::volumeLoaded, this,
          [this] { loadMs_ = load_.nsecsElapsed() / 1e6; });
  connect(panel_, &VolumePanel::frameShown, this, &VolumeBenchmark::frameShown);
}

void VolumeBenchmark::frameShown() {
  if (frame_.isValid()) {
    const double ms = frame_.nsecsElapsed() / 1e6;
    if (warmUp_ > 0) {
      if (--warmUp_ == 0) soak_.start();
    } else {
      latency_.push_back(ms);
      render_.push_back(panel_->lastFrameMs());
      ++done_;
      if (soak_.add(ms) && !soak_.over()) startNewMinute();  // the last minute's stay
      if (soak_.over()) frames_ = done_;
    }
  }
  if (done_ >= frames_) {
    emit finished(report());
    return;
  }
  QTimer::singleShot(0, this, &VolumeBenchmark::nextFrame);  // after this frame's handlers
}

void VolumeBenchmark::setSoak(double minutes, int device) {
  soak_ = SoakSampler(minutes, device);
  if (!soak_.enabled()) return;
  frames_ = std::numeric_limits<int>::max() / 2;  // until the time is up
  startNewMinute();
}

void VolumeBenchmark::startNewMinute() {
  for (auto* v : {&latency_, &render_}) startMinuteOf(*v);
}

void VolumeBenchmark::nextFrame() {
  frame_.start();
  panel_->turn(0.7, 360.0 / 120);  // three turns a minute at 120 frames
}

QString VolumeBenchmark::report() const {
  QString json = figures();
  if (!soak_.enabled()) return json;
  json.chop(1);  // the closing brace
  return json + ",\"soak\":" +
         QString::fromUtf8(QJsonDocument(soak_.report()).toJson(QJsonDocument::Compact)) + "}";
}

QString VolumeBenchmark::figures() const {
  const compute::Shape s = panel_->volume()->volume.shape();
  const double p50 = percentile(latency_, 0.5);
  return QString(
             "{\"renderer\":\"%1\",\"gl_renderer\":\"%2\",\"volume\":[%3,%4,%5],\"bin\":%6,"
             "\"frame\":[%7,%8],\"mode\":\"%9\",\"frames\":%10,\"load_ms\":%11,"
             "\"p50_ms\":%12,\"p95_ms\":%13,\"max_ms\":%14,\"fps\":%15,"
             "\"render_p50_ms\":%16}")
      .arg(panel_->rendererName(), panel_->view()->glRenderer())
      .arg(s.z)
      .arg(s.y)
      .arg(s.x)
      .arg(panel_->volume()->bin)
      .arg(panel_->params().width)
      .arg(panel_->params().height)
      .arg(compute::volumeModeName(mode_))
      .arg(latency_.size())
      .arg(loadMs_, 0, 'f', 1)
      .arg(p50, 0, 'f', 3)
      .arg(percentile(latency_, 0.95), 0, 'f', 3)
      .arg(latency_.empty() ? 0 : *std::max_element(latency_.begin(), latency_.end()), 0, 'f', 3)
      .arg(p50 > 0 ? 1000 / p50 : 0, 0, 'f', 1)
      .arg(percentile(render_, 0.5), 0, 'f', 3);
}

}  // namespace stacklens::ui
