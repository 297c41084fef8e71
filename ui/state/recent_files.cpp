// The Open Recent menu and the settings it keeps.
#include "ui/state/recent_files.h"

#include <QFileInfo>

#include "io/zarr_store.h"

namespace stacklens::ui {

RecentFiles::RecentFiles(QMenu* menu, ViewerSettings* settings, QObject* parent)
    : QObject(parent), menu_(menu), settings_(settings) {}

void RecentFiles::remember(const QString& path) {
  if (io::isHttpUrl(path.toStdString())) {  // kept as typed; the file dialogs' folder stays
    settings_->addRecent(path);
  } else {
    settings_->addRecent(QFileInfo(path).absoluteFilePath());
    settings_->lastFolder = QFileInfo(path).absolutePath();
  }
  rebuild();
}

void RecentFiles::rebuild() {
  menu_->clear();
  for (const QString& path : settings_->recentFiles)
    menu_->addAction(path, this, [this, path] { emit chosen(path); });
  menu_->setEnabled(!settings_->recentFiles.isEmpty());
}

}  // namespace stacklens::ui
