// A result whose generation is stale (a newer slice came) is dropped.
#include "ui/display/histogram_tool.h"

#include <QCheckBox>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace stacklens::ui {

HistogramTool::HistogramTool(QThreadPool* pool, QObject* parent)
    : QObject(parent), pool_(pool), box_(new QWidget) {
  auto* layout = new QVBoxLayout(box_);
  layout->setContentsMargins(2, 2, 2, 2);
  histogram_ = new HistogramWidget(box_);
  auto* logCounts = new QCheckBox(tr("Log counts"), box_);
  logCounts->setChecked(true);
  layout->addWidget(histogram_, 1);
  layout->addWidget(logCounts);
  connect(logCounts, &QCheckBox::toggled, histogram_, &HistogramWidget::setLogCounts);
  connect(histogram_, &HistogramWidget::limitsDragged, this, &HistogramTool::limitsDragged);
  rest_.setSingleShot(true);
  rest_.setInterval(250);
  connect(&rest_, &QTimer::timeout, this, &HistogramTool::update);
}

void HistogramTool::setDock(QDockWidget* dock) {
  dock_ = dock;
  connect(dock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible) update();
  });
}

void HistogramTool::sliceShown(const ShownSlice& shown) {
  slice_ = shown.data ? shown.data : shown.overview;
  rest_.start();
}

void HistogramTool::update() {
  if (!slice_ || (dock_ && !dock_->isVisible())) return;
  const quint64 generation = ++generation_;
  (void)QtConcurrent::run(pool_, [this, data = slice_, generation] {
    Histogram h = computeHistogram(data->data(), data->size());
    QMetaObject::invokeMethod(
        this,
        [this, h = std::move(h), generation]() mutable {
          if (generation != generation_) return;
          histogram_->setHistogram(std::move(h));
          emit updated();
        },
        Qt::QueuedConnection);
  });
}

}  // namespace stacklens::ui
