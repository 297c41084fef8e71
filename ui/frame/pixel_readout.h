// The status bar's readout of the pixel under the mouse: x, y, z, the raw value, the processed
// value when the processed slice is the one shown, what tools add (other channels' values), and
// the sky position from the WCS.
#pragma once

#include <QLabel>
#include <QPointF>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "io/stack.h"
#include "render/slice_view.h"
#include "ui/frame/viewer_tool.h"

namespace stacklens::ui {

class PixelReadout : public QLabel, public ViewerTool {
  Q_OBJECT
 public:
  explicit PixelReadout(QWidget* parent = nullptr);
  // The open stack's shape, type and format, for the status bar's right end.
  QLabel* shapeLabel() const { return shape_; }

  void stackOpened(const OpenedStackView& stack) override;  // clears the slices and hover
  void sliceShown(const ShownSlice& slice) override;
  void setProcessed(int z, render::SliceData processed);
  void hover(QPointF imagePos);
  void pointerAt(QPointF imagePos, int) override { hover(imagePos); }
  // A tool's text at the hovered point ("" for none), shown after the values.
  void addPart(std::function<QString(QPointF)> part) { parts_.push_back(std::move(part)); }
  void refresh();

 private:
  // A plane shown from display levels: the value under the mouse is read from the file, one
  // pixel, on a worker; an older pixel's read is dropped.
  QString lazyValue(int x, int y);

  QLabel* shape_;
  std::shared_ptr<const io::StackReader> reader_;
  bool lazy_ = false;
  struct Probe {
    int x = -1, y = -1, z = -1;
    std::optional<float> value;
    QString error;
  } probe_;
  quint64 probeGeneration_ = 0;
  io::StackInfo info_;
  int z_ = 0, processedZ_ = -1;
  render::SliceData raw_, processed_;
  std::optional<QPointF> hover_;
  std::vector<std::function<QString(QPointF)>> parts_;
};

}  // namespace stacklens::ui
