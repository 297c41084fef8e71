// Session files: every setting by name (not by position), so that a later version can add fields
// and an older file still reads; values outside their ranges are refused with the field's name.
#include "ui/state/session.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "compute/auto_boundary.h"
#include "compute/params_text.h"
#include "render/scale.h"

namespace stacklens::ui {
namespace {

constexpr int kVersion = 1;
constexpr const char* kFormat = "stacklens-session";

[[noreturn]] void fail(const QString& what) { throw std::runtime_error(what.toStdString()); }

QJsonArray numbers(std::initializer_list<double> values) {
  QJsonArray a;
  for (double v : values) a.append(v);
  return a;
}

double number(const QJsonObject& o, const char* key, double fallback) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined()) return fallback;
  if (!v.isDouble()) fail(QString("%1 is not a number").arg(key));
  return v.toDouble();
}

// Range checked before converting: converting a double outside int's range is undefined (a
// session file's "hdu": 1e300 reached it).
int integer(const QJsonObject& o, const char* key, int fallback) {
  const double v = number(o, key, fallback);
  if (!(v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max()))
    fail(QString("%1 is out of range").arg(key));
  if (v != std::trunc(v)) fail(QString("%1 is not a whole number").arg(key));
  return int(v);
}

bool flag(const QJsonObject& o, const char* key, bool fallback) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined()) return fallback;
  if (!v.isBool()) fail(QString("%1 is not true or false").arg(key));
  return v.toBool();
}

QString text(const QJsonObject& o, const char* key, const QString& fallback = {}) {
  const QJsonValue v = o.value(key);
  if (v.isUndefined()) return fallback;
  if (!v.isString()) fail(QString("%1 is not text").arg(key));
  return v.toString();
}

std::vector<double> list(const QJsonObject& o, const char* key, size_t count) {
  const QJsonArray a = o.value(key).toArray();
  if (size_t(a.size()) != count) fail(QString("%1 needs %2 numbers").arg(key).arg(count));
  std::vector<double> out;
  for (const QJsonValue& v : a) {
    if (!v.isDouble()) fail(QString("%1 holds something that is not a number").arg(key));
    out.push_back(v.toDouble());
  }
  return out;
}

compute::Boundary boundaryFromName(const QString& name) {
  if (const std::optional<compute::Boundary> b = compute::boundaryNamed(name.toStdString()))
    return *b;
  fail(QString("boundary must be %1, not %2").arg(compute::kBoundaryWords, name));
}

compute::OutlierMode outlierModeFromName(const QString& name) {
  if (name == "bright") return compute::OutlierMode::Bright;
  if (name == "dark") return compute::OutlierMode::Dark;
  if (name == "both") return compute::OutlierMode::Both;
  fail("outliers mode must be bright, dark or both, not " + name);
}

QJsonObject psfToJson(const compute::Image& psf) {
  const compute::Shape s = psf.shape();
  QJsonObject o;
  o["shape"] = numbers({double(s.z), double(s.y), double(s.x)});
  o["spacing"] = numbers({psf.spacing.z, psf.spacing.y, psf.spacing.x});
  o["spacing_known"] = psf.spacing.known;
  o["unit"] = QString::fromStdString(psf.spacing.unit);
  // float32, little-endian (the machines StackLens runs on), base64.
  o["float32_le"] = QString::fromLatin1(
      QByteArray(reinterpret_cast<const char*>(psf.data()), qsizetype(psf.bytes())).toBase64());
  return o;
}

compute::Image psfFromJson(const QJsonObject& o) {
  const std::vector<double> shape = list(o, "shape", 3);
  for (double n : shape)
    if (!(n >= 1 && n <= 4096 && n == double(int64_t(n)))) fail("psf shape is out of range");
  const compute::Shape s{int64_t(shape[0]), int64_t(shape[1]), int64_t(shape[2])};
  if (s.count() > kInlinePsfValues) fail("psf is larger than a session keeps inline");
  const QByteArray bytes = QByteArray::fromBase64(text(o, "float32_le").toLatin1());
  if (bytes.size() != qsizetype(s.count() * sizeof(float)))
    fail("psf data does not match its shape");
  compute::Image psf = compute::Image::host(s);
  std::memcpy(psf.data(), bytes.constData(), size_t(bytes.size()));
  const std::vector<double> spacing = list(o, "spacing", 3);
  psf.spacing = {spacing[0], spacing[1], spacing[2], flag(o, "spacing_known", false),
                 text(o, "unit").toStdString()};
  return psf;
}

QJsonObject pipelineToJson(const Session& s, QStringList* warnings) {
  const compute::Pipeline& p = s.pipeline;
  QJsonObject o;
  o["outliers"] = QJsonObject{{"enabled", p.outliers.enabled},
                              {"size", p.outliers.params.size},
                              {"threshold", p.outliers.params.threshold},
                              {"mode", compute::outlierModeName(p.outliers.params.mode)}};
  o["median"] = QJsonObject{{"enabled", p.median.enabled}, {"size", p.median.size}};
  const compute::BlurParams& b = p.blur.params;
  o["blur"] = QJsonObject{{"enabled", p.blur.enabled},
                          {"sigma", numbers({b.sigmaZ, b.sigmaY, b.sigmaX})},
                          {"truncate", b.truncate},
                          {"nan_aware", b.nanAware}};
  const auto& d = p.deconvolution;
  QJsonObject rl{{"enabled", d.enabled},
                 {"iterations", d.params.iterations},
                 {"three_d", d.params.threeD},
                 {"boundary", d.autoBoundary ? compute::kAutoBoundaryWord
                                             : compute::boundaryName(d.params.boundary)},
                 {"tv_lambda", d.params.tvLambda},
                 {"accelerate", d.params.accelerate},
                 {"slab_half_width", d.slabHalfWidth},
                 {"psf_sigma", numbers({d.psfSigmaZ, d.psfSigmaY, d.psfSigmaX})}};
  if (!d.psf.empty()) {
    rl["psf_name"] = s.psfName;
    if (!s.psfFile.isEmpty())
      rl["psf_file"] = s.psfFile;
    else if (d.psf.shape().count() <= kInlinePsfValues)
      rl["psf"] = psfToJson(d.psf);
    else if (warnings)
      warnings->append(QObject::tr("The PSF (%1) was made in the viewer and is too large to keep "
                                   "in the session: save it to a file first.")
                           .arg(s.psfName));
  }
  o["deconvolution"] = rl;
  const compute::ClipParams& c = p.statistics.params;
  o["statistics"] = QJsonObject{{"enabled", p.statistics.enabled},
                                {"kappa_lower", c.kappaLower},
                                {"kappa_upper", c.kappaUpper},
                                {"max_iterations", c.maxIterations}};
  const compute::SegmentParams& g = p.segmentation.params;
  QJsonObject seg{{"enabled", p.segmentation.enabled},
                  {"nsigma", g.nSigma},
                  {"connectivity", g.connectivity},
                  {"min_pixels", double(g.minPixels)}};
  if (g.absoluteThreshold) seg["threshold"] = *g.absoluteThreshold;
  o["segmentation"] = seg;
  return o;
}

void pipelineFromJson(const QJsonObject& o, Session& s) {
  compute::Pipeline& p = s.pipeline;
  const QJsonObject out = o.value("outliers").toObject();
  p.outliers.enabled = flag(out, "enabled", false);
  p.outliers.params.size = integer(out, "size", p.outliers.params.size);
  p.outliers.params.threshold = number(out, "threshold", p.outliers.params.threshold);
  p.outliers.params.mode = outlierModeFromName(text(out, "mode", "both"));
  const QJsonObject med = o.value("median").toObject();
  p.median.enabled = flag(med, "enabled", false);
  p.median.size = integer(med, "size", p.median.size);
  const QJsonObject blur = o.value("blur").toObject();
  p.blur.enabled = flag(blur, "enabled", false);
  if (blur.contains("sigma")) {
    const std::vector<double> sigma = list(blur, "sigma", 3);
    p.blur.params.sigmaZ = sigma[0], p.blur.params.sigmaY = sigma[1],
    p.blur.params.sigmaX = sigma[2];
  }
  p.blur.params.truncate = number(blur, "truncate", p.blur.params.truncate);
  p.blur.params.nanAware = flag(blur, "nan_aware", false);
  const QJsonObject rl = o.value("deconvolution").toObject();
  auto& d = p.deconvolution;
  d.enabled = flag(rl, "enabled", false);
  d.params.iterations = integer(rl, "iterations", d.params.iterations);
  d.params.threeD = flag(rl, "three_d", false);
  // Sessions from before "auto" name their boundary.
  const QString boundary = text(rl, "boundary", "reflect");
  d.autoBoundary = boundary == compute::kAutoBoundaryWord;
  d.params.boundary = d.autoBoundary ? compute::Boundary::Reflect : boundaryFromName(boundary);
  d.params.tvLambda = number(rl, "tv_lambda", 0);
  d.params.accelerate = flag(rl, "accelerate", false);
  d.slabHalfWidth = integer(rl, "slab_half_width", d.slabHalfWidth);
  if (rl.contains("psf_sigma")) {
    const std::vector<double> sigma = list(rl, "psf_sigma", 3);
    d.psfSigmaZ = sigma[0], d.psfSigmaY = sigma[1], d.psfSigmaX = sigma[2];
  }
  s.psfName = text(rl, "psf_name");
  s.psfFile = text(rl, "psf_file");
  if (rl.contains("psf")) d.psf = psfFromJson(rl.value("psf").toObject());
  const QJsonObject st = o.value("statistics").toObject();
  p.statistics.enabled = flag(st, "enabled", false);
  p.statistics.params.kappaLower = number(st, "kappa_lower", 3);
  p.statistics.params.kappaUpper = number(st, "kappa_upper", 3);
  p.statistics.params.maxIterations = integer(st, "max_iterations", 10);
  const QJsonObject seg = o.value("segmentation").toObject();
  p.segmentation.enabled = flag(seg, "enabled", false);
  p.segmentation.params.nSigma = number(seg, "nsigma", 5);
  p.segmentation.params.connectivity = integer(seg, "connectivity", 8);
  const double minPixels = number(seg, "min_pixels", 1);
  if (!(minPixels >= 0 && minPixels < 0x1p62)) fail("min_pixels is out of range");
  p.segmentation.params.minPixels = int64_t(minPixels);
  if (seg.contains("threshold"))
    p.segmentation.params.absoluteThreshold = number(seg, "threshold", 0);
}

}  // namespace

QJsonObject sessionToJson(const Session& s, const QString& sessionDir, QStringList* warnings) {
  QJsonObject o;
  o["format"] = kFormat;
  o["version"] = kVersion;
  o["file"] = QJsonObject{{"path", s.file},
                          {"relative", QDir(sessionDir).relativeFilePath(s.file)},
                          {"hdu", s.hdu},
                          {"plane", s.plane},
                          {"slice", s.slice}};
  QJsonObject view{
      {"fit", s.fit}, {"zoom", s.zoom}, {"centre", numbers({s.centre.x(), s.centre.y()})}};
  if (s.crosshair) view["crosshair"] = numbers({s.crosshair->x(), s.crosshair->y()});
  o["view"] = view;
  const render::DisplaySettings& d = s.display;
  o["display"] = QJsonObject{{"colormap", d.colormap},
                             {"scale", render::scaleName(d.scale)},
                             {"exponent", double(d.exponent)},
                             {"limits_mode", render::limitsModeName(s.limitsMode)},
                             {"limits", numbers({d.limits.low, d.limits.high})},
                             {"invert", d.invert},
                             {"smooth", d.smooth},
                             {"nan_colour", d.nanColour.name()}};
  o["pipeline"] = pipelineToJson(s, warnings);
  o["processing"] = QJsonObject{{"backend", s.backend}, {"view_mode", s.viewMode}};
  o["regions_ds9"] = s.regions;
  o["overlays"] = QJsonObject{{"colorbar", s.colorbar},
                              {"compass", s.compass},
                              {"scale_bar", s.scaleBar},
                              {"grid", s.grid}};
  return o;
}

Session sessionFromJson(const QJsonObject& o, const QString& sessionDir) {
  if (o.value("format").toString() != kFormat) fail("not a StackLens session");
  if (integer(o, "version", 0) > kVersion)
    fail(QString("made by a newer StackLens (session version %1)").arg(integer(o, "version", 0)));
  Session s;
  const QJsonObject file = o.value("file").toObject();
  s.file = text(file, "path");
  const QString relative = text(file, "relative");
  if (!QFileInfo::exists(s.file) && !relative.isEmpty() &&
      QFileInfo::exists(QDir(sessionDir).filePath(relative)))
    s.file = QDir::cleanPath(QDir(sessionDir).filePath(relative));
  if (s.file.isEmpty()) fail("it names no file");
  s.hdu = integer(file, "hdu", -1);
  s.plane = integer(file, "plane", 0);
  s.slice = integer(file, "slice", 0);
  if (s.plane < 0 || s.slice < 0) fail("plane and slice cannot be negative");
  const QJsonObject view = o.value("view").toObject();
  s.fit = flag(view, "fit", true);
  s.zoom = number(view, "zoom", 1.0);
  if (!(s.zoom > 0)) fail("zoom must be positive");
  if (view.contains("centre")) {
    const std::vector<double> c = list(view, "centre", 2);
    s.centre = QPointF(c[0], c[1]);
  }
  if (view.contains("crosshair")) {
    const std::vector<double> c = list(view, "crosshair", 2);
    s.crosshair = QPointF(c[0], c[1]);
  }
  const QJsonObject d = o.value("display").toObject();
  s.display.colormap = text(d, "colormap", s.display.colormap);
  s.display.scale = render::scaleFromName(text(d, "scale", "linear").toStdString());
  s.display.exponent = float(number(d, "exponent", s.display.exponent));
  s.limitsMode = render::limitsModeFromName(text(d, "limits_mode", "99.5").toStdString());
  if (d.contains("limits")) {
    const std::vector<double> l = list(d, "limits", 2);
    s.display.limits = {float(l[0]), float(l[1])};
  }
  s.display.invert = flag(d, "invert", false);
  s.display.smooth = flag(d, "smooth", false);
  const QColor nan(text(d, "nan_colour", s.display.nanColour.name()));
  if (!nan.isValid()) fail("nan_colour is not a colour");
  s.display.nanColour = nan;
  pipelineFromJson(o.value("pipeline").toObject(), s);
  const QJsonObject processing = o.value("processing").toObject();
  s.backend = integer(processing, "backend", 0);
  s.viewMode = integer(processing, "view_mode", 1);
  s.regions = text(o, "regions_ds9");
  const QJsonObject overlays = o.value("overlays").toObject();
  s.colorbar = flag(overlays, "colorbar", false);
  s.compass = flag(overlays, "compass", false);
  s.scaleBar = flag(overlays, "scale_bar", false);
  s.grid = flag(overlays, "grid", false);
  return s;
}

QString writeSession(const QString& path, const Session& session, QStringList* warnings) {
  const QJsonObject json = sessionToJson(session, QFileInfo(path).absolutePath(), warnings);
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return QObject::tr("%1: %2").arg(path, file.errorString());
  file.write(QJsonDocument(json).toJson(QJsonDocument::Indented));
  if (!file.commit()) return QObject::tr("%1: %2").arg(path, file.errorString());
  return {};
}

std::optional<Session> readSession(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (error) *error = QObject::tr("%1: %2").arg(path, file.errorString());
    return std::nullopt;
  }
  QJsonParseError parse;
  const QJsonDocument doc = QJsonDocument::fromJson(file.read(16 << 20), &parse);
  if (doc.isNull() || !doc.isObject()) {
    if (error)
      *error = QObject::tr("%1: not a session file (%2)")
                   .arg(path, doc.isNull() ? parse.errorString() : QObject::tr("no JSON object"));
    return std::nullopt;
  }
  try {
    return sessionFromJson(doc.object(), QFileInfo(path).absolutePath());
  } catch (const std::exception& e) {
    if (error) *error = QObject::tr("%1: %2").arg(path, QString::fromStdString(e.what()));
    return std::nullopt;
  }
}

}  // namespace stacklens::ui
