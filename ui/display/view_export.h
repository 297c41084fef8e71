// Exporting what the view shows: a PNG of the slice view, optionally with a labelled colorbar.
#pragma once

#include <QImage>
#include <QString>
#include <vector>

#include "render/display_settings.h"
#include "render/slice_view.h"

namespace stacklens::ui {

// A horizontal colorbar `width` pixels wide: the colormap through the scale, with value ticks.
QImage colorbarImage(const render::DisplaySettings& display, int width,
                     const std::vector<float>* cdf = nullptr);
// view with the colorbar appended below it.
QImage withColorbar(const QImage& view, const render::DisplaySettings& display,
                    const std::vector<float>* cdf = nullptr);
// path with ".png" added unless it ends so (case-insensitive): an export never takes another
// extension, so it cannot land on a FITS or TIFF file by a slip of the name.
QString pngPath(const QString& path);
// Encodes image as PNG and writes it to path through io's atomic writer: a temporary file renamed
// into place, never over sourcePath (the open stack). Returns "" or the error.
QString savePngAtomically(const QImage& image, const QString& path, const QString& sourcePath);
// What view draws, with the colorbar below it when asked, saved as above.
QString exportViewPng(render::SliceView* view, const QString& path, bool colorbar,
                      const QString& sourcePath);

}  // namespace stacklens::ui
