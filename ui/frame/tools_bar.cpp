// Only image HDUs are listed; the plane chooser shows only for files with a 4th axis.
#include "ui/frame/tools_bar.h"

#include <QActionGroup>
#include <QLabel>
#include <QSignalBlocker>
#include <algorithm>

namespace stacklens::ui {

using render::SliceView;

ToolsBar::ToolsBar(SliceView* view, QWidget* parent) : QToolBar(tr("Tools"), parent) {
  setObjectName("toolsBar");
  auto* group = new QActionGroup(this);
  const std::pair<QString, SliceView::Tool> toolList[] = {
      {tr("Pan"), SliceView::Tool::Pan},
      {tr("Line"), SliceView::Tool::Line},
      {tr("Rectangle"), SliceView::Tool::Rectangle},
      {tr("Ellipse"), SliceView::Tool::Ellipse}};
  for (const auto& [name, tool] : toolList) {
    QAction* a = addAction(name);
    a->setCheckable(true);
    a->setChecked(tool == SliceView::Tool::Pan);
    a->setToolTip(tool == SliceView::Tool::Pan
                      ? tr("Drag to pan, click to set the crosshair, wheel to zoom")
                      : tr("Drag to draw; middle button pans"));
    group->addAction(a);
    connect(a, &QAction::triggered, view, [view, t = tool] { view->setTool(t); });
  }
  addSeparator();
  addAction(tr("Fit"), view, &SliceView::fitToWindow);
  addAction(tr("1:1"), view, [view] { view->setZoom(1.0); });
  addSeparator();
  addWidget(new QLabel(tr(" HDU "), this));
  hdu_ = new QComboBox(this);
  hdu_->setEnabled(false);
  hdu_->setMinimumContentsLength(24);
  addWidget(hdu_);
  connect(hdu_, &QComboBox::activated, this,
          [this](int index) { emit hduChosen(hdu_->itemData(index).toInt()); });
  planeLabel_ = addWidget(new QLabel(tr(" plane "), this));
  plane_ = new QSpinBox(this);
  planeAction_ = addWidget(plane_);
  connect(plane_, &QSpinBox::valueChanged, this, &ToolsBar::planeChosen);
  planeLabel_->setVisible(false);
  planeAction_->setVisible(false);
}

void ToolsBar::showStack(const io::StackInfo& info) {
  {
    const QSignalBlocker block(hdu_);
    hdu_->clear();
    for (const auto& h : info.hdus) {
      if (h.axes.empty() || h.type.find("image") == std::string::npos) continue;
      QStringList axes;
      for (int64_t n : h.axes) axes << QString::number(n);
      const QString name = h.name.empty() ? QString() : " " + QString::fromStdString(h.name);
      hdu_->addItem(QString("%1%2 (%3)").arg(h.index).arg(name, axes.join("×")), h.index);
    }
    hdu_->setCurrentIndex(std::max(0, hdu_->findData(info.hdu)));
    hdu_->setEnabled(hdu_->count() > 1);
  }
  const QSignalBlocker block(plane_);
  plane_->setRange(0, static_cast<int>(std::max<int64_t>(1, info.planes) - 1));
  plane_->setValue(info.plane);
  planeLabel_->setVisible(info.planes > 1);
  planeAction_->setVisible(info.planes > 1);
}

}  // namespace stacklens::ui
