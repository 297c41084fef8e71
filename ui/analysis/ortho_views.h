// The XZ and YZ views through the crosshair and the z profile under it: the row and the column
// through the crosshair cut from every slice (cache first) on a worker, a newer crosshair
// cancelling the pass; while the slider moves the views' crosshairs follow the slice at most every
// kFollowIntervalMs, and land with the profile's marker when it rests.
#pragma once

#include <QDockWidget>
#include <QElapsedTimer>
#include <QObject>
#include <QPoint>
#include <QThreadPool>
#include <QTimer>
#include <atomic>
#include <memory>
#include <optional>

#include "io/stack.h"
#include "render/slice_view.h"
#include "ui/analysis/plot_widget.h"
#include "ui/frame/viewer_tool.h"

namespace stacklens::ui {

class OrthoViews : public QObject, public ViewerTool {
  Q_OBJECT
 public:
  // Each crosshair move of the ortho views is a frame of its own on the GUI thread.
  static constexpr qint64 kFollowIntervalMs = 40;

  // The views and the plot are made here; the window puts them in its docks. Reads run on pool.
  OrthoViews(QThreadPool* pool, QObject* parent = nullptr);
  ~OrthoViews() override;

  render::SliceView* xzView() const { return xz_; }
  render::SliceView* yzView() const { return yz_; }
  PlotWidget* zProfile() const { return zProfile_; }

  // The docks the window put the views and the plot in: shown for cubes only.
  struct Docks {
    QDockWidget *xz = nullptr, *yz = nullptr, *zProfile = nullptr;
  };
  void setDocks(Docks docks) { docks_ = docks; }

  // A new stack: the views cleared, their aspect and origin set from its spacing and format.
  void stackOpened(const OpenedStackView& stack) override;
  // The crosshair moved (null: none): the cut is made again.
  void setCrosshair(std::optional<QPoint> pixel, int z);
  // The slice shown changed (throttled while scrubbing).
  void sliceShown(const ShownSlice& slice) override;
  // With every slice cached, the z profile follows the mouse.
  void hover(QPointF imagePos, int z);
  void setDisplay(const render::DisplaySettings& display);
  // A running cut stops at its next slice and shows nothing (the window is closing).
  void cancel() { generation_->fetch_add(1); }

  void displayChanged(const render::DisplaySettings& display) override { setDisplay(display); }
  void pointerAt(QPointF imagePos, int z) override { hover(imagePos, z); }
  void crosshairMoved(QPoint pixel, int z, bool wholeSlices) override;
  void stop() override { cancel(); }

 signals:
  void updated();  // new cuts are in the views and the plot
  // A click in the XZ or YZ view: the crosshair and the slice it points at.
  void pointed(QPoint crosshair, int z);
  void failed(const QString& message);

 private:
  void placeCrosshairs();
  void cut();

  QThreadPool* pool_;
  Docks docks_;
  render::SliceView* xz_;
  render::SliceView* yz_;
  PlotWidget* zProfile_;
  std::shared_ptr<io::StackReader> reader_;
  std::shared_ptr<compute::SliceStore> slices_;
  io::StackInfo info_;
  std::optional<QPoint> crosshair_;
  int z_ = 0;
  std::shared_ptr<std::atomic<quint64>> generation_ = std::make_shared<std::atomic<quint64>>(0);
  QElapsedTimer clock_;
  qint64 lastFollowMs_ = -kFollowIntervalMs;
  QTimer rest_;
};

}  // namespace stacklens::ui
