// The viewer's persistent settings (QSettings): last folder, display choices, recent files.
#pragma once

#include <QByteArray>
#include <QColor>
#include <QString>
#include <QStringList>

namespace stacklens::ui {

struct ViewerSettings {
  QString lastFolder;
  QString colormap = "gray";
  QString scale = "linear";
  QString limitsMode = "99.5";
  bool invert = false;
  bool smooth = false;
  QColor nanColour = QColor(200, 30, 30);
  QStringList recentFiles;  // most recent first
  QByteArray geometry, windowState;

  static constexpr int kMaxRecent = 10;
  void addRecent(const QString& path);
};

ViewerSettings loadViewerSettings();
void saveViewerSettings(const ViewerSettings& settings);

class DisplayPanel;
// The remembered colormap, scale, limits mode (not manual limits: they belong to one image),
// inversion, smoothing and NaN colour, set on the display panel; unknown names are skipped.
void applyViewerSettings(DisplayPanel* display, const ViewerSettings& settings);

}  // namespace stacklens::ui
