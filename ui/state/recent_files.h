// File ▸ Open Recent: the files, folders and URLs opened lately, newest first, kept in the viewer's
// settings with the folder that file dialogs start in.
#pragma once

#include <QMenu>
#include <QObject>

#include "ui/state/viewer_settings.h"

namespace stacklens::ui {

class RecentFiles : public QObject {
  Q_OBJECT
 public:
  // settings must outlive this object (it is the window's).
  RecentFiles(QMenu* menu, ViewerSettings* settings, QObject* parent = nullptr);
  void remember(const QString& path);
  void rebuild();  // the menu again from the settings (after they were loaded)

 signals:
  void chosen(const QString& path);

 private:
  QMenu* menu_;
  ViewerSettings* settings_;
};

}  // namespace stacklens::ui
