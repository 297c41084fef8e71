// stacklens: the viewer. With no file it opens the bundled microscopy sample.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QSurfaceFormat>

#include "ui/main_window.h"

// The bundled sample: next to an installed binary, else in the build tree.
static QString defaultSample() {
  const QString installed =
      QDir(QCoreApplication::applicationDirPath()).filePath("../share/stacklens/samples/beads.tif");
  if (QFileInfo::exists(installed)) return installed;
  return QStringLiteral(STACKLENS_SAMPLE_DIR "/beads.tif");
}

int main(int argc, char** argv) {
  QSurfaceFormat format;
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  QSurfaceFormat::setDefaultFormat(format);

  QApplication app(argc, argv);
  QApplication::setApplicationName("StackLens");
  QApplication::setOrganizationName("StackLens");
  QApplication::setApplicationVersion(STACKLENS_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription("A viewer for FITS and TIFF image stacks with GPU processing.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("file", "FITS or TIFF stack to open (default: the bundled sample)");
  parser.process(app);

  stacklens::ui::MainWindow window;
  window.show();
  const QStringList files = parser.positionalArguments();
  window.openFile(files.isEmpty() ? defaultSample() : files.first());
  return app.exec();
}
