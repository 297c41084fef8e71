// What the viewer's undo steps hold: display settings (limits only when set by hand: computed ones
// follow the slice) and the pipeline with its PSF and the PSF's name.
#include "ui/state/history_tool.h"

#include <QAction>
#include <QMenu>

#include "compute/pipeline.h"
#include "ui/analysis/regions_panel.h"
#include "ui/display/display_panel.h"
#include "ui/frame/main_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/processing_dock.h"

namespace stacklens::ui {
namespace {

struct DisplayState {
  render::DisplaySettings settings;
  render::LimitsMode mode = render::LimitsMode::P99_5;
};

bool sameDisplay(const DisplayState& a, const DisplayState& b) {
  const render::DisplaySettings &s = a.settings, &t = b.settings;
  const bool manual = a.mode == render::LimitsMode::Manual;
  return a.mode == b.mode && s.colormap == t.colormap && s.scale == t.scale &&
         s.exponent == t.exponent && s.invert == t.invert && s.nanColour == t.nanColour &&
         s.smooth == t.smooth &&
         (!manual || (s.limits.low == t.limits.low && s.limits.high == t.limits.high));
}

struct PipelineState {
  compute::Pipeline pipeline;
  QString psfName, psfFile;
};

void followDisplay(SettingsHistory* history, DisplayPanel* display) {
  const int id = history->follow<DisplayState>(
      QObject::tr("display settings"),
      [display] {
        return DisplayState{display->settings(), display->limitsMode()};
      },
      [display](const DisplayState& s) { display->setSettings(s.settings, s.mode); }, sameDisplay);
  QObject::connect(display, &DisplayPanel::displayChanged, history,
                   [history, id] { history->changed(id); });
  QObject::connect(display, &DisplayPanel::limitsModeChanged, history,
                   [history, id] { history->changed(id); });
}

void followPipeline(SettingsHistory* history, ProcessingDock* dock) {
  const int id = history->follow<PipelineState>(
      QObject::tr("processing settings"),
      [dock] {
        return PipelineState{dock->pipeline(), dock->psfName(), dock->psfFile()};
      },
      [dock](const PipelineState& s) { dock->setPipeline(s.pipeline, s.psfName, s.psfFile); },
      [](const PipelineState& a, const PipelineState& b) {
        return a.psfName == b.psfName && a.pipeline.fingerprint() == b.pipeline.fingerprint();
      });
  QObject::connect(dock, &ProcessingDock::pipelineChanged, history,
                   [history, id] { history->changed(id); });
}

}  // namespace

void followRegions(SettingsHistory* history, RegionsPanel* regions) {
  using Regions = std::vector<io::PixelRegion>;
  const int id = history->follow<Regions>(
      QObject::tr("region edit"), [regions] { return regions->regions(); },
      [regions](const Regions& r) { regions->setRegions(r); },
      // The DS9 text holds every field a region is drawn and saved with.
      [](const Regions& a, const Regions& b) {
        return a.size() == b.size() && io::ds9RegionText(a) == io::ds9RegionText(b);
      },
      /*merge=*/false);
  QObject::connect(regions, &RegionsPanel::regionsEdited, history,
                   [history, id](const QString& what) { history->changed(id, what); });
}

SettingsHistory* installHistory(MainWindow* window) {
  if (auto* existing = window->findChild<SettingsHistory*>()) return existing;
  auto* history = new SettingsHistory(window);
  followDisplay(history, window->displayPanel());
  followPipeline(history, window->tool<LiveProcessing>()->dock());

  QAction* undo = history->undoStack()->createUndoAction(window, QObject::tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  QAction* redo = history->undoStack()->createRedoAction(window, QObject::tr("&Redo"));
  redo->setShortcuts(
      {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
  QMenu* edit = window->editMenu();
  edit->insertActions(edit->actions().value(0), {undo, redo});
  if (edit->actions().size() > 2) edit->insertSeparator(edit->actions().value(2));
  // Queued: after the tools have followed the new stack (regions placed through its WCS).
  QObject::connect(window, &MainWindow::stackOpened, history, &SettingsHistory::restart,
                   Qt::QueuedConnection);
  return history;
}

}  // namespace stacklens::ui
