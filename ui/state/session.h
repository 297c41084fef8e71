// A viewer session as a small JSON file: the file (HDU, plane, slice), the view, display settings,
// the processing pipeline (its PSF by file, or inline when small), the regions and overlays.
// File ▸ Save session… writes it (atomically), File ▸ Open session… puts it all back.
#pragma once

#include <QJsonObject>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <optional>

#include "compute/pipeline.h"
#include "render/display_settings.h"
#include "render/limits.h"

namespace stacklens::ui {

struct Session {
  QString file;  // absolute path of the stack
  int hdu = -1, plane = 0, slice = 0;
  bool fit = true;  // zoom follows the window (else zoom and centre)
  double zoom = 1.0;
  QPointF centre;
  std::optional<QPointF> crosshair;
  render::DisplaySettings display;
  render::LimitsMode limitsMode = render::LimitsMode::P99_5;
  compute::Pipeline pipeline;  // with its PSF pixels when they were kept
  QString psfName, psfFile;    // psfFile: read again on restore ("" when made in the viewer)
  int backend = 0;             // ProcessingDock::BackendChoice
  int viewMode = 1;            // ProcessingDock::ViewMode
  QString regions;             // the regions tool's list as DS9 text (image frame); "" none
  bool colorbar = false, compass = false, scaleBar = false, grid = false;
};

// A PSF made in the viewer (no file) is kept inline up to this many values; larger ones are
// left out with a warning (save the PSF to a file to keep it).
inline constexpr int64_t kInlinePsfValues = 1 << 18;

// JSON of a session; the stack's path is also stored relative to sessionDir so that a folder of
// data and sessions can move. Warnings say what could not be kept.
QJsonObject sessionToJson(const Session& session, const QString& sessionDir,
                          QStringList* warnings = nullptr);
// Throws std::runtime_error naming what is wrong (not a session, a newer version, a bad value).
// The stack is looked for at its absolute path, then relative to sessionDir.
Session sessionFromJson(const QJsonObject& json, const QString& sessionDir);

// Atomic write (a temporary file renamed over path); returns "" or the error.
QString writeSession(const QString& path, const Session& session, QStringList* warnings = nullptr);
// Returns the session or sets *error to "<path>: <reason>".
std::optional<Session> readSession(const QString& path, QString* error);

}  // namespace stacklens::ui
