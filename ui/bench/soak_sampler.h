// Per-minute figures of a long benchmark run (--soak-minutes): the steps' latency percentiles,
// the process's resident memory and the device memory in use, so that a leak or a slowdown over
// a long session shows. The summary compares every later minute with the first: memory growth
// in per cent of the first minute's end, the worst later p99 and max against the first minute's
// p99, and how many later steps took longer than that p99.
#pragma once

#include <QElapsedTimer>
#include <QJsonObject>
#include <cstdint>
#include <functional>
#include <vector>

namespace stacklens::ui {

class SoakSampler {
 public:
  // minutes <= 0: off. device: the CUDA device whose memory to watch, −1 for none. clock: minutes
  // since start() (tests give their own), default the wall clock.
  SoakSampler(double minutes, int device, std::function<double()> clock = {});
  bool enabled() const { return minutes_ > 0; }
  void start();
  // One step's latency. Returns true when a minute closed with this step (the caller may then
  // clear its own per-step records, so that they do not grow over the run).
  bool add(double ms);
  bool over() const { return enabled() && started_ && minutesDone() >= minutes_; }
  QJsonObject report() const;

 private:
  struct Minute {
    int steps;
    double p50, p99, max;
    double rssMb, deviceMb;  // at the minute's end; deviceMb < 0: not watched
  };
  double minutesDone() const {
    if (!started_) return 0.0;
    return clock_ ? clock_() : wall_.nsecsElapsed() / 60e9;
  }
  void closeMinute();

  double minutes_;
  int device_;
  std::function<double()> clock_;
  QElapsedTimer wall_;
  bool started_ = false;
  std::vector<double> window_;  // this minute's latencies; capacity kept across minutes
  std::vector<Minute> closed_;
  int64_t laterSteps_ = 0, laterStepsOverFirstP99_ = 0;  // steps after the first minute
};

// Empties a per-step record for the next minute of a soak, keeping room for a minute's steps:
// cleared, not freed, so that the record does not grow with the run and count as the viewer's.
void startMinuteOf(std::vector<double>& steps);

// The process's resident set in MiB (from /proc/self/statm; 0 where it cannot be read).
double residentMb();
// The process's largest resident set so far in MiB (VmHWM of /proc/self/status; 0 where it
// cannot be read).
double peakResidentMb();

}  // namespace stacklens::ui
