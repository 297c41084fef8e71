// The CPU-vs-GPU timing panel: per-stage measured times, speedups, result differences, a bar
// chart, "Benchmark this slice", and copy/export of the table.
#pragma once

#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QWidget>
#include <vector>

#include "ui/live/processing_worker.h"

namespace stacklens::ui {

// One row of the table, the numbers as measured (NaN where a figure does not apply).
struct TimingRow {
  QString stage;
  double cpuMs = NAN;
  int cpuThreads = 0;
  double gpuKernelMs = NAN;
  bool gpuKernelFromDevice = false;  // true: the backend's device time; false: synchronized wall
  double gpuTotalMs = NAN;           // with uploads and downloads
  double speedupKernel = NAN, speedupTotal = NAN;
  double maxAbs = NAN, relL2 = NAN;
};

// Horizontal bars per stage: CPU ms and GPU ms including transfers (kernel-only when that is
// all there is), on one linear scale.
class TimingChart : public QWidget {
  Q_OBJECT
 public:
  explicit TimingChart(QWidget* parent = nullptr);
  void setRows(std::vector<TimingRow> rows);
  // Bars, margins and legend scaled by this factor (presentation mode: 2).
  void setScale(double scale);
  double scale() const { return scale_; }
  QSize sizeHint() const override { return {360, 160}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  std::vector<TimingRow> rows_;
  double scale_ = 1;
};

class TimingPanel : public QWidget {
  Q_OBJECT
 public:
  enum Column { Stage, CpuMs, GpuKernelMs, GpuTotalMs, SpeedupKernel, SpeedupTotal, MaxAbs, RelL2 };

  explicit TimingPanel(QWidget* parent = nullptr);

  // Shows a live or benchmark result (single backend or Compare).
  void showResult(const ProcessingResultPtr& result);
  void clear();
  // Shown when no result names them yet (e.g. "GPU: none (no CUDA device found)").
  void setDevices(const QString& cpu, const QString& gpu);
  // How processed slices reach the screen (CUDA–OpenGL interop or a download) and the OpenGL
  // vendor and renderer, shown under the devices.
  void setDisplayPath(const QString& text);
  QString devicesText() const { return devices_->text(); }

  // A whole-stack operation timed on its own (a projection, a moment map) beside its CPU twin:
  // kept below the live rows (clear() and a new stack leave it), one row per stage name.
  void showOperation(const TimingRow& row);

  const std::vector<TimingRow>& rows() const { return shown_; }  // live rows, then operations
  QTableWidget* table() const { return table_; }
  QPushButton* benchmarkButton() const { return benchmark_; }
  QSpinBox* repeatsBox() const { return repeats_; }
  QString summary() const { return summary_->text(); }
  QString asText() const;  // aligned table with the device lines, for the clipboard
  QString asCsv() const;
  // Writes the CSV atomically; on failure returns false and sets *error to the reason.
  bool exportCsv(const QString& path, QString* error = nullptr) const;
  // Presentation mode: 16 pt text in the table and labels and a chart twice the size, for a
  // projector (the speedup lab's presentation mode turns it on too).
  void setPresentation(bool on);
  bool presentation() const { return presentation_; }
  TimingChart* chart() const { return chart_; }

 signals:
  void benchmarkRequested(int repeats);

 private:
  void fill();
  QString summaryOf(const ProcessingResult& result, bool gpu) const;

  std::vector<TimingRow> rows_, operations_, shown_;
  QString cpuDevice_, gpuDevice_, secondIsCpu_, displayPath_;
  QTableWidget* table_;
  TimingChart* chart_;
  bool presentation_ = false;
  QLabel* devices_;
  QLabel* summary_;
  QSpinBox* repeats_;
  QPushButton* benchmark_;
};

}  // namespace stacklens::ui
