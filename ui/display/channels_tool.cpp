// The panel follows the window's stack and the slice asked for (not the one shown: its own reads
// start as the slider moves).
#include "ui/display/channels_tool.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>

#include "ui/display/channels_panel.h"
#include "ui/frame/main_window.h"
#include "ui/frame/pixel_readout.h"

namespace stacklens::ui {

ChannelsPanel* showChannels(MainWindow* window) {
  auto* panel = window->findChild<ChannelsPanel*>();
  if (!panel) {
    panel = new ChannelsPanel(window->sliceView());
    auto* dock = new QDockWidget(QObject::tr("Channels"), window);
    dock->setObjectName("channelsDock");
    dock->setWidget(panel);
    window->addDockWidget(Qt::RightDockWidgetArea, dock);
    if (auto* display = window->findChild<QDockWidget*>("displayDock"))
      window->tabifyDockWidget(display, dock);
    QObject::connect(panel, &ChannelsPanel::addFileRequested, window, [window, panel] {
      const QString path = QFileDialog::getOpenFileName(
          window, QObject::tr("Add a channel from"), QFileInfo(window->filePath()).absolutePath(),
          QObject::tr("Images (*.fits *.fit *.fts *.fz *.gz *.tif *.tiff)"));
      if (!path.isEmpty()) panel->addChannel(path, -1, 0);
    });
    PixelReadout* readout = window->tool<PixelReadout>();
    QObject::connect(panel, &ChannelsPanel::compositeShown, readout, &PixelReadout::refresh);
    QObject::connect(window, &MainWindow::stackInstalled, panel,
                     [window, panel] { panel->setStack(window->sharedStack()); });
    QObject::connect(window->slicePath(), &SlicePath::sliceRequested, panel,
                     &ChannelsPanel::showSlice);
    QPointer<ChannelsPanel> alive(panel);
    readout->addPart([alive](QPointF at) { return alive ? alive->readout(at) : QString(); });
    panel->setStack(window->sharedStack());
    panel->showSlice(window->slicePath()->currentZ());
  }
  if (auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget())) {
    dock->show();
    dock->raise();
  }
  panel->setBlending(true);
  return panel;
}

}  // namespace stacklens::ui
