// The viewer's slider, views and textures count in int: larger stacks are refused, never
// narrowed. A slice is held in memory whole unless it is shown from display levels.
#include "ui/stack/stack_opener.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <limits>

#include "io/file_checks.h"
#include "io/io_error.h"
#include "io/read_stop.h"
#include "ui/display/level_view.h"

namespace stacklens::ui {

namespace {

bool inLevels(const io::StackInfo& info, size_t largePlaneBytes) {
  return double(info.x) * double(info.y) * sizeof(float) > double(largePlaneBytes);
}

OpenedStack readMiddle(std::shared_ptr<io::StackReader> reader, size_t largePlaneBytes) {
  const auto& info = reader->info();
  OpenedStack s;
  s.z = static_cast<int>(info.z / 2);
  if (inLevels(info, largePlaneBytes)) {
    // The coarse level is held for the whole plane: a quarter of largePlaneBytes at most.
    const auto side = std::clamp<int64_t>(int64_t(std::sqrt(double(largePlaneBytes) / 16.0)), 16,
                                          io::DisplayLevels::kCoarsestSide);
    s.levels = io::DisplayLevels::of(reader, side);
    s.coarse = LevelView::readCoarse(*s.levels, s.z);
    s.reader = std::move(reader);
    return s;
  }
  auto pixels = std::make_shared<std::vector<float>>(static_cast<size_t>(info.x * info.y));
  reader->readSlice(s.z, pixels->data());
  s.slice = std::move(pixels);
  s.reader = std::move(reader);
  return s;
}

}  // namespace

StackOpener::StackOpener(QThreadPool* pool, QObject* parent) : QObject(parent), pool_(pool) {}

QString StackOpener::refusal(const io::StackInfo& info, bool inLevels) {
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if (info.x > kMaxInt || info.y > kMaxInt || info.z > kMaxInt)
    return tr("%1 × %2 × %3 is beyond what the viewer shows (at most %4 along each "
              "axis); stacklens-cli processes it")
        .arg(info.z)
        .arg(info.y)
        .arg(info.x)
        .arg(kMaxInt);
  const double sliceBytes = double(info.x) * double(info.y) * sizeof(float);
  if (!inLevels && sliceBytes > double(io::allocationCap()))
    return tr("one slice of %1 × %2 needs %3 GiB, more than the %4 GiB the viewer may "
              "hold; stacklens-cli processes it in blocks")
        .arg(info.y)
        .arg(info.x)
        .arg(sliceBytes / double(1ull << 30), 0, 'f', 1)
        .arg(double(io::allocationCap()) / double(1ull << 30), 0, 'f', 0);
  return {};
}

void StackOpener::stopWaiting() {
  if (waiting_) waiting_->store(true);
  waiting_.reset();
}

void StackOpener::open(const QString& path, io::OpenOptions options) {
  const quint64 generation = ++generation_;
  stopWaiting();
  auto stop = std::make_shared<std::atomic<bool>>(false);
  waiting_ = stop;
  (void)QtConcurrent::run(pool_, [this, path, options, generation, stop, large = largePlaneBytes_] {
    OpenedStack s;
    QString error;
    try {
      const io::ReadStopScope scope(stop.get());
      auto reader = io::openStack(path.toStdString(), options);
      const auto& info = reader->info();
      if (info.x <= 0 || info.y <= 0 || info.z <= 0)
        throw io::IoError(path.toStdString(), "no image data");
      if (const QString why = refusal(info, inLevels(info, large)); !why.isEmpty())
        throw io::IoError(path.toStdString(), why.toStdString());
      s = readMiddle(std::move(reader), large);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, s, error, path, generation] {
          if (generation != generation_) return;
          waiting_.reset();
          if (!s.reader)
            emit failed(path, error);
          else
            emit opened(path, s);
        },
        Qt::QueuedConnection);
  });
}

void StackOpener::openReader(std::shared_ptr<io::StackReader> reader) {
  ++generation_;
  stopWaiting();
  const QString path = QString::fromStdString(reader->info().path);
  if (const QString why = refusal(reader->info(), inLevels(reader->info(), largePlaneBytes_));
      !why.isEmpty()) {
    emit failed(path, why);
    return;
  }
  OpenedStack s = readMiddle(std::move(reader), largePlaneBytes_);
  s.fromFile = false;
  emit opened(path, s);
}

}  // namespace stacklens::ui
