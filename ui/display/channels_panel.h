// View ▸ Channels: a composite of 2–6 channels blended additively in the main view (Fiji's
// Composite, DS9's RGB frame): planes of a hyperstack (a 4th axis), other HDUs of the same file
// of the same size, or other files of the same slice size, each with its own colormap, limits
// and visibility, following the z slider. Channels open and read on a worker; the readout gives
// every channel's value under the cursor.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QPointF>
#include <QThreadPool>
#include <QWidget>
#include <memory>
#include <vector>

#include "io/stack.h"
#include "render/composite_layer.h"
#include "render/slice_view.h"

namespace stacklens::ui {

class ChannelsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ChannelsPanel(render::SliceView* view, QWidget* parent = nullptr);
  ~ChannelsPanel() override;

  // The open stack: its planes (or else its other HDUs of the same shape) become the channels
  // on offer, the first of them (up to six) the channels.
  void setStack(std::shared_ptr<const io::StackReader> reader);
  // Adds a channel: plane `plane` of HDU `hdu` of path (-1: the first image HDU). Its slices
  // must be the stack's size; the reason goes to the status line otherwise.
  void addChannel(const QString& path, int hdu, int plane);
  void removeChannel(int index);
  void setBlending(bool on);  // blend in the main view, or show the slice again
  bool blending() const { return on_->isChecked(); }
  void showSlice(int z);  // the channels' slice z, read on the worker
  // "name value" for each channel at an image pixel (empty when off or outside).
  QString readout(QPointF imagePos) const;
  // Scripted use: one channel's settings.
  void setChannel(int index, const QString& colormap, float low, float high, bool visible);
  const std::vector<render::CompositeChannel>& channels() const { return shown_; }
  int channelCount() const { return int(channels_.size()); }
  QString status() const { return status_->text(); }

 signals:
  void compositeShown(int z);  // every channel's slice z is in the view
  void addFileRequested();     // "Add file…" (the window asks for a name)

 private:
  struct Channel {
    std::shared_ptr<const io::StackReader> reader;
    render::CompositeChannel look;  // data: the slice shown
    bool limitsSet = false;
  };
  void rebuildRows();
  void apply();  // the channels' looks to the view

  render::SliceView* view_;
  QCheckBox* on_;
  QGridLayout* rows_;
  QWidget* rowsHolder_;
  QComboBox* offer_;
  QLabel* status_;
  QThreadPool pool_;
  std::shared_ptr<const io::StackReader> stack_;
  std::vector<Channel> channels_;
  std::vector<render::CompositeChannel> shown_;
  int z_ = 0;
  quint64 generation_ = 0;       // slices read for an older request are dropped
  quint64 stackGeneration_ = 0;  // channels opened for an older stack are dropped
};

}  // namespace stacklens::ui
