// The frame's menus: the View menu's overlays carry object names that sessions find them by;
// places between the frame's actions take the tools' (MainWindow::addMenuAction).
#include "ui/frame/window_menus.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>

#include "render/slice_view.h"
#include "ui/display/view_decorations.h"
#include "ui/frame/navigation_bar.h"

namespace stacklens::ui {

using render::SliceView;

WindowMenus buildWindowMenus(QMainWindow* w, SliceView* view, ViewDecorations* decorations,
                             NavigationBar* nav) {
  // A place between two actions with no separator between them: an invisible marker.
  auto marker = [](QMenu* menu) {
    QAction* a = menu->addSeparator();
    a->setVisible(false);
    return a;
  };
  auto* file = w->menuBar()->addMenu(QObject::tr("&File"));
  QMenu* recent = file->addMenu(QObject::tr("Open &Recent"));
  QAction* afterInfo = file->addSeparator();
  QAction* afterExport = marker(file);
  QAction* afterSave = file->addSeparator();
  QAction* afterJobs = file->addSeparator();
  file->addAction(QObject::tr("&Quit"), QKeySequence::Quit, w, &QWidget::close);

  QMenu* edit = w->menuBar()->addMenu(QObject::tr("&Edit"));
  auto* viewMenu = w->menuBar()->addMenu(QObject::tr("&View"));
  viewMenu->addAction(QObject::tr("&Fit to window"), QKeySequence(Qt::Key_F), view,
                      &SliceView::fitToWindow);
  viewMenu->addAction(QObject::tr("&1:1"), QKeySequence(Qt::Key_1), w,
                      [view] { view->setZoom(1.0); });
  viewMenu->addAction(QObject::tr("Zoom &in"), QKeySequence::ZoomIn, w,
                      [view] { view->setZoom(view->zoom() * 1.25); });
  viewMenu->addAction(QObject::tr("Zoom &out"), QKeySequence::ZoomOut, w,
                      [view] { view->setZoom(view->zoom() / 1.25); });
  viewMenu->addSeparator();
  QAction* colorbar = viewMenu->addAction(QObject::tr("&Colorbar"));
  colorbar->setCheckable(true);
  colorbar->setObjectName("viewColorbar");  // sessions find it by name
  QObject::connect(colorbar, &QAction::toggled, w,
                   [decorations](bool on) { decorations->setColorbar(on); });
  QAction* compass = viewMenu->addAction(QObject::tr("Co&mpass (north and east)"));
  compass->setCheckable(true);
  compass->setObjectName("viewCompass");  // sessions find it by name
  QObject::connect(compass, &QAction::toggled, w,
                   [decorations](bool on) { decorations->setCompass(on); });
  QAction* scaleBar = viewMenu->addAction(QObject::tr("&Scale bar"));
  scaleBar->setCheckable(true);
  scaleBar->setObjectName("viewScaleBar");  // sessions find it by name
  QObject::connect(scaleBar, &QAction::toggled, w,
                   [decorations](bool on) { decorations->setScaleBar(on); });
  QAction* grid = viewMenu->addAction(QObject::tr("Coordinate &grid"));
  grid->setCheckable(true);
  grid->setObjectName("viewGrid");  // sessions find it by name
  QObject::connect(grid, &QAction::toggled, w,
                   [decorations](bool on) { decorations->setGrid(on); });
  QAction* afterPanels = viewMenu->addSeparator();
  for (QDockWidget* d : w->findChildren<QDockWidget*>()) viewMenu->addAction(d->toggleViewAction());

  QMenu* analysis = w->menuBar()->addMenu(QObject::tr("&Analysis"));
  auto* go = w->menuBar()->addMenu(QObject::tr("&Navigate"));
  auto add = [&](const QString& text, QKeySequence key, auto fn) {
    QAction* a = go->addAction(text, w, fn);
    a->setShortcut(key);
    a->setShortcutContext(Qt::WindowShortcut);
  };
  add(QObject::tr("Previous slice"), QKeySequence(Qt::Key_Left), [nav] { nav->step(-1); });
  add(QObject::tr("Next slice"), QKeySequence(Qt::Key_Right), [nav] { nav->step(1); });
  add(QObject::tr("Back 10 slices"), QKeySequence(Qt::Key_PageUp), [nav] { nav->step(-10); });
  add(QObject::tr("Forward 10 slices"), QKeySequence(Qt::Key_PageDown), [nav] { nav->step(10); });
  add(QObject::tr("First slice"), QKeySequence(Qt::Key_Home), [nav] { nav->setValue(0); });
  add(QObject::tr("Last slice"), QKeySequence(Qt::Key_End),
      [nav] { nav->setValue(nav->count() - 1); });
  add(QObject::tr("Play / pause"), QKeySequence(Qt::Key_Space),
      [nav] { nav->setPlaying(!nav->playing()); });

  WindowMenus menus{file, recent, edit, analysis, {}};
  auto place = [&menus](MenuPlace p) -> WindowMenus::Place& { return menus.places[size_t(p)]; };
  place(MenuPlace::FileOpen) = {file, recent->menuAction()};
  place(MenuPlace::FileInfo) = {file, afterInfo};
  place(MenuPlace::FileExport) = {file, afterExport};
  place(MenuPlace::FileSave) = {file, afterSave};
  place(MenuPlace::FileJobs) = {file, afterJobs};
  place(MenuPlace::ViewPanels) = {viewMenu, afterPanels};
  return menus;
}

}  // namespace stacklens::ui
