// A scale bar's length and label (DS9's and Fiji's), and nice tick values for a colorbar: pure
// functions that the view's decorations (ui/display/view_decorations.h) draw.
#pragma once

#include <QString>
#include <optional>
#include <vector>

#include "io/stack.h"
#include "render/slice_view.h"

namespace stacklens::ui {

// How much one image pixel spans along x at the view's centre: an angle in degrees from the
// celestial WCS, or else the stack's spacing in its unit (e.g. "micron"); none without either.
struct PixelScale {
  double perPixel = 0;
  QString unit;  // "deg" for an angle
  bool angle = false;
};
std::optional<PixelScale> pixelScale(const io::StackReader& stack, const render::SliceView& view,
                                     double z);

// A bar of a round length (1, 2 or 5 × 10^n in the unit that reads best: ″, ′ or ° for angles)
// near `wantPixels` widget pixels long, at the view's zoom.
struct ScaleBarSpec {
  double pixels = 0;  // widget pixels
  QString label;      // e.g. "20 µm", "30″"
};
ScaleBarSpec scaleBar(const PixelScale& scale, double widgetPixelsPerImagePixel,
                      double wantPixels = 100);

// Round values (1, 2 or 5 × 10^n apart) inside [low, high], about `count` of them.
std::vector<double> niceTicks(double low, double high, int count = 5);

// The largest of 1, 2 or 5 × 10^n not above value (bars and grids); 0 for no positive value.
double roundDown125(double value);

// A spacing's unit as labels write it ("micron" → "µm").
QString displayUnit(const QString& unit);

}  // namespace stacklens::ui
