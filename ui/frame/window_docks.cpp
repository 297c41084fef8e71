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

WindowDocks buildWindowDocks(QMainWindow* window, render::SliceView* view, QThreadPool* pool,
                             const DockRequests& requests) {
  auto dock = [window](const QString& title, const QString& name, QWidget* content,
                       Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, window);
    d->setObjectName(name);
    d->setWidget(content);
    window->addDockWidget(area, d);
    return d;
  };
  auto* display = new DisplayPanel(window);
  dock(QObject::tr("Display"), "displayDock", display, Qt::RightDockWidgetArea);

  auto* histogram = new HistogramTool(pool, window);
  histogram->setDock(dock(QObject::tr("Histogram"), "histogramDock", histogram->widget(),
                          Qt::RightDockWidgetArea));
  QObject::connect(histogram, &HistogramTool::limitsDragged, display,
                   [display](double low, double high) {
                     display->setManualLimits({float(low), float(high)});
                   });

  auto* region = new RegionStatsTool(view, window);
  QDockWidget* regionDock = dock(QObject::tr("Region statistics"), "regionDock", region->label(),
                                 Qt::RightDockWidgetArea);
  region->setDock(regionDock);

  auto* ortho = new OrthoViews(pool, window);
  QWidget* xzBox = embedView(ortho->xzView(), window);
  QWidget* yzBox = embedView(ortho->yzView(), window);
  xzBox->setMinimumSize(160, 120);
  yzBox->setMinimumSize(120, 160);
  QDockWidget* xzDock =
      dock(QObject::tr("XZ at crosshair"), "xzDock", xzBox, Qt::BottomDockWidgetArea);
  QDockWidget* yzDock =
      dock(QObject::tr("YZ at crosshair"), "yzDock", yzBox, Qt::LeftDockWidgetArea);
  QObject::connect(ortho, &OrthoViews::pointed, window, requests.point);
  QObject::connect(ortho, &OrthoViews::failed, window,
                   [report = requests.reportError](const QString& why) {
                     report(QObject::tr("Cannot build the orthogonal views"), why);
                   });

  auto* line = new LineProfileTool(view, window);
  QDockWidget* lineDock =
      dock(QObject::tr("Line profile"), "lineProfileDock", line->plot(), Qt::RightDockWidgetArea);
  line->setDock(lineDock);
  QDockWidget* zDock = dock(QObject::tr("Z profile at cursor"), "zProfileDock", ortho->zProfile(),
                            Qt::RightDockWidgetArea);
  ortho->setDocks({xzDock, yzDock, zDock});
  window->tabifyDockWidget(regionDock, lineDock);
  window->tabifyDockWidget(lineDock, zDock);
  zDock->raise();
  window->resizeDocks({xzDock}, {230}, Qt::Vertical);
  window->resizeDocks({yzDock}, {230}, Qt::Horizontal);
  return {display, {histogram, line, region, ortho}};
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

void restoreWindowLayout(QMainWindow* window, const ViewerSettings& settings) {
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
  QTimer::singleShot(0, window, [window] {
    auto* displayDock = window->findChild<QDockWidget*>("displayDock");
    auto* histogramDock = window->findChild<QDockWidget*>("histogramDock");
    auto* xzDock = window->findChild<QDockWidget*>("xzDock");
    if (displayDock && histogramDock)
      window->resizeDocks({displayDock, histogramDock}, {190, 150}, Qt::Vertical);
    if (xzDock) {
      window->resizeDocks({xzDock}, {230}, Qt::Vertical);
      window->resizeDocks({xzDock}, {320}, Qt::Horizontal);
    }
  });
}

}  // namespace stacklens::ui
