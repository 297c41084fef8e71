// View ▸ Channels on the ImageJ hyperstack fixture (2 channels × 3 slices of 6 × 8): both planes
// become channels whose slices are the fixture's reference values, the main view's pixels read
// back are their colours added (render::compositeColour), the readout gives both values, the
// slider brings the next slice of every channel, a hidden channel and new colours are drawn, a
// file of another size is refused with the reason, and turning blending off shows the slice.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <vector>

#include "io/stack_writer.h"
#include "render/composite_layer.h"
#include "render/slice_view.h"
#include "tests/render/gl_qtest_main.h"
#include "tests/ui/open_in_window.h"
#include "ui/display/channels_panel.h"
#include "ui/display/channels_tool.h"
#include "ui/frame/main_window.h"
#include "ui/frame/navigation_bar.h"
#include "ui/frame/pixel_readout.h"

using namespace stacklens;

namespace {

const QString kFixture = QStringLiteral(STACKLENS_IO_FIXTURES "/imagej_hyperstack.tif");

// The fixture's reference values (float32, z, y, x) for one plane.
std::vector<float> reference(int plane) {
  std::ifstream in((kFixture + QString(".h0.p%1.f32").arg(plane)).toStdString(), std::ios::binary);
  std::vector<float> v(3 * 6 * 8);
  in.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
  return in ? v : std::vector<float>{};
}

int mismatches(render::SliceView* view, const std::vector<render::CompositeChannel>& channels) {
  const QImage frame = view->grabFramebuffer().convertToFormat(QImage::Format_RGB32);
  int bad = 0;
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 8; ++x) {
      // Off the pixel's centre: the crosshair's lines run through the centres of its row and
      // column.
      const QPointF at = view->imageToWidget({x + 0.3, y + 0.3});
      const QColor got = frame.pixelColor(int(at.x()), int(at.y()));
      const QColor want = render::compositeColour(channels, size_t(y * 8 + x));
      const bool wrong = std::abs(got.red() - want.red()) > 1 ||
                         std::abs(got.green() - want.green()) > 1 ||
                         std::abs(got.blue() - want.blue()) > 1;
      if (wrong && bad < 3)
        qWarning("pixel (%d, %d): got %s, want %s", x, y, qPrintable(got.name()),
                 qPrintable(want.name()));
      bad += wrong;
    }
  return bad;
}

}  // namespace

class ChannelsTest : public QObject {
  Q_OBJECT
 private slots:
  void blendsTheHyperstacksChannels() {
    const std::vector<float> p0 = reference(0), p1 = reference(1);
    QVERIFY(!p0.empty() && !p1.empty());
    ui::MainWindow w;
    QVERIFY(testing::openInWindow(w, kFixture, QSize(900, 700)));
    ui::ChannelsPanel* panel = ui::showChannels(&w);
    QSignalSpy shown(panel, &ui::ChannelsPanel::compositeShown);
    QTRY_VERIFY_WITH_TIMEOUT(panel->channelCount() == 2 && panel->channels().size() == 2, 10000);
    render::SliceView* view = w.sliceView();
    const int z = w.slicePath()->currentZ();
    for (int i = 0; i < 48; ++i) {
      QCOMPARE((*panel->channels()[0].data)[size_t(i)], p0[size_t(z * 48 + i)]);
      QCOMPARE((*panel->channels()[1].data)[size_t(i)], p1[size_t(z * 48 + i)]);
    }
    QCOMPARE(panel->channels()[0].colormap, QString("red"));
    QCOMPARE(panel->channels()[1].colormap, QString("green"));
    QCOMPARE(view->composite().size(), size_t(2));
    QTRY_COMPARE(mismatches(view, panel->channels()), 0);
    const double bright = *std::max_element(p0.begin() + z * 48, p0.begin() + z * 48 + 48);
    QVERIFY(bright > panel->channels()[0].low);  // not all black

    w.hoverAt({3, 2});
    QVERIFY(w.tool<ui::PixelReadout>()->text().contains(
        QString::number(p0[size_t(z * 48 + 2 * 8 + 3)], 'g', 7)));
    QVERIFY(w.tool<ui::PixelReadout>()->text().contains(
        QString::number(p1[size_t(z * 48 + 2 * 8 + 3)], 'g', 7)));

    // The slider: every channel's next slice.
    shown.clear();
    const int next = z == 2 ? 1 : 2;
    w.navigation()->setValue(next);
    QTRY_VERIFY_WITH_TIMEOUT(
        !panel->channels().empty() && (*panel->channels()[1].data)[5] == p1[size_t(next * 48 + 5)],
        10000);
    QTRY_COMPARE(mismatches(view, panel->channels()), 0);

    // New colours, limits, a hidden channel.
    panel->setChannel(0, "magenta", p0[0], p0[0] + 50, true);
    panel->setChannel(1, "cyan", 0, 1, false);
    QCOMPARE(view->composite().size(), size_t(2));
    QCOMPARE(mismatches(view, panel->channels()), 0);

    // Another size is refused; the same file again is a third channel.
    QTemporaryDir dir;
    std::vector<float> other(4 * 5, 1.f);
    const QString small = dir.filePath("small.fits");
    io::writeStack(small.toStdString(), other.data(), 1, 4, 5, {});
    panel->addChannel(small, -1, 0);
    QTRY_VERIFY(panel->status().contains("small.fits"));
    QCOMPARE(panel->channelCount(), 2);
    panel->addChannel(kFixture, -1, 1);
    QTRY_COMPARE_WITH_TIMEOUT(int(panel->channels().size()), 3, 10000);

    panel->setBlending(false);
    QVERIFY(view->composite().empty());
  }
};

STACKLENS_GL_QTEST_MAIN(ChannelsTest)
#include "channels_qtest.moc"
