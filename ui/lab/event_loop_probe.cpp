// EventLoopProbe: a precise timer whose late ticks measure the GUI thread's pauses.
#include "ui/lab/event_loop_probe.h"

#include <algorithm>

namespace stacklens::ui {

namespace {
// Short enough to see a pause of a few frames, long enough to cost the GUI thread nothing.
constexpr int kIntervalMs = 5;
}  // namespace

EventLoopProbe::EventLoopProbe(QObject* parent) : QObject(parent) {
  timer_.setTimerType(Qt::PreciseTimer);
  timer_.setInterval(kIntervalMs);
  connect(&timer_, &QTimer::timeout, this, &EventLoopProbe::tick);
}

void EventLoopProbe::start() {
  longestNs_ = 0;
  ticks_ = 0;
  clock_.start();
  lastNs_ = 0;
  timer_.start();
}

void EventLoopProbe::stop() {
  if (!timer_.isActive()) return;
  tick();  // a pause that ends with the run counts too
  timer_.stop();
}

void EventLoopProbe::tick() {
  const qint64 now = clock_.nsecsElapsed();
  longestNs_ = std::max(longestNs_, now - lastNs_ - qint64(kIntervalMs) * 1000000);
  lastNs_ = now;
  ++ticks_;
}

}  // namespace stacklens::ui
