// pngFromSvg through librsvg (parsing and drawing) and cairo (the bitmap and its PNG encoding).
#include "app/cli/svg_png.h"

#include <cmath>
#include <stdexcept>

#ifdef STACKLENS_HAVE_RSVG
#include <cairo.h>
#include <librsvg/rsvg.h>
#endif

namespace stacklens::cli {

#ifdef STACKLENS_HAVE_RSVG

namespace {

// GLib and cairo objects released on every path out, errors included.
struct Handle {
  RsvgHandle* p = nullptr;
  ~Handle() {
    if (p) g_object_unref(p);
  }
};
struct Surface {
  cairo_surface_t* p = nullptr;
  ~Surface() {
    if (p) cairo_surface_destroy(p);
  }
};
struct Context {
  cairo_t* p = nullptr;
  ~Context() {
    if (p) cairo_destroy(p);
  }
};

std::runtime_error rsvgError(const char* what, GError* error) {
  std::string reason = error && error->message ? error->message : "unknown error";
  if (error) g_error_free(error);
  return std::runtime_error(std::string("cannot draw the figure as PNG: ") + what + ": " + reason);
}

cairo_status_t appendBytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

bool canWritePng() { return true; }

std::string pngFromSvg(const std::string& svg, double scale) {
  GError* error = nullptr;
  Handle handle{
      rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error)};
  if (!handle.p) throw rsvgError("parsing the SVG", error);
  double width = 0, height = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle.p, &width, &height) || width <= 0 ||
      height <= 0)
    throw std::runtime_error("cannot draw the figure as PNG: the SVG has no size in pixels");
  const int w = int(std::ceil(width * scale)), h = int(std::ceil(height * scale));
  Surface surface{cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h)};
  if (cairo_surface_status(surface.p) != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error("cannot draw the figure as PNG: no " + std::to_string(w) + " × " +
                             std::to_string(h) + " bitmap");
  Context cr{cairo_create(surface.p)};
  cairo_set_source_rgb(cr.p, 1, 1, 1);  // a transparent background reads as black in some viewers
  cairo_paint(cr.p);
  const RsvgRectangle viewport{0, 0, double(w), double(h)};
  if (!rsvg_handle_render_document(handle.p, cr.p, &viewport, &error))
    throw rsvgError("drawing", error);
  std::string png;
  if (cairo_surface_write_to_png_stream(surface.p, appendBytes, &png) != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error("cannot draw the figure as PNG: encoding failed");
  return png;
}

#else

bool canWritePng() { return false; }

std::string pngFromSvg(const std::string&, double) {
  throw std::runtime_error(
      "cannot write PNG: this stacklens-cli was built without librsvg (install librsvg2-dev and "
      "rebuild); write .svg instead");
}

#endif

}  // namespace stacklens::cli
