// Building and laying out the main window's docks.
#include "ui/frame/window_docks.h"

#include <QGuiApplication>
#include <QScreen>
#include <QTimer>

#include "ui/analysis/line_profile_tool.h"
#include "ui/analysis/ortho_views.h"
#include "ui/analysis/region_stats_tool.h"
#include "ui/display/display_panel.h"
#include "ui/display/histogram_tool.h"

namespace stacklens::ui {

QWidget* embedView(render::SliceView* view, QWidget* parent) {
  QWidget* box = QWidget::createWindowContainer(view, parent);
  box->setFocusPolicy(Qt::NoFocus);
  return box;
}

WindowDocks buildWindowDocks(QMainWindow* window, render::SliceView* view, QThreadPool* pool) {
  auto dock = [window](const QString& title, const QString& name, QWidget* content,
                       Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, window);
    d->setObjectName(name);
    d->setWidget(content);
    window->addDockWidget(area, d);
    return d;
  };
  WindowDocks docks;
  docks.display = new DisplayPanel(window);
  dock(QObject::tr("Display"), "displayDock", docks.display, Qt::RightDockWidgetArea);

  docks.histogram = new HistogramTool(pool, window);
  docks.histogramDock = dock(QObject::tr("Histogram"), "histogramDock", docks.histogram->widget(),
                             Qt::RightDockWidgetArea);
  docks.histogram->setDock(docks.histogramDock);

  docks.region = new RegionStatsTool(view, window);
  QDockWidget* regionDock = dock(QObject::tr("Region statistics"), "regionDock",
                                 docks.region->label(), Qt::RightDockWidgetArea);

  docks.ortho = new OrthoViews(pool, window);
  QWidget* xzBox = embedView(docks.ortho->xzView(), window);
  QWidget* yzBox = embedView(docks.ortho->yzView(), window);
  xzBox->setMinimumSize(160, 120);
  yzBox->setMinimumSize(120, 160);
  docks.xzDock = dock(QObject::tr("XZ at crosshair"), "xzDock", xzBox, Qt::BottomDockWidgetArea);
  docks.yzDock = dock(QObject::tr("YZ at crosshair"), "yzDock", yzBox, Qt::LeftDockWidgetArea);

  docks.line = new LineProfileTool(view, window);
  QDockWidget* lineDock = dock(QObject::tr("Line profile"), "lineProfileDock", docks.line->plot(),
                               Qt::RightDockWidgetArea);
  QDockWidget* zDock = dock(QObject::tr("Z profile at cursor"), "zProfileDock",
                            docks.ortho->zProfile(), Qt::RightDockWidgetArea);
  window->tabifyDockWidget(regionDock, lineDock);
  window->tabifyDockWidget(lineDock, zDock);
  zDock->raise();
  window->resizeDocks({docks.xzDock}, {230}, Qt::Vertical);
  window->resizeDocks({docks.yzDock}, {230}, Qt::Horizontal);
  return docks;
}

// The right column takes the full height, and processing joins its analysis tabs: one above
// another it got 60 pixels and a scroll bar. The bottom row (XZ, timings) stays low so that the
// slice view keeps most of the height.
void arrangeDefaultLayout(QMainWindow* window) {
  window->setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
  auto* zDock = window->findChild<QDockWidget*>("zProfileDock");
  auto* processing = window->findChild<QDockWidget*>("processingDock");
  if (zDock && processing) window->tabifyDockWidget(zDock, processing);
  if (zDock) zDock->raise();
}

void restoreWindowLayout(QMainWindow* window, const ViewerSettings& settings,
                         const WindowDocks& docks) {
  // On a 1280-wide screen 1400 pixels cut off the docks.
  QSize size(1400, 940);
  if (QScreen* screen = QGuiApplication::primaryScreen())
    size = size.boundedTo(screen->availableGeometry().size() * 0.95);
  window->resize(size);
  if (!settings.geometry.isEmpty()) window->restoreGeometry(settings.geometry);
  if (!settings.windowState.isEmpty()) {
    window->restoreState(settings.windowState);
    return;
  }
  // Dock sizes take effect once the window is laid out, hence after the first show.
  QTimer::singleShot(0, window, [window, docks] {
    if (auto* displayDock = window->findChild<QDockWidget*>("displayDock"))
      window->resizeDocks({displayDock, docks.histogramDock}, {190, 150}, Qt::Vertical);
    window->resizeDocks({docks.xzDock}, {230}, Qt::Vertical);
    window->resizeDocks({docks.xzDock}, {320}, Qt::Horizontal);
  });
}

}  // namespace stacklens::ui
