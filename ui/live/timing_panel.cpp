// The timing panel: fills its table and chart from measured pipeline timings, never from constants.
#include "ui/live/timing_panel.h"

#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPainter>
#include <QSaveFile>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace stacklens::ui {
namespace {

const char* kHeaders[] = {"Stage",
                          "CPU ms (threads)",
                          "GPU kernel ms",
                          "GPU ms incl. transfers",
                          "Speedup (kernel)",
                          "Speedup (incl. transfers)",
                          "max |CPU − GPU|",
                          "rel. L2"};

const char* kTooltips[] = {
    "Pipeline stage, in the order it runs. 'total' is the whole run of the slice.",
    "Wall-clock ms of the operation on the CPU backend (FFTW + thread pool), after the call "
    "returned; in brackets the threads it used.",
    "Device time of the operation alone with its input already on the GPU: CUDA event time when "
    "the backend reports one, else synchronized wall-clock time. Excludes uploads and downloads — "
    "on its own it flatters the GPU.",
    "Wall-clock ms for upload of the stage's input + the operation + download of its result, "
    "synchronized. What a user waits for when the data starts and ends on the host.",
    "CPU ms ÷ GPU kernel ms.",
    "CPU ms ÷ GPU ms including transfers: the honest speedup.",
    "Largest absolute difference between the two backends' outputs of this stage (statistics: "
    "clipped median/std/mean; segmentation: source mask).",
    "‖CPU − GPU‖₂ / ‖CPU‖₂ over the stage's output."};

QString ms(double v) {
  if (!std::isfinite(v)) return QStringLiteral("—");
  return QString::number(v, 'f', v >= 100 ? 1 : v >= 1 ? 2 : 3);
}
QString ratio(double v) {
  return std::isfinite(v) ? QStringLiteral("×") + QString::number(v, 'f', v >= 10 ? 1 : 2)
                          : QStringLiteral("—");
}
QString general(double v, char format, int precision) {
  return std::isfinite(v) ? QString::number(v, format, precision) : QStringLiteral("—");
}
QString csvNumber(double v) { return std::isfinite(v) ? QString::number(v, 'g', 10) : QString(); }

QStringList cells(const TimingRow& r) {
  QString cpu = ms(r.cpuMs);
  if (std::isfinite(r.cpuMs) && r.cpuThreads > 0) cpu += QString(" (%1)").arg(r.cpuThreads);
  QString kernel = ms(r.gpuKernelMs);
  if (std::isfinite(r.gpuKernelMs) && !r.gpuKernelFromDevice) kernel += "*";
  return {r.stage,
          cpu,
          kernel,
          ms(r.gpuTotalMs),
          ratio(r.speedupKernel),
          ratio(r.speedupTotal),
          general(r.maxAbs, 'g', 3),
          general(r.relL2, 'e', 2)};
}

}  // namespace

TimingChart::TimingChart(QWidget* parent) : QWidget(parent) { setMinimumHeight(100); }

void TimingChart::setRows(std::vector<TimingRow> rows) {
  rows_ = std::move(rows);
  update();
}

void TimingChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  std::vector<const TimingRow*> stages;
  for (const auto& r : rows_)
    if (r.stage != "total") stages.push_back(&r);
  if (stages.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("No timings yet"));
    return;
  }
  auto gpuBar = [](const TimingRow& r) {
    return std::isfinite(r.gpuTotalMs) ? r.gpuTotalMs : r.gpuKernelMs;
  };
  double maxMs = 0;
  for (const auto* r : stages) {
    if (std::isfinite(r->cpuMs)) maxMs = std::max(maxMs, r->cpuMs);
    if (std::isfinite(gpuBar(*r))) maxMs = std::max(maxMs, gpuBar(*r));
  }
  if (maxMs <= 0) maxMs = 1;
  const auto px = [this](int v) { return int(std::lround(v * scale_)); };
  const int labelWidth = px(100), valueWidth = px(70), legend = px(18);
  const int rowHeight = std::max(px(16), (height() - legend) / int(stages.size()));
  const int barSpace = std::max(10, width() - labelWidth - valueWidth - 8);
  const QColor cpuColour(70, 130, 180), gpuColour(118, 185, 0);
  p.setPen(palette().text().color());
  p.fillRect(px(4), px(4), px(10), px(10), cpuColour);
  p.drawText(px(18), px(14), tr("CPU"));
  p.fillRect(px(60), px(4), px(10), px(10), gpuColour);
  p.drawText(px(74), px(14), tr("GPU incl. transfers (kernel only when not measured)"));
  for (size_t i = 0; i < stages.size(); ++i) {
    const TimingRow& r = *stages[i];
    const int top = legend + int(i) * rowHeight;
    const int half = std::max(4, rowHeight / 2 - 2);
    p.setPen(palette().text().color());
    p.drawText(QRect(4, top, labelWidth - 8, rowHeight), Qt::AlignVCenter | Qt::AlignLeft, r.stage);
    auto bar = [&](double v, int y, const QColor& c) {
      if (!std::isfinite(v)) return;
      const int w = std::max(1, int(std::lround(barSpace * v / maxMs)));
      p.fillRect(labelWidth, y, w, half, c);
      p.setPen(palette().text().color());
      p.drawText(QRect(labelWidth + w + 4, y - 2, valueWidth, half + 4),
                 Qt::AlignVCenter | Qt::AlignLeft, ms(v));
    };
    bar(r.cpuMs, top + 1, cpuColour);
    bar(gpuBar(r), top + 1 + half, gpuColour);
  }
}

void TimingChart::setScale(double scale) {
  scale_ = scale;
  setMinimumHeight(int(std::lround(100 * scale)));  // the constructor's 100 at scale 1
  update();
}

void TimingPanel::setPresentation(bool on) {
  presentation_ = on;
  QFont f = QApplication::font();
  if (on) f.setPointSizeF(16);
  setFont(f);  // children (table, labels, chart) inherit it
  chart_->setScale(on ? 2 : 1);
  table_->resizeColumnsToContents();
}

TimingPanel::TimingPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  devices_ = new QLabel(this);
  devices_->setWordWrap(true);
  devices_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_ = new QLabel(tr("No processing yet."), this);
  summary_->setWordWrap(true);
  table_ = new QTableWidget(0, 8, this);
  for (int c = 0; c < 8; ++c) {
    auto* item = new QTableWidgetItem(tr(kHeaders[c]));
    item->setToolTip(tr(kTooltips[c]));
    table_->setHorizontalHeaderItem(c, item);
  }
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  chart_ = new TimingChart(this);

  auto* buttons = new QHBoxLayout();
  benchmark_ = new QPushButton(tr("Benchmark this slice"), this);
  benchmark_->setToolTip(
      tr("One warm-up run, then the chosen number of runs; the table shows "
         "per-stage medians."));
  repeats_ = new QSpinBox(this);
  repeats_->setRange(1, 100);
  repeats_->setValue(5);
  repeats_->setSuffix(tr(" runs"));
  auto* copy = new QPushButton(tr("Copy as text"), this);
  auto* csv = new QPushButton(tr("Export CSV…"), this);
  buttons->addWidget(benchmark_);
  buttons->addWidget(repeats_);
  buttons->addStretch(1);
  buttons->addWidget(copy);
  buttons->addWidget(csv);

  layout->addWidget(devices_);
  layout->addWidget(summary_);
  layout->addWidget(table_, 2);
  layout->addWidget(chart_, 1);
  layout->addLayout(buttons);

  connect(benchmark_, &QPushButton::clicked, this,
          [this] { emit benchmarkRequested(repeats_->value()); });
  connect(copy, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(asText()); });
  connect(csv, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export timings"), "timings.csv", "CSV (*.csv)");
    QString error;
    if (!path.isEmpty() && !exportCsv(path, &error)) summary_->setText(error);
  });
  setDevices({}, {});
}

void TimingPanel::setDevices(const QString& cpu, const QString& gpu) {
  if (!cpu.isEmpty()) cpuDevice_ = cpu;
  if (!gpu.isEmpty()) gpuDevice_ = gpu;
  QString text = tr("CPU: %1").arg(cpuDevice_.isEmpty() ? tr("—") : cpuDevice_);
  text += "\n" + tr("GPU: %1").arg(gpuDevice_.isEmpty() ? tr("—") : gpuDevice_);
  if (!secondIsCpu_.isEmpty()) text += "\n" + secondIsCpu_;
  if (!displayPath_.isEmpty()) text += "\n" + displayPath_;
  devices_->setText(text);
}

void TimingPanel::setDisplayPath(const QString& text) {
  if (text == displayPath_) return;
  displayPath_ = text;
  setDevices({}, {});
}

void TimingPanel::clear() {
  rows_.clear();
  summary_->setText(tr("No processing yet."));
  fill();
}

namespace {

// Which of a run's results fills the CPU columns and which the GPU's (a comparison has both),
// and the stage differences between them.
struct ResultSides {
  const compute::PipelineResult* cpu = nullptr;
  const compute::PipelineResult* gpu = nullptr;
  const std::vector<compute::StageDifference>* differences = nullptr;
};

ResultSides sidesOf(const ProcessingResult& result) {
  ResultSides sides;
  if (result.comparison) {
    const auto& c = *result.comparison;
    const bool aIsGpu = c.a.backend == "cuda" && c.b.backend != "cuda";
    sides.cpu = aIsGpu ? &c.b : &c.a;
    sides.gpu = aIsGpu ? &c.a : &c.b;
    sides.differences = &c.differences;
  } else if (result.result.backend == "cuda") {
    sides.gpu = &result.result;
  } else {
    sides.cpu = &result.result;
  }
  return sides;
}

// One row per stage, then the total: the GPU's total kernel time is the sum of its stages'.
std::vector<TimingRow> timingRows(const ResultSides& sides) {
  std::vector<TimingRow> rows;
  const compute::PipelineResult* cpu = sides.cpu;
  const compute::PipelineResult* gpu = sides.gpu;
  const compute::PipelineResult& any = cpu ? *cpu : *gpu;
  TimingRow total;
  total.stage = "total";
  double kernelSum = 0;
  bool kernelFromDevice = true;
  for (size_t s = 0; s < any.timings.size(); ++s) {
    TimingRow row;
    row.stage = compute::stageName(any.timings[s].stage);
    if (cpu && s < cpu->timings.size()) {
      row.cpuMs = cpu->timings[s].computeMs;
      row.cpuThreads = cpu->timings[s].threads;
    }
    if (gpu && s < gpu->timings.size()) {
      const auto& t = gpu->timings[s];
      row.gpuKernelFromDevice = t.deviceMs >= 0;
      row.gpuKernelMs = row.gpuKernelFromDevice ? t.deviceMs : t.computeMs;
      if (t.withTransfersMs >= 0) row.gpuTotalMs = t.withTransfersMs;
      kernelSum += row.gpuKernelMs;
      kernelFromDevice = kernelFromDevice && row.gpuKernelFromDevice;
    }
    row.speedupKernel = row.cpuMs / row.gpuKernelMs;
    row.speedupTotal = row.cpuMs / row.gpuTotalMs;
    if (sides.differences)
      for (const auto& d : *sides.differences)
        if (d.stage == any.timings[s].stage) {
          row.maxAbs = d.maxAbs;
          row.relL2 = d.relL2;
        }
    rows.push_back(row);
  }
  if (cpu) {
    total.cpuMs = cpu->totalMs;
    total.cpuThreads = cpu->threads;
  }
  if (gpu) {
    total.gpuKernelMs = kernelSum;
    total.gpuKernelFromDevice = kernelFromDevice;
    total.gpuTotalMs = gpu->totalMs;
  }
  total.speedupKernel = total.cpuMs / total.gpuKernelMs;
  total.speedupTotal = total.cpuMs / total.gpuTotalMs;
  rows.push_back(total);
  return rows;
}

}  // namespace

// What the times are: a benchmark's medians or a live run, and on the live GPU path what the
// total holds besides the kernels.
QString TimingPanel::summaryOf(const ProcessingResult& result, bool gpu) const {
  QString what =
      result.benchmark
          ? tr("Benchmark of slice %1: medians of %2 runs after one warm-up run.")
                .arg(result.z)
                .arg(result.repeats)
          : tr("Live run of slice %1%2.")
                .arg(result.z)
                .arg(result.fromCache ? tr(" (from the cache; times of when it ran)") : QString());
  if (gpu && !result.comparison && !result.benchmark) {
    const auto& r = result.result;
    what += tr(" GPU total = waiting for the file %1 ms + upload %2 ms + stages + %3.")
                .arg(r.readMs, 0, 'f', 2)
                .arg(r.uploadMs, 0, 'f', 2)
                .arg(r.downloadMs > 0
                         ? tr("download %1 ms").arg(r.downloadMs, 0, 'f', 2)
                         : tr("no download (the result is written into the view's texture on "
                              "the GPU)"));
  }
  what += tr(" * = synchronized wall time (the backend reports no device time).");
  return what;
}

void TimingPanel::showResult(const ProcessingResultPtr& result) {
  rows_.clear();
  secondIsCpu_.clear();
  if (!result) {
    fill();
    return;
  }
  const ResultSides sides = sidesOf(*result);
  if (result->comparison && sides.gpu->backend != "cuda")
    secondIsCpu_ = tr("No GPU: the GPU columns show a second CPU backend (%1, %2 threads) "
                      "standing in, to check the comparison.")
                       .arg(QString::fromStdString(sides.gpu->backend))
                       .arg(sides.gpu->threads);
  rows_ = timingRows(sides);
  summary_->setText(summaryOf(*result, sides.gpu != nullptr));
  setDevices(sides.cpu ? QString::fromStdString(sides.cpu->device) +
                             QString(", %1 threads").arg(sides.cpu->threads)
                       : QString(),
             sides.gpu ? QString::fromStdString(sides.gpu->device) : QString());
  fill();
}

void TimingPanel::showOperation(const TimingRow& row) {
  auto same = std::find_if(operations_.begin(), operations_.end(),
                           [&](const TimingRow& r) { return r.stage == row.stage; });
  if (same != operations_.end())
    *same = row;
  else
    operations_.push_back(row);
  fill();
}

void TimingPanel::fill() {
  shown_ = rows_;
  shown_.insert(shown_.end(), operations_.begin(), operations_.end());
  table_->setRowCount(int(shown_.size()));
  for (int r = 0; r < int(shown_.size()); ++r) {
    const QStringList text = cells(shown_[r]);
    for (int c = 0; c < 8; ++c) {
      auto* item = new QTableWidgetItem(text[c]);
      if (c > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(r, c, item);
    }
  }
  chart_->setRows(shown_);
}

QString TimingPanel::asText() const {
  std::vector<QStringList> lines;
  QStringList header;
  for (const char* h : kHeaders) header << QString::fromUtf8(h);
  lines.push_back(header);
  for (const auto& r : shown_) lines.push_back(cells(r));
  std::vector<int> widths(8, 0);
  for (const auto& l : lines)
    for (int c = 0; c < 8; ++c) widths[c] = std::max(widths[c], int(l[c].size()));
  QString out = devices_->text() + "\n" + summary_->text() + "\n";
  for (const auto& l : lines) {
    QStringList padded;
    for (int c = 0; c < 8; ++c)
      padded << (c == 0 ? l[c].leftJustified(widths[c]) : l[c].rightJustified(widths[c]));
    out += padded.join("  ") + "\n";
  }
  return out;
}

QString TimingPanel::asCsv() const {
  QString out =
      "stage,cpu_ms,cpu_threads,gpu_kernel_ms,gpu_kernel_is_device_time,gpu_ms_incl_transfers,"
      "speedup_kernel,speedup_incl_transfers,max_abs_diff,rel_l2\n";
  for (const auto& r : shown_) {
    out += QStringList{r.stage,
                       csvNumber(r.cpuMs),
                       r.cpuThreads ? QString::number(r.cpuThreads) : QString(),
                       csvNumber(r.gpuKernelMs),
                       std::isfinite(r.gpuKernelMs) ? (r.gpuKernelFromDevice ? "1" : "0") : "",
                       csvNumber(r.gpuTotalMs),
                       csvNumber(r.speedupKernel),
                       csvNumber(r.speedupTotal),
                       csvNumber(r.maxAbs),
                       csvNumber(r.relL2)}
               .join(',') +
           "\n";
  }
  return out;
}

bool TimingPanel::exportCsv(const QString& path, QString* error) const {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(asCsv().toUtf8()) < 0 ||
      !file.commit()) {
    if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace stacklens::ui
