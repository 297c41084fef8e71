// Reads and writes ViewerSettings through QSettings (organisation/application names of the app).
#include "ui/state/viewer_settings.h"

#include <QSettings>

#include "ui/display/display_panel.h"

namespace stacklens::ui {

void ViewerSettings::addRecent(const QString& path) {
  recentFiles.removeAll(path);
  recentFiles.prepend(path);
  while (recentFiles.size() > kMaxRecent) recentFiles.removeLast();
}

ViewerSettings loadViewerSettings() {
  QSettings s;
  ViewerSettings v;
  v.lastFolder = s.value("lastFolder", v.lastFolder).toString();
  v.colormap = s.value("display/colormap", v.colormap).toString();
  v.scale = s.value("display/scale", v.scale).toString();
  v.limitsMode = s.value("display/limits", v.limitsMode).toString();
  v.invert = s.value("display/invert", v.invert).toBool();
  v.smooth = s.value("display/smooth", v.smooth).toBool();
  v.nanColour = s.value("display/nanColour", v.nanColour).value<QColor>();
  v.recentFiles = s.value("recentFiles").toStringList();
  v.geometry = s.value("window/geometry").toByteArray();
  v.windowState = s.value("window/state").toByteArray();
  return v;
}

void saveViewerSettings(const ViewerSettings& v) {
  QSettings s;
  s.setValue("lastFolder", v.lastFolder);
  s.setValue("display/colormap", v.colormap);
  s.setValue("display/scale", v.scale);
  s.setValue("display/limits", v.limitsMode);
  s.setValue("display/invert", v.invert);
  s.setValue("display/smooth", v.smooth);
  s.setValue("display/nanColour", v.nanColour);
  s.setValue("recentFiles", v.recentFiles);
  s.setValue("window/geometry", v.geometry);
  s.setValue("window/state", v.windowState);
}

void applyViewerSettings(DisplayPanel* display, const ViewerSettings& saved) {
  display->setColormap(saved.colormap);
  try {
    display->setScale(render::scaleFromName(saved.scale.toStdString()));
  } catch (const std::exception&) {
  }
  try {
    const render::LimitsMode m = render::limitsModeFromName(saved.limitsMode.toStdString());
    if (m != render::LimitsMode::Manual) display->setLimitsMode(m);
  } catch (const std::exception&) {
  }
  display->setInvert(saved.invert);
  display->setSmooth(saved.smooth);
  display->setNanColour(saved.nanColour);
}

}  // namespace stacklens::ui
