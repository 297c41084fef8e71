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

namespace stacklens::ui {

class PixelReadout : public QLabel {
  Q_OBJECT
 public:
  explicit PixelReadout(QWidget* parent = nullptr);

  void setStack(std::shared_ptr<const io::StackReader> reader);  // clears the slices and hover
  void setSlice(int z, render::SliceData raw);
  void setProcessed(int z, render::SliceData processed);
  void hover(QPointF imagePos);
  // A tool's text at the hovered point ("" for none), shown after the values.
  void addPart(std::function<QString(QPointF)> part) { parts_.push_back(std::move(part)); }
  void refresh();

 private:
  std::shared_ptr<const io::StackReader> reader_;
  io::StackInfo info_;
  int z_ = 0, processedZ_ = -1;
  render::SliceData raw_, processed_;
  std::optional<QPointF> hover_;
  std::vector<std::function<QString(QPointF)>> parts_;
};

}  // namespace stacklens::ui
