// Tools ▸ Speedup lab…: its own window. Choices on the left, the figure of the chosen op on the
// right; a sweep runs in the background with progress and Cancel and draws its points as they
// arrive; Open sweep… shows a CSV saved elsewhere (e.g. on a GPU machine); Export PNG/SVG/CSV,
// Copy figure and a presentation mode for the projector.
#pragma once

#include <QMainWindow>
#include <QTimer>
#include <functional>

#include "compute/image.h"
#include "compute/lab/sweep.h"

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;

namespace stacklens::ui {

class EventLoopProbe;
class SpeedupLabChart;
class SpeedupLabControls;
class SpeedupLabWorker;

class SpeedupLabWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit SpeedupLabWindow(QWidget* parent = nullptr);

  // Gives the viewer's slice (a host 2D image) when a run starts with "the open slice"; empty
  // when none is open.
  void setSliceProvider(std::function<compute::Image()> provider);

  // Starts a sweep with the controls' choices; false (and a message) for a bad choice.
  bool startRun();
  void cancelRun();
  bool running() const;
  // The window's longest pause (ms) during the last run: the work stays off the GUI thread.
  double longestPauseMs() const;
  // Shows a sweep saved as CSV; false (and a message) when it cannot be read.
  bool openSweep(const QString& path);
  // Shows a sweep read elsewhere; source names it in the status line.
  void showSweep(compute::lab::Sweep sweep, const QString& source);
  bool exportCsv(const QString& path);
  bool exportSvg(const QString& path);  // every op, one panel each (compute/lab/svg_plot.h)
  bool exportPng(const QString& path);  // the figure as shown
  void copyFigure();
  void setPresentation(bool on);
  bool presentation() const { return presentation_; }
  // Shows op (one of the sweep's).
  void showOp(const QString& op);

  const compute::lab::Sweep& sweep() const { return sweep_; }
  SpeedupLabChart* chart() const { return chart_; }
  SpeedupLabControls* controls() const { return controls_; }
  QLabel* status() const { return status_; }
  QLabel* machineText() const { return machine_; }

 signals:
  void runFinished();
  // View ▸ Presentation mode toggled here (the viewer applies it to its timing panel too).
  void presentationChanged(bool on);

 private:
  void buildMenus();
  void addPoint(const compute::lab::Point& p);
  void setSweep(compute::lab::Sweep sweep);
  void refresh();
  void setRunning(bool running);
  void updateMachine();
  QString pauseNote() const;
  QImage figure() const;

  QWidget* side_;  // the choices, hidden in presentation mode
  SpeedupLabControls* controls_;
  SpeedupLabChart* chart_;
  SpeedupLabWorker* worker_;
  EventLoopProbe* probe_;
  QListWidget* ops_;
  QPushButton* run_;
  QPushButton* cancel_;
  QProgressBar* progress_;
  QTimer redraw_;  // coalesces the redraws of points that arrive close together
  QLabel* machine_;
  QLabel* status_;
  compute::lab::Sweep sweep_;
  std::function<compute::Image()> slice_;
  bool presentation_ = false;
};

}  // namespace stacklens::ui
