// The slider's index goes to request(), and the slice read for it to the view and the tools from
// here; the window only wired the parts together.
#include "ui/frame/slice_path.h"

#include "ui/display/display_panel.h"
#include "ui/display/level_view.h"
#include "ui/frame/navigation_bar.h"
#include "ui/stack/slice_fetcher.h"
#include "ui/stack/stack_opener.h"

namespace stacklens::ui {

SlicePath::SlicePath(const Parts& parts, QObject* parent)
    : QObject(parent),
      view_(parts.view),
      navigation_(parts.navigation),
      display_(parts.display),
      tools_(*parts.tools) {
  levels_ = new LevelView(view_, parts.pool, this);
  connect(levels_, &LevelView::readFailed, this,
          [this](const QString& why) { emit readFailed(tr("Cannot read the plane"), why); });
  source_ = new SliceFetcher(parts.pool, this);
  connect(source_, &SliceFetcher::readFailed, this, [this](int z, const QString& why) {
    emit readFailed(tr("Cannot read slice %1").arg(z), why);
  });
}

void SlicePath::setStack(const OpenedStack& opened) {
  reader_ = opened.reader;
  info_ = reader_->info();
  const int z = opened.z;
  levels_->setStack(opened.levels, int(info_.x), int(info_.y));
  overview_.reset();
  source_->setStack(reader_, rawSliceBudget_, z, opened.slice);
  ++generation_;
  limitsValid_ = false;
  view_->clearSlice();
  // The tools take their raw slices from the same store, under the same budget.
  for (ViewerTool* tool : tools_) tool->stackOpened({reader_, source_->store()});
  if (!levels_->active())
    for (ViewerTool* tool : tools_) tool->sliceRequested(z);
  // FITS images have their first row at the bottom; microscopy TIFFs at the top.
  view_->setOriginBottom(info_.format == "fits");
  {
    const QSignalBlocker block(navigation_);
    navigation_->setCount(static_cast<int>(info_.z));
    navigation_->setValue(z);
  }
  view_->fitToWindow();
  currentZ_ = requestedZ_ = z;
  if (levels_->active())
    showLevelSlice(z, opened.coarse);
  else
    showSlice(z, opened.slice);
}

void SlicePath::request(int z) {
  if (!reader_) return;
  // Slices are requested whole only where planes are read whole.
  if (!levels_->active())
    for (ViewerTool* tool : tools_) tool->sliceRequested(z);
  emit sliceRequested(z);
  requestedZ_ = z;
  const quint64 generation = ++generation_;
  if (levels_->active()) {
    updateWorldLabel();
    levels_->fetch(z, [this, z, generation](render::LevelPatch coarse) {
      if (generation == generation_) showLevelSlice(z, coarse);
    });
    return;
  }
  if (!source_->store()->contains(z)) updateWorldLabel();  // the label leads while it reads
  source_->fetch(z, [this, z, generation](SliceData s) {
    if (generation == generation_ && s) showSlice(z, std::move(s));
  });
  source_->prefetchAround(z);  // the next slices read while this one is read and shown
}

void SlicePath::showSlice(int z, SliceData data) {
  currentZ_ = requestedZ_ = z;
  current_ = std::move(data);
  const int width = static_cast<int>(info_.x), height = static_cast<int>(info_.y);
  const ShownSlice shown{z, current_, width, height, overview_};
  if (std::none_of(tools_.begin(), tools_.end(),
                   [&shown](ViewerTool* tool) { return tool->holdSlice(shown); }))
    view_->setSlice(current_, width, height);
  limitsOnFirstSlice();
  updateWorldLabel();
  tellToolsShown(z);
  source_->prefetchAround(z);
  emit sliceShown(z);
}

void SlicePath::showLevelSlice(int z, const render::LevelPatch& coarse) {
  currentZ_ = requestedZ_ = z;
  current_.reset();
  overview_ = coarse.pixels;
  levels_->show(z, coarse);
  limitsOnFirstSlice();  // from the coarse level
  updateWorldLabel();
  tellToolsShown(z);
  emit sliceShown(z);
}

// While scrubbing, the histogram, line profile and region statistics wait until the slider
// rests.
void SlicePath::tellToolsShown(int z) {
  const int width = static_cast<int>(info_.x), height = static_cast<int>(info_.y);
  for (ViewerTool* tool : tools_) tool->sliceShown({z, current_, width, height, overview_});
}

// A new stack's display limits come from its first slice shown, in the panel's mode.
void SlicePath::limitsOnFirstSlice() {
  if (limitsValid_) return;
  limitsValid_ = true;
  showLimits(display_->limitsMode());
}

void SlicePath::showLimits(render::LimitsMode mode) {
  const SliceData& from = current_ ? current_ : overview_;
  if (mode == render::LimitsMode::Manual || !from) return;
  display_->showLimits(render::sliceLimits(mode, from->data(), from->size()));
}

void SlicePath::updateWorldLabel() {
  navigation_->setWorldText(
      NavigationBar::worldText(info_, reader_ ? reader_->wcs() : nullptr, requestedZ_));
}

void SlicePath::preload(int count) {
  if (!reader_) return;
  source_->preload(count, [this](const QString& error) {
    if (!error.isEmpty()) emit readFailed(tr("Cannot read the stack"), error);
    emit preloaded();
  });
}

void SlicePath::stop() { source_->stop(); }

bool SlicePath::wholeSlices() const { return !levels_->active(); }

compute::SliceStore* SlicePath::slices() const { return source_->store().get(); }

}  // namespace stacklens::ui
