// Exporting what the view shows: a PNG of the slice view, optionally with a labelled colorbar.
#pragma once

#include <QImage>
#include <QString>
#include <vector>

#include "render/display_settings.h"

namespace stacklens::ui {

// A horizontal colorbar `width` pixels wide: the colormap through the scale, with value ticks.
QImage colorbarImage(const render::DisplaySettings& display, int width,
                     const std::vector<float>* cdf = nullptr);
// view with the colorbar appended below it.
QImage withColorbar(const QImage& view, const render::DisplaySettings& display,
                    const std::vector<float>* cdf = nullptr);
// Writes a PNG atomically (temporary file, then rename); returns an error message or "".
QString savePngAtomically(const QImage& image, const QString& path);

}  // namespace stacklens::ui
