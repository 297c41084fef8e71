// `stacklens --lab-benchmark`: the speedup lab's default sweep in its window, as a class would
// run it, reporting the points, the time and the window's longest pause (the goal: 50 ms).
#pragma once

class QApplication;

namespace stacklens::ui {

// Shows the lab, runs the default sweep and prints one JSON line on stdout; returns the exit code
// (0, or 1 when the sweep failed).
int runLabBenchmark(QApplication& app);

}  // namespace stacklens::ui
