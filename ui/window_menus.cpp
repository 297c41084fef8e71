// The actions call the window's public operations; the View menu's overlays carry object names
// that sessions find them by.
#include "ui/window_menus.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>

#include "ui/file_choosers.h"
#include "ui/main_window.h"
#include "ui/navigation_bar.h"
#include "ui/view_decorations.h"

namespace stacklens::ui {

using render::SliceView;

WindowMenus buildWindowMenus(MainWindow* w) {
  auto* file = w->menuBar()->addMenu(QObject::tr("&File"));
  file->addAction(QObject::tr("&Open…"), QKeySequence::Open, w, [w] { chooseStackToOpen(w); });
  file->addAction(QObject::tr("Open &folder (Zarr)…"), QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_O),
                  w, [w] { chooseFolderToOpen(w); });
  file->addAction(QObject::tr("Open &URL…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), w,
                  [w] { chooseUrlToOpen(w); });
  QMenu* recent = file->addMenu(QObject::tr("Open &Recent"));
  file->addAction(QObject::tr("&Header…"), QKeySequence(Qt::CTRL | Qt::Key_H), w,
                  &MainWindow::showHeader);
  file->addSeparator();
  file->addAction(QObject::tr("&Export view as PNG…"), QKeySequence(Qt::CTRL | Qt::Key_E), w,
                  [w] { chooseWhereToExport(w, false); });
  file->addAction(QObject::tr("Export view with &colorbar…"), w,
                  [w] { chooseWhereToExport(w, true); });
  file->addAction(QObject::tr("Export &movie…"), w, &MainWindow::exportMovie);
  file->addAction(QObject::tr("Save &slice as…"), QKeySequence::Save, w,
                  [w] { chooseWhereToSave(w, false); });
  file->addAction(QObject::tr("Save s&tack as…"), QKeySequence::SaveAs, w,
                  [w] { chooseWhereToSave(w, true); });
  file->addSeparator();
  file->addAction(QObject::tr("&Process whole stack…"),
                  QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), w,
                  &MainWindow::processWholeStack);
  file->addAction(QObject::tr("Z projection / &moment map…"),
                  QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M), w, &MainWindow::projectStack);
  file->addSeparator();
  file->addAction(QObject::tr("&Quit"), QKeySequence::Quit, w, &QWidget::close);

  QMenu* edit = w->menuBar()->addMenu(QObject::tr("&Edit"));
  auto* viewMenu = w->menuBar()->addMenu(QObject::tr("&View"));
  viewMenu->addAction(QObject::tr("&Fit to window"), QKeySequence(Qt::Key_F), w->sliceView(),
                      &SliceView::fitToWindow);
  viewMenu->addAction(QObject::tr("&1:1"), QKeySequence(Qt::Key_1), w,
                      [w] { w->sliceView()->setZoom(1.0); });
  viewMenu->addAction(QObject::tr("Zoom &in"), QKeySequence::ZoomIn, w,
                      [w] { w->sliceView()->setZoom(w->sliceView()->zoom() * 1.25); });
  viewMenu->addAction(QObject::tr("Zoom &out"), QKeySequence::ZoomOut, w,
                      [w] { w->sliceView()->setZoom(w->sliceView()->zoom() / 1.25); });
  viewMenu->addSeparator();
  QAction* colorbar = viewMenu->addAction(QObject::tr("&Colorbar"));
  colorbar->setCheckable(true);
  colorbar->setObjectName("viewColorbar");  // sessions find it by name
  QObject::connect(colorbar, &QAction::toggled, w,
                   [w](bool on) { w->decorations()->setColorbar(on); });
  QAction* compass = viewMenu->addAction(QObject::tr("Co&mpass (north and east)"));
  compass->setCheckable(true);
  compass->setObjectName("viewCompass");  // sessions find it by name
  QObject::connect(compass, &QAction::toggled, w,
                   [w](bool on) { w->decorations()->setCompass(on); });
  QAction* scaleBar = viewMenu->addAction(QObject::tr("&Scale bar"));
  scaleBar->setCheckable(true);
  scaleBar->setObjectName("viewScaleBar");  // sessions find it by name
  QObject::connect(scaleBar, &QAction::toggled, w,
                   [w](bool on) { w->decorations()->setScaleBar(on); });
  QAction* grid = viewMenu->addAction(QObject::tr("Coordinate &grid"));
  grid->setCheckable(true);
  grid->setObjectName("viewGrid");  // sessions find it by name
  QObject::connect(grid, &QAction::toggled, w, [w](bool on) { w->decorations()->setGrid(on); });
  viewMenu->addAction(QObject::tr("&3D view"), QKeySequence(Qt::CTRL | Qt::Key_3), w,
                      &MainWindow::showVolumeView);
  viewMenu->addAction(QObject::tr("C&hannels (composite)"), QKeySequence(Qt::CTRL | Qt::Key_K), w,
                      &MainWindow::showChannels);
  viewMenu->addAction(QObject::tr("Con&tours"), w, &MainWindow::showContours);
  viewMenu->addSeparator();
  for (QDockWidget* d : w->findChildren<QDockWidget*>()) viewMenu->addAction(d->toggleViewAction());

  QMenu* analysis = w->menuBar()->addMenu(QObject::tr("&Analysis"));
  auto* go = w->menuBar()->addMenu(QObject::tr("&Navigate"));
  auto add = [&](const QString& text, QKeySequence key, auto fn) {
    QAction* a = go->addAction(text, w, fn);
    a->setShortcut(key);
    a->setShortcutContext(Qt::WindowShortcut);
  };
  add(QObject::tr("Previous slice"), QKeySequence(Qt::Key_Left),
      [w] { w->navigation()->step(-1); });
  add(QObject::tr("Next slice"), QKeySequence(Qt::Key_Right), [w] { w->navigation()->step(1); });
  add(QObject::tr("Back 10 slices"), QKeySequence(Qt::Key_PageUp),
      [w] { w->navigation()->step(-10); });
  add(QObject::tr("Forward 10 slices"), QKeySequence(Qt::Key_PageDown),
      [w] { w->navigation()->step(10); });
  add(QObject::tr("First slice"), QKeySequence(Qt::Key_Home),
      [w] { w->navigation()->setValue(0); });
  add(QObject::tr("Last slice"), QKeySequence(Qt::Key_End),
      [w] { w->navigation()->setValue(w->navigation()->count() - 1); });
  add(QObject::tr("Play / pause"), QKeySequence(Qt::Key_Space),
      [w] { w->navigation()->setPlaying(!w->navigation()->playing()); });

  return {file, recent, edit, analysis};
}

}  // namespace stacklens::ui
