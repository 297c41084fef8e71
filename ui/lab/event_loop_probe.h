// How long the GUI thread went without returning to its event loop while work ran beside it: the
// speedup lab's check that the window never froze (the goal is 50 ms), shown after each sweep and
// printed by `stacklens --lab-benchmark`.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace stacklens::ui {

class EventLoopProbe : public QObject {
  Q_OBJECT
 public:
  explicit EventLoopProbe(QObject* parent = nullptr);

  void start();  // forgets what an earlier run measured
  void stop();
  // The longest time between two ticks beyond the ticks' interval, in ms: how long the event
  // loop could not run (input, painting, the worker's results all wait that long).
  double longestPauseMs() const { return double(longestNs_) * 1e-6; }
  int ticks() const { return ticks_; }

 private:
  void tick();

  QTimer timer_;
  QElapsedTimer clock_;
  qint64 lastNs_ = 0, longestNs_ = 0;
  int ticks_ = 0;
};

}  // namespace stacklens::ui
