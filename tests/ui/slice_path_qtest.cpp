// The slice path without a window: the slider's index reaches the view and the tools, each tool
// told after those before it; a tool may hold the raw slice off the view; a request overtaken by
// a later one is never shown.
#include <QSignalSpy>
#include <QtTest>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "tests/render/gl_qtest_main.h"
#include "tests/ui/memory_stack.h"
#include "ui/display/display_panel.h"
#include "ui/frame/navigation_bar.h"
#include "ui/frame/slice_path.h"
#include "ui/stack/stack_opener.h"

using namespace stacklens;
using stacklens::testing::MemoryStack;

namespace {

constexpr int64_t kZ = 8, kY = 4, kX = 5;

// A stack whose slice gated is read only once open() is called: a slow read that the next
// request overtakes.
class GatedStack : public MemoryStack {
 public:
  explicit GatedStack(int64_t gated) : MemoryStack(kZ, kY, kX), gated_(gated) {}
  void readSlice(int64_t z, float* out) const override {
    if (z == gated_) {
      std::unique_lock lock(mutex_);
      opened_.wait(lock, [this] { return open_; });
    }
    MemoryStack::readSlice(z, out);
  }
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }

 private:
  int64_t gated_;
  mutable std::mutex mutex_;
  mutable std::condition_variable opened_;
  bool open_ = false;
};

// Writes what the path tells it to a log shared with the other tools, which shows their order.
class RecordingTool : public ui::ViewerTool {
 public:
  RecordingTool(QString name, QStringList* log, bool holds = false)
      : name_(std::move(name)), log_(log), holds_(holds) {}
  void stackOpened(const ui::OpenedStackView&) override { log_->append(name_ + " opened"); }
  void sliceRequested(int z) override {
    log_->append(QString("%1 requested %2").arg(name_).arg(z));
  }
  bool holdSlice(const ui::ShownSlice& slice) override {
    log_->append(QString("%1 holds %2").arg(name_).arg(slice.z));
    return holds_;
  }
  void sliceShown(const ui::ShownSlice& slice) override {
    log_->append(QString("%1 shown %2").arg(name_).arg(slice.z));
  }

 private:
  QString name_;
  QStringList* log_;
  bool holds_;
};

// The window's parts that a slice path goes through, without the window.
struct PathParts {
  render::SliceView view;
  ui::NavigationBar navigation;
  ui::DisplayPanel display;
  std::vector<ui::ViewerTool*> tools;
  QThreadPool pool;
  std::unique_ptr<ui::SlicePath> path;

  PathParts() {
    pool.setMaxThreadCount(2);  // as the window's: a read may go on while another waits
    view.resize(320, 240);
    path = std::make_unique<ui::SlicePath>(
        ui::SlicePath::Parts{&view, &navigation, &display, &tools, &pool});
    QObject::connect(&navigation, &ui::NavigationBar::valueChanged, path.get(),
                     &ui::SlicePath::request);
  }
  // Reads post their results to the path: they end before it goes.
  ~PathParts() {
    path->stop();
    pool.waitForDone();
  }

  // Opens stack at slice z, as the opener hands it over (slice z already read).
  void open(std::shared_ptr<io::StackReader> stack, int z) {
    auto first = std::make_shared<std::vector<float>>(size_t(kY * kX));
    stack->readSlice(z, first->data());
    ui::OpenedStack opened;
    opened.reader = std::move(stack);
    opened.z = z;
    opened.slice = std::move(first);
    opened.fromFile = false;
    path->setStack(opened);
  }
};

// Value (y 0, x 0) of slice z of a MemoryStack.
float firstValue(int z) { return float(100 * z); }

}  // namespace

class SlicePathTest : public QObject {
  Q_OBJECT

 private slots:
  void theSliderIndexReachesTheViewAndEachToolInTurn() {
    PathParts parts;
    QStringList log;
    RecordingTool a("a", &log), b("b", &log);
    parts.tools = {&a, &b};
    parts.open(std::make_shared<MemoryStack>(kZ, kY, kX), 2);
    QCOMPARE(log, QStringList({"a opened", "b opened", "a requested 2", "b requested 2",
                               "a holds 2", "b holds 2", "a shown 2", "b shown 2"}));
    QCOMPARE(parts.navigation.count(), int(kZ));
    QCOMPARE(parts.navigation.value(), 2);
    QCOMPARE(parts.path->currentZ(), 2);
    QVERIFY(parts.view.slice());
    QCOMPARE(parts.view.slice()->front(), firstValue(2));

    log.clear();
    QSignalSpy requested(parts.path.get(), &ui::SlicePath::sliceRequested);
    QSignalSpy shown(parts.path.get(), &ui::SlicePath::sliceShown);
    parts.navigation.setValue(5);
    QCOMPARE(requested.count(), 1);
    QCOMPARE(requested.first().first().toInt(), 5);
    QTRY_COMPARE(shown.count(), 1);
    QCOMPARE(shown.first().first().toInt(), 5);
    QCOMPARE(log, QStringList({"a requested 5", "b requested 5", "a holds 5", "b holds 5",
                               "a shown 5", "b shown 5"}));
    QCOMPARE(parts.path->currentZ(), 5);
    QCOMPARE(parts.path->currentSlice()->front(), firstValue(5));
    QCOMPARE(parts.view.slice()->front(), firstValue(5));
  }

  // A tool that holds the raw slice (live processing, its processed slice in its place) keeps it
  // off the view, and the tools after it are not asked; all of them are told it is shown.
  void aToolThatHoldsTheSliceKeepsItOffTheView() {
    PathParts parts;
    QStringList log;
    RecordingTool a("a", &log, true), b("b", &log);
    parts.tools = {&a, &b};
    parts.open(std::make_shared<MemoryStack>(kZ, kY, kX), 3);
    QCOMPARE(log, QStringList({"a opened", "b opened", "a requested 3", "b requested 3",
                               "a holds 3", "a shown 3", "b shown 3"}));
    QVERIFY(!parts.view.slice());
    QCOMPARE(parts.path->currentSlice()->front(), firstValue(3));
  }

  void aRequestOvertakenByALaterOneIsNeverShown() {
    PathParts parts;
    QStringList log;
    RecordingTool a("a", &log);
    parts.tools = {&a};
    auto stack = std::make_shared<GatedStack>(5);
    parts.open(stack, 2);
    QSignalSpy shown(parts.path.get(), &ui::SlicePath::sliceShown);
    parts.navigation.setValue(5);  // its read waits at the gate
    parts.navigation.setValue(1);
    QTRY_COMPARE(parts.path->currentZ(), 1);
    // The read of slice 5 ends, and its result is queued to the path before the pool is done.
    stack->open();
    parts.pool.waitForDone();
    QVERIFY(parts.path->slices()->contains(5));
    QCoreApplication::processEvents();
    QCOMPARE(parts.path->currentZ(), 1);
    QCOMPARE(parts.path->currentSlice()->front(), firstValue(1));
    QCOMPARE(parts.view.slice()->front(), firstValue(1));
    QCOMPARE(shown.count(), 1);
    QCOMPARE(shown.first().first().toInt(), 1);
    QVERIFY(!log.contains("a shown 5"));
    QVERIFY(log.contains("a shown 1"));
  }
};

STACKLENS_GL_QTEST_MAIN(SlicePathTest)
#include "slice_path_qtest.moc"
