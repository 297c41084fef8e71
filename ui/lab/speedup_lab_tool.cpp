// Tools ▸ Speedup lab… (see speedup_lab_tool.h).
#include "ui/lab/speedup_lab_tool.h"

#include <QMenuBar>
#include <QPointer>
#include <algorithm>

#include "ui/frame/main_window.h"
#include "ui/lab/speedup_lab_window.h"
#include "ui/live/live_processing.h"
#include "ui/live/timing_panel.h"

namespace stacklens::ui {
namespace {

QMenu* toolsMenu(MainWindow* window) {
  for (QAction* a : window->menuBar()->actions())
    if (a->menu() && a->text().remove('&') == QObject::tr("Tools")) return a->menu();
  return window->menuBar()->addMenu(QObject::tr("&Tools"));
}

// The shown slice as a host image (empty when none is open).
compute::Image shownSlice(MainWindow* window) {
  const SliceData slice = window->slicePath()->currentSlice();
  const auto& info = window->info();
  if (!slice || int64_t(slice->size()) != info.y * info.x || slice->empty()) return {};
  compute::Image im = compute::Image::host({1, info.y, info.x});
  std::copy(slice->begin(), slice->end(), im.data());
  return im;
}

}  // namespace

void installSpeedupLab(MainWindow* window) {
  auto lab = std::make_shared<QPointer<SpeedupLabWindow>>();
  QMenu* tools = toolsMenu(window);
  QAction* action = tools->addAction(QObject::tr("&Speedup lab…"));
  action->setObjectName(QStringLiteral("speedupLabAction"));
  // One switch for the lecture: the timing panel and the lab together.
  QAction* present = tools->addAction(QObject::tr("&Presentation mode"));
  present->setObjectName(QStringLiteral("presentationModeAction"));
  present->setCheckable(true);
  QObject::connect(present, &QAction::toggled, window, [window, lab](bool on) {
    window->tool<LiveProcessing>()->timingPanel()->setPresentation(on);
    if (*lab) (*lab)->setPresentation(on);
  });
  QObject::connect(action, &QAction::triggered, window, [window, lab, present] {
    if (!*lab) {
      *lab = new SpeedupLabWindow(window);
      (*lab)->setWindowFlag(Qt::Window);
      (*lab)->setSliceProvider([window] { return shownSlice(window); });
      (*lab)->setPresentation(present->isChecked());
      QObject::connect(*lab, &SpeedupLabWindow::presentationChanged, present, &QAction::setChecked);
    }
    (*lab)->show();
    (*lab)->raise();
    (*lab)->activateWindow();
  });
}

}  // namespace stacklens::ui
