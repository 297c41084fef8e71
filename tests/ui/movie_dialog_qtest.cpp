// File ▸ Export movie…: the frames, decoded back with FFmpeg, are the slices drawn with the
// view's colormap and limits (colour for colour), the range and size as chosen; a rotation movie
// is the 3D view's volume turning from its camera; Cancel leaves nothing behind.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "compute/backend.h"
#include "compute/volume_render.h"
#include "io/stack_writer.h"
#include "render/colormap.h"
#include "render/display_settings.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/display/display_panel.h"
#include "ui/frame/main_window.h"
#include "ui/jobs/movie_dialog.h"
#include "ui/volume/volume_panel.h"
#include "ui/volume/volume_tool.h"
#ifdef STACKLENS_HAVE_MOVIE
#include "tests/io/movie_decode.h"
#endif

using namespace stacklens;

namespace {

// A TIFF stack in dir with value (i · 37) mod 1000 at voxel i; its values.
std::vector<float> writeTestStack(const QString& path, int nz, int ny, int nx) {
  std::vector<float> v(size_t(nz * ny * nx));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((i * 37) % 1000);
  io::writeStack(path.toStdString(), v.data(), nz, ny, nx, {});
  return v;
}

}  // namespace

class MovieDialogTest : public QObject {
  Q_OBJECT
 private slots:
  void framesAreTheViewsColoursOfEachSlice() {
#ifndef STACKLENS_HAVE_MOVIE
    QSKIP("built without FFmpeg");
#else
    QTemporaryDir dir;
    const int ny = 20, nx = 30;
    const QString in = dir.filePath("stack.tif");
    const std::vector<float> v = writeTestStack(in, 6, ny, nx);
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, in));
    w.displayPanel()->colormapBox()->setCurrentText("magma");
    QTRY_COMPARE(w.displayPanel()->settings().colormap, QString("magma"));
    const render::DisplaySettings display = w.displayPanel()->settings();
    ui::MovieDialog* dialog = ui::openMovieExport(&w);
    QVERIFY(dialog);
    dialog->firstBox()->setValue(1);
    dialog->lastBox()->setValue(4);
    const QString out = dir.filePath("movie.gif");
    dialog->outputEdit()->setText(out);
    QSignalSpy finished(dialog, &ui::MovieDialog::finished);
    dialog->start();
    QVERIFY(finished.wait(20000));
    const auto d = stacklens::testing::decode(out.toStdString());
    QCOMPARE(int(d.rgb.size()), 4);
    QCOMPARE(d.width, nx);
    const render::Colormap map = render::loadColormap("magma");
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < ny * nx; ++i) {
        const int index = render::colourIndex(display, v[size_t((k + 1) * ny * nx + i)]);
        const uint32_t want = map.rgba[size_t(std::max(index, 0))];
        for (int c = 0; c < 3; ++c)
          QCOMPARE(int(d.rgb[size_t(k)][size_t(i * 3 + c)]), int((want >> (8 * c)) & 0xff));
      }
#endif
  }

  // With the 3D view open: a turn of the stack from the view's camera, each frame the volume
  // drawn again (compute::renderVolume) at its angle through the view's colours.
  void aRotationMovieTurnsTheThreeDView() {
#ifndef STACKLENS_HAVE_MOVIE
    QSKIP("built without FFmpeg");
#else
    QTemporaryDir dir;
    const QString in = dir.filePath("stack.tif");
    writeTestStack(in, 12, 20, 24);
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, in));
    ui::VolumePanel* panel = ui::showVolumeView(&w);
    QSignalSpy loaded(panel, &ui::VolumePanel::volumeLoaded);
    QVERIFY(panel->volume() || loaded.wait(20000));
    panel->turn(15, 30);
    ui::MovieDialog* dialog = ui::openMovieExport(&w);
    QVERIFY(dialog);
    dialog->kindBox()->setCurrentIndex(1);
    QVERIFY(!dialog->firstBox()->isEnabled());
    dialog->turnFramesBox()->setValue(4);
    dialog->widthBox()->setValue(48);
    dialog->heightBox()->setValue(40);
    const QString out = dir.filePath("turn.png");
    dialog->outputEdit()->setText(out);
    QSignalSpy finished(dialog, &ui::MovieDialog::finished);
    dialog->start();
    QVERIFY(finished.wait(20000));
    const render::DisplaySettings display = w.displayPanel()->settings();
    const render::Colormap map = render::loadColormap(display.colormap);
    auto cpu = compute::makeCpuBackend(1);
    for (int k = 0; k < 4; ++k) {
      const auto d = stacklens::testing::decode(
          dir.filePath(QString("turn_%1.png").arg(k, 4, 10, QChar('0'))).toStdString());
      QCOMPARE(d.width, 48);
      QCOMPARE(d.height, 40);
      compute::VolumeRenderParams p = panel->params();
      p.width = 48, p.height = 40;
      compute::turnView(panel->params().rotation, 0, 90.0 * k, p.rotation);
      const compute::Image want = cpu->renderVolume(panel->volume()->volume, p);
      int bad = 0;
      for (int i = 0; i < 48 * 40; ++i) {
        const uint32_t c =
            map.rgba[size_t(std::max(render::colourIndex(display, want.data()[i]), 0))];
        bad += int(d.rgb[0][size_t(i * 3)]) != int(c & 0xff);
      }
      QCOMPARE(bad, 0);
    }
#endif
  }

  // Without FFmpeg the dialog says so by name, writes nothing and starts no job.
  void withoutFfmpegSaysSo() {
#ifdef STACKLENS_HAVE_MOVIE
    QSKIP("built with FFmpeg");
#else
    QTemporaryDir dir;
    const QString in = dir.filePath("small.tif");
    writeTestStack(in, 3, 8, 8);
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, in));
    ui::MovieDialog* dialog = ui::openMovieExport(&w);
    dialog->outputEdit()->setText(dir.filePath("movie.mp4"));
    dialog->start();
    QVERIFY(dialog->statusLabel()->text().contains("FFmpeg"));
    QVERIFY(!dialog->running());
    QCOMPARE(QDir(dir.path()).entryList({"movie*"}, QDir::Files).size(), 0);
#endif
  }

  void cancelLeavesNothing() {
#ifndef STACKLENS_HAVE_MOVIE
    QSKIP("built without FFmpeg");
#else
    QTemporaryDir dir;
    const QString in = dir.filePath("big.tif");
    writeTestStack(in, 400, 256, 256);
    ui::MainWindow w;
    QVERIFY(stacklens::testing::openInWindow(w, in));
    ui::MovieDialog* dialog = ui::openMovieExport(&w);
    const QString out = dir.filePath("cancelled.mp4");
    dialog->outputEdit()->setText(out);
    QSignalSpy cancelled(dialog, &ui::MovieDialog::cancelled);
    QSignalSpy failed(dialog, &ui::MovieDialog::failed);
    dialog->start();
    dialog->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(cancelled.count() + failed.count() == 1, 20000);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(QDir(dir.path()).entryList({"cancelled*"}, QDir::Files).size(), 0);
#endif
  }
};

STACKLENS_GL_QTEST_MAIN(MovieDialogTest)

#include "movie_dialog_qtest.moc"
