// stacklens: the viewer. With no file it opens the bundled microscopy sample.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QMessageBox>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QSurfaceFormat>
#include <QTimer>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "compute/volume_render.h"
#include "ui/bench/lab_benchmark.h"
#include "ui/bench/pan_benchmark.h"
#include "ui/bench/scrub_benchmark.h"
#include "ui/bench/soak_sampler.h"
#include "ui/bench/volume_benchmark.h"
#include "ui/frame/main_window.h"
#include "ui/lab/lab_standalone.h"
#include "ui/live/live_processing.h"
#include "version/build_info.h"

// The bundled sample: next to an installed binary, else in the build tree.
static QString defaultSample() {
  const QString installed =
      QDir(QCoreApplication::applicationDirPath()).filePath("../share/stacklens/samples/beads.tif");
  if (QFileInfo::exists(installed)) return installed;
  return QStringLiteral(STACKLENS_SAMPLE_DIR "/beads.tif");
}

// The command line, defined once for the viewer and for --help/--version without a display.
struct CommandLine {
  QCommandLineParser parser;
  QCommandLineOption hdu{"hdu", "FITS HDU to open (0 = primary; default: the first with an image).",
                         "N"};
  QCommandLineOption plane{"plane", "Index along a 4th axis (e.g. Stokes), default 0.", "N"};
  QCommandLineOption scrub{"scrub-benchmark",
                           "Open FILE, step the slider through cached slices and print the "
                           "slider-to-frame latency as JSON, then exit.",
                           "FILE"};
  QCommandLineOption frames{
      "frames", "Steps for --scrub-benchmark and --pan-benchmark (default 200).", "N", "200"};
  QCommandLineOption scrubCold{"scrub-cold",
                               "With --scrub-benchmark: read no slice beforehand; each step "
                               "shows a slice not shown before, read while scrubbing."};
  QCommandLineOption volume{"volume-benchmark",
                            "Open FILE, show it in the 3D view, turn it --frames times (frames "
                            "of --volume-size pixels, --volume-mode) and print the frame times "
                            "as JSON, then exit. With --backend cuda it draws on the GPU.",
                            "FILE"};
  QCommandLineOption volumeSize{"volume-size", "Side of the 3D view's frames (default 1024).", "N",
                                "1024"};
  QCommandLineOption volumeMode{"volume-mode", "mip, attenuated-mip, average or iso (default mip).",
                                "MODE", "mip"};
  QCommandLineOption soak{"soak-minutes",
                          "Run --scrub-benchmark or --volume-benchmark for M minutes instead of "
                          "--frames steps, adding per-minute latency percentiles, resident and "
                          "device memory (\"soak\") to the JSON.",
                          "M"};
  QCommandLineOption firstFrame{"first-frame-benchmark",
                                "Open FILE, print the time from the open request to the first "
                                "frame presented and the peak resident memory as JSON, then exit.",
                                "FILE"};
  QCommandLineOption pan{"pan-benchmark",
                         "Open FILE, set --pan-zoom, drag the view across the plane --frames "
                         "times by --pan-step screen pixels and print frames per second, frame "
                         "times and placeholder frames as JSON, then exit.",
                         "FILE"};
  QCommandLineOption panZoom{
      "pan-zoom", "Screen pixels per image pixel for --pan-benchmark (default 0.25).", "Z", "0.25"};
  QCommandLineOption panStep{
      "pan-step", "Screen pixels per frame for --pan-benchmark (default 16).", "N", "16"};
  QCommandLineOption lab{"lab-benchmark",
                         "Open the speedup lab, run its default sweep and print the points, the "
                         "time and the window's longest pause as JSON, then exit."};
  QCommandLineOption labWindow{"lab",
                               "Open the speedup lab alone; with a file, show that sweep (a CSV "
                               "saved by the lab or by stacklens-cli lab)."};
  QCommandLineOption grab{
      "grab", "With --lab: save the window as PNG to FILE once drawn, then exit.", "FILE"};
  QCommandLineOption preset{"preset",
                            "Process while scrubbing with a preset: \"astronomy sources\" or "
                            "\"microscopy deconvolution\".",
                            "NAME"};
  QCommandLineOption backend{"backend", "Processing backend: cpu, cuda or compare (default cpu).",
                             "NAME"};
  QCommandLineOption iterations{"iterations", "Richardson-Lucy iterations (overrides the preset).",
                                "N"};
  QCommandLineOption deconvolution{"deconvolution",
                                   "Richardson-Lucy per slice (2d) or on a slab (3d).", "MODE"};
  QCommandLineOption psf{"psf", "PSF stack for deconvolution (default: a Gaussian).", "FILE"};
  QCommandLineOption rawBudget{"raw-budget-mb",
                               "Raw slices kept, host and device copies together (the viewer "
                               "and live processing share them), in MiB (default 1536).",
                               "N"};

  CommandLine() {
    parser.setApplicationDescription(
        "A viewer for FITS and TIFF image stacks with GPU processing.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("file",
                                 "FITS or TIFF stack, or Zarr/OME-Zarr folder or http(s) URL, to "
                                 "open (default: the bundled sample)");
    parser.addOptions({hdu, plane, scrub, scrubCold, frames, soak, firstFrame, pan, panZoom,
                       panStep, lab, labWindow, grab, volume, volumeSize, volumeMode});
    parser.addOptions({preset, backend, iterations, deconvolution, psf, rawBudget});
  }
};

// --help and --version print text only: they must work without a display, where creating the
// QApplication would abort.
bool asksFor(int argc, char** argv, std::initializer_list<std::string_view> flags) {
  for (int i = 1; i < argc; ++i)
    for (std::string_view flag : flags)
      if (argv[i] == flag) return true;
  return false;
}

// Says what is wrong on stderr, as every error of the viewer's command line; returns the exit
// code to give.
int failWith(int code, const QString& message) {
  std::fprintf(stderr, "stacklens: error: %s\n", qPrintable(message));
  return code;
}

void nameApplication() {
  QCoreApplication::setApplicationName("StackLens");
  QCoreApplication::setOrganizationName("StackLens");
  QCoreApplication::setApplicationVersion(QString::fromStdString(stacklens::build_info::version()));
}

// Benchmark modes: no dialogs, the bench's JSON on stdout, exit code 3 when the file cannot be
// read. The bench starts itself once the stack is open (the caller connects that).
template <class Bench>
int runBenchmark(QApplication& app, stacklens::ui::MainWindow& window, Bench* bench,
                 const QString& path, const stacklens::io::OpenOptions& options) {
  window.setQuiet(true);
  QObject::connect(&window, &stacklens::ui::MainWindow::openFailed, &app,
                   [](const QString& m) { QCoreApplication::exit(failWith(3, m)); });
  QObject::connect(bench, &Bench::finished, &app, [](const QString& json) {
    std::printf("%s\n", qPrintable(json));
    std::fflush(stdout);
    QCoreApplication::exit(0);
  });
  window.show();
  window.openFile(path, options);
  return app.exec();
}

// Options every mode reads: the plane to open, steps, the slice budget and a soak's length.
struct CommonOptions {
  stacklens::io::OpenOptions open;
  int frameCount = 0;
  int rawBudgetMb = 0;
  double soakMinutes = 0;
  int soakDevice = -1;  // the device memory a soak watches (-1: none)
};

// Reads them into `out`; 0, or the exit code after saying what is wrong.
int readCommonOptions(const CommandLine& commandLine, CommonOptions& out) {
  const QCommandLineParser& parser = commandLine.parser;
  bool ok = true, okPlane = true, okFrames = true;
  if (parser.isSet(commandLine.hdu)) out.open.hdu = parser.value(commandLine.hdu).toInt(&ok);
  if (parser.isSet(commandLine.plane))
    out.open.plane = parser.value(commandLine.plane).toInt(&okPlane);
  out.frameCount = parser.value(commandLine.frames).toInt(&okFrames);
  ok = ok && okPlane && okFrames;
  if (!ok || out.frameCount < 0 || out.open.plane < 0 || out.open.hdu < -1) {
    return failWith(2, "--hdu, --plane and --frames take non-negative integers");
  }
  if (parser.isSet(commandLine.rawBudget)) {
    out.rawBudgetMb = parser.value(commandLine.rawBudget).toInt(&ok);
    if (!ok || out.rawBudgetMb < 1) return failWith(2, "--raw-budget-mb takes a positive integer");
  }
  if (parser.isSet(commandLine.soak)) {
    out.soakMinutes = parser.value(commandLine.soak).toDouble(&ok);
    if (!ok || !(out.soakMinutes > 0)) return failWith(2, "--soak-minutes takes a positive number");
  }
  // The device memory a soak watches: the GPU's when processing or drawing runs there.
  const QString backendName = parser.value(commandLine.backend);
  out.soakDevice = backendName == "cuda" || backendName == "compare" ? 0 : -1;
  return 0;
}

// Whether any processing option is given.
bool asksForProcessing(const CommandLine& c) {
  const QCommandLineParser& p = c.parser;
  return p.isSet(c.preset) || p.isSet(c.backend) || p.isSet(c.iterations) ||
         p.isSet(c.deconvolution) || p.isSet(c.psf);
}

// Live processing as the options ask; 0, or the exit code after saying what is wrong (4 when
// the GPU asked for is unavailable).
int configureProcessing(const CommandLine& c, stacklens::ui::MainWindow& window) {
  const QCommandLineParser& parser = c.parser;
  bool okIterations = true;
  const int n = parser.isSet(c.iterations) ? parser.value(c.iterations).toInt(&okIterations) : 0;
  const QString error = okIterations && n >= 0
                            ? window.tool<stacklens::ui::LiveProcessing>()->configure(
                                  parser.value(c.preset), parser.value(c.backend), n,
                                  parser.value(c.deconvolution), parser.value(c.psf))
                            : QString("--iterations takes a positive integer");
  if (error.isEmpty()) return 0;
  return failWith(error.startsWith("GPU unavailable") ? 4 : 2, error);
}

int runScrubBenchmark(QApplication& app, stacklens::ui::MainWindow& window, const CommandLine& c,
                      const CommonOptions& o, bool processing) {
  auto* bench = new stacklens::ui::ScrubBenchmark(&window, o.frameCount, &window);
  if (processing) bench->setProcessing(window.tool<stacklens::ui::LiveProcessing>());
  bench->setSoak(o.soakMinutes, o.soakDevice);
  bench->setCold(c.parser.isSet(c.scrubCold));
  QObject::connect(&window, &stacklens::ui::MainWindow::stackOpened, bench,
                   &stacklens::ui::ScrubBenchmark::start);
  return runBenchmark(app, window, bench, c.parser.value(c.scrub), o.open);
}

int runVolumeBenchmark(QApplication& app, stacklens::ui::MainWindow& window, const CommandLine& c,
                       const CommonOptions& o) {
  stacklens::compute::VolumeMode mode;
  try {
    mode = stacklens::compute::parseVolumeMode(c.parser.value(c.volumeMode).toStdString());
  } catch (const std::exception& e) {
    return failWith(2, e.what());
  }
  bool ok = true;
  const int side = c.parser.value(c.volumeSize).toInt(&ok);
  if (!ok || side < 16 || side > 16384) return failWith(2, "--volume-size takes 16..16384");
  auto* bench =
      new stacklens::ui::VolumeBenchmark(&window, o.frameCount, QSize(side, side), mode, &window);
  bench->setSoak(o.soakMinutes, o.soakDevice);
  QObject::connect(&window, &stacklens::ui::MainWindow::stackOpened, bench,
                   &stacklens::ui::VolumeBenchmark::start, Qt::SingleShotConnection);
  return runBenchmark(app, window, bench, c.parser.value(c.volume), o.open);
}

int runPanBenchmark(QApplication& app, stacklens::ui::MainWindow& window, const CommandLine& c,
                    const CommonOptions& o) {
  bool ok = true;
  const double zoom = c.parser.value(c.panZoom).toDouble(&ok);
  const int step = ok ? c.parser.value(c.panStep).toInt(&ok) : 0;
  if (!ok || !(zoom >= 1e-3 && zoom <= 1e3) || step < 1)
    return failWith(2, "--pan-zoom takes 0.001..1000, --pan-step a positive integer");
  auto* bench = new stacklens::ui::PanBenchmark(&window, o.frameCount, zoom, step, &window);
  QObject::connect(&window, &stacklens::ui::MainWindow::stackOpened, bench,
                   &stacklens::ui::PanBenchmark::start, Qt::SingleShotConnection);
  return runBenchmark(app, window, bench, c.parser.value(c.pan), o.open);
}

// The time from the open request to the first frame presented, and the peak resident memory.
int runFirstFrameBenchmark(QApplication& app, stacklens::ui::MainWindow& window,
                           const QString& path, const stacklens::io::OpenOptions& options) {
  window.setQuiet(true);
  window.show();
  QElapsedTimer clock;
  auto opened = std::make_shared<double>(-1.0);
  QObject::connect(&window, &stacklens::ui::MainWindow::stackOpened, &app,
                   [&clock, opened] { *opened = clock.nsecsElapsed() / 1e6; });
  QObject::connect(window.sliceView(), &QOpenGLWindow::frameSwapped, &app, [&clock, opened] {
    if (*opened < 0) return;  // frames before the stack arrived or before the clock started
    std::printf("{\"open_ms\":%.3f,\"first_frame_ms\":%.3f,\"peak_rss_mb\":%.1f}\n", *opened,
                clock.nsecsElapsed() / 1e6, stacklens::ui::peakResidentMb());
    std::fflush(stdout);
    QCoreApplication::exit(0);
  });
  QObject::connect(&window, &stacklens::ui::MainWindow::openFailed, &app,
                   [](const QString& m) { QCoreApplication::exit(failWith(3, m)); });
  // Start once the view has presented its first (empty) frame, so that window creation and
  // shader compilation are not counted.
  auto started = std::make_shared<bool>(false);
  auto begin = [&, started] {
    if (*started) return;
    *started = true;
    clock.start();
    window.openFile(path, options);
  };
  QObject::connect(
      window.sliceView(), &QOpenGLWindow::frameSwapped, &app,
      [begin] { QTimer::singleShot(100, begin); }, Qt::SingleShotConnection);
  return app.exec();
}

// Whether this display gives the OpenGL context the views need; else why not. Without one the
// views could draw nothing (and Qt's GL window would crash on its first resize).
bool openGlUsable(QString* why) {
  QOpenGLContext probe;
  probe.setFormat(QSurfaceFormat::defaultFormat());
  if (!probe.create()) {
    *why = "no OpenGL context can be made on this display";
    return false;
  }
  QOffscreenSurface surface;
  surface.setFormat(probe.format());
  surface.create();
  if (!probe.makeCurrent(&surface)) {
    *why = "the OpenGL context cannot be made current on this display";
    return false;
  }
  const QSurfaceFormat got = probe.format();
  probe.doneCurrent();
  if (got.version() < qMakePair(3, 3)) {
    *why = QString("the display offers OpenGL %1.%2, and the viewer needs 3.3")
               .arg(got.majorVersion())
               .arg(got.minorVersion());
    return false;
  }
  return true;
}

// OpenGL 3.3 core for every window, presenting as soon as drawn (no vsync wait in the latency).
void setSurfaceFormat() {
  QSurfaceFormat format;
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setSwapInterval(0);
  QSurfaceFormat::setDefaultFormat(format);
}

int main(int argc, char** argv) {
  // Qt's own --version would print the version alone; this says what the About box says.
  if (asksFor(argc, argv, {"-v", "--version"})) {
    std::fputs(stacklens::build_info::describe("StackLens").c_str(), stdout);
    return 0;
  }
  if (asksFor(argc, argv, {"-h", "--help", "--help-all"})) {
    QCoreApplication core(argc, argv);
    nameApplication();
    CommandLine text;
    text.parser.process(core);  // prints and exits
    return 0;
  }
  // Without a display Qt aborts with its own words; say what to do instead.
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    return failWith(5,
                    "no display (DISPLAY and WAYLAND_DISPLAY are unset): start it in a desktop "
                    "session, over ssh -X, or under xvfb-run; stacklens-cli needs no display");
  }
  setSurfaceFormat();
  QApplication app(argc, argv);
  nameApplication();
  CommandLine commandLine;
  QCommandLineParser& parser = commandLine.parser;
  parser.process(app);
  CommonOptions options;
  if (const int error = readCommonOptions(commandLine, options)) return error;

  if (parser.isSet(commandLine.lab)) return stacklens::ui::runLabBenchmark(app);
  if (parser.isSet(commandLine.labWindow)) {
    const QStringList files = parser.positionalArguments();
    return stacklens::ui::runLabWindow(app, files.isEmpty() ? QString() : files.front(),
                                       parser.value(commandLine.grab));
  }
  if (parser.isSet(commandLine.grab)) return failWith(2, "--grab goes with --lab");

  QString noGl;
  if (!openGlUsable(&noGl)) {
    const QString message = "cannot show images: " + noGl +
                            " (the viewer needs OpenGL 3.3; stacklens-cli runs without a display)";
    const int code = failWith(5, message);
    const bool benchmark = parser.isSet(commandLine.scrub) || parser.isSet(commandLine.volume) ||
                           parser.isSet(commandLine.pan) || parser.isSet(commandLine.firstFrame);
    if (!benchmark) QMessageBox::critical(nullptr, "StackLens", message);
    return code;
  }
  stacklens::ui::MainWindow window;
  if (options.rawBudgetMb > 0)
    window.slicePath()->setRawSliceBudget(static_cast<size_t>(options.rawBudgetMb) << 20);
  const bool processing = asksForProcessing(commandLine);
  if (processing)
    if (const int error = configureProcessing(commandLine, window)) return error;
  if (parser.isSet(commandLine.scrub))
    return runScrubBenchmark(app, window, commandLine, options, processing);
  if (parser.isSet(commandLine.volume))
    return runVolumeBenchmark(app, window, commandLine, options);
  if (parser.isSet(commandLine.pan)) return runPanBenchmark(app, window, commandLine, options);
  if (parser.isSet(commandLine.firstFrame))
    return runFirstFrameBenchmark(app, window, parser.value(commandLine.firstFrame), options.open);

  window.show();
  const QStringList files = parser.positionalArguments();
  window.openFile(files.isEmpty() ? defaultSample() : files.first(), options.open);
  return app.exec();
}
