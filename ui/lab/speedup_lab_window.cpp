// The speedup lab's window (see speedup_lab_window.h): plumbing between the controls, the worker,
// the figure and the files.
#include "ui/lab/speedup_lab_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

#include "compute/lab/break_even.h"
#include "compute/lab/svg_plot.h"
#include "compute/lab/sweep_csv.h"
#include "compute/params.h"
#include "io/whole_file.h"
#include "ui/display/view_export.h"
#include "ui/lab/event_loop_probe.h"
#include "ui/lab/speedup_lab_chart.h"
#include "ui/lab/speedup_lab_controls.h"
#include "ui/lab/speedup_lab_worker.h"

namespace stacklens::ui {

namespace lab = compute::lab;

namespace {
// The figure's redraws while points arrive: often enough to watch the curves grow.
constexpr int kRedrawMs = 200;
}  // namespace

SpeedupLabWindow::SpeedupLabWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("Speedup lab"));
  setObjectName(QStringLiteral("speedupLab"));
  controls_ = new SpeedupLabControls(this);
  chart_ = new SpeedupLabChart(this);
  worker_ = new SpeedupLabWorker(this);
  probe_ = new EventLoopProbe(this);
  ops_ = new QListWidget(this);
  ops_->setToolTip(tr("The op the figure shows"));
  run_ = new QPushButton(tr("Run sweep"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  progress_ = new QProgressBar(this);
  machine_ = new QLabel(this);
  machine_->setWordWrap(true);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("labStatus"));
  status_->setWordWrap(true);

  auto* left = side_ = new QWidget(this);
  auto* l = new QVBoxLayout(left);
  l->addWidget(controls_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  l->addLayout(buttons);
  l->addWidget(progress_);
  l->addWidget(status_);
  l->addWidget(new QLabel(tr("Show:"), left));
  l->addWidget(ops_, 1);
  auto* right = new QWidget(this);
  auto* r = new QVBoxLayout(right);
  r->addWidget(machine_);
  r->addWidget(chart_, 1);
  auto* split = new QSplitter(this);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(1, 1);
  setCentralWidget(split);
  buildMenus();
  setRunning(false);
  resize(1200, 800);
  redraw_.setSingleShot(true);
  redraw_.setInterval(kRedrawMs);
  connect(&redraw_, &QTimer::timeout, this, [this] { refresh(); });

  connect(run_, &QPushButton::clicked, this, [this] { startRun(); });
  connect(cancel_, &QPushButton::clicked, this, &SpeedupLabWindow::cancelRun);
  connect(ops_, &QListWidget::currentTextChanged, this, [this](const QString&) { refresh(); });
  connect(worker_, &SpeedupLabWorker::pointReady, this, &SpeedupLabWindow::addPoint);
  connect(worker_, &SpeedupLabWorker::machineKnown, this, [this](const lab::Machine& m) {
    sweep_.machine = m;
    updateMachine();
  });
  connect(worker_, &SpeedupLabWorker::progress, this, [this](int done, int total) {
    progress_->setRange(0, total);
    progress_->setValue(done);
  });
  connect(worker_, &SpeedupLabWorker::finished, this, [this](const lab::Sweep& s) {
    setSweep(s);
    setRunning(false);
    status_->setText((s.cancelled ? tr("Cancelled after %1 points.").arg(s.points.size())
                                  : tr("Done: %1 points.").arg(s.points.size())) +
                     pauseNote());
    emit runFinished();
  });
  connect(worker_, &SpeedupLabWorker::failed, this, [this](const QString& why) {
    setRunning(false);
    status_->setText(tr("Failed: %1").arg(why));
    emit runFinished();
  });
}

void SpeedupLabWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open sweep…"), QKeySequence::Open, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open sweep"), {}, tr("Sweeps (*.csv)"));
    if (!path.isEmpty()) openSweep(path);
  });
  auto exporter = [this](const QString& title, const QString& filter,
                         bool (SpeedupLabWindow::*write)(const QString&)) {
    return [this, title, filter, write] {
      const QString path = QFileDialog::getSaveFileName(this, title, {}, filter);
      if (!path.isEmpty()) (this->*write)(path);
    };
  };
  file->addAction(tr("Export &PNG…"), this,
                  exporter(tr("Export PNG"), tr("PNG (*.png)"), &SpeedupLabWindow::exportPng));
  file->addAction(tr("Export &SVG…"), this,
                  exporter(tr("Export SVG"), tr("SVG (*.svg)"), &SpeedupLabWindow::exportSvg));
  file->addAction(tr("Export &CSV…"), this,
                  exporter(tr("Export CSV"), tr("CSV (*.csv)"), &SpeedupLabWindow::exportCsv));
  file->addAction(tr("Cop&y figure"), QKeySequence::Copy, this, &SpeedupLabWindow::copyFigure);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* present = view->addAction(tr("&Presentation mode"));
  present->setObjectName(QStringLiteral("presentationMode"));
  present->setCheckable(true);
  present->setShortcut(QKeySequence(Qt::Key_F5));
  connect(present, &QAction::toggled, this, &SpeedupLabWindow::setPresentation);
  connect(present, &QAction::toggled, this, &SpeedupLabWindow::presentationChanged);
}

void SpeedupLabWindow::setSliceProvider(std::function<compute::Image()> provider) {
  slice_ = std::move(provider);
  controls_->setSliceAvailable(bool(slice_));
}

bool SpeedupLabWindow::startRun() {
  try {
    compute::Image source = slice_ ? slice_() : compute::Image();
    lab::SweepSpec spec = controls_->spec(source);
    worker_->start(std::move(spec));
  } catch (const compute::InvalidArgument& e) {
    status_->setText(QString::fromUtf8(e.what()));
    return false;
  }
  sweep_ = lab::Sweep();
  ops_->clear();
  chart_->clear();
  machine_->setText(tr("Running…"));
  progress_->setRange(0, 0);
  status_->clear();
  setRunning(true);
  return true;
}

void SpeedupLabWindow::cancelRun() {
  worker_->cancel();
  status_->setText(tr("Cancelling…"));
}

bool SpeedupLabWindow::running() const { return worker_->running(); }

double SpeedupLabWindow::longestPauseMs() const { return probe_->longestPauseMs(); }

QString SpeedupLabWindow::pauseNote() const {
  return tr(" The window's longest pause while it ran: %1 ms.")
      .arg(QString::number(probe_->longestPauseMs(), 'f', 0));
}

void SpeedupLabWindow::setRunning(bool running) {
  if (running)
    probe_->start();
  else
    probe_->stop();
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  controls_->setEnabled(!running);
  if (!running) progress_->setRange(0, 1), progress_->setValue(sweep_.points.empty() ? 0 : 1);
}

void SpeedupLabWindow::addPoint(const lab::Point& p) {
  sweep_.points.push_back(p);
  const QString op = QString::fromStdString(p.op);
  if (ops_->findItems(op, Qt::MatchExactly).isEmpty()) {
    ops_->addItem(op);
    if (ops_->count() == 1) ops_->setCurrentRow(0);
  }
  // Points can come faster than a person reads them; each redraw rebuilds both charts, so the
  // figure follows them a few times a second.
  if (ops_->currentItem() && ops_->currentItem()->text() == op && !redraw_.isActive())
    redraw_.start();
}

void SpeedupLabWindow::setSweep(lab::Sweep sweep) {
  const QString shown = ops_->currentItem() ? ops_->currentItem()->text() : QString();
  sweep_ = std::move(sweep);
  ops_->blockSignals(true);
  ops_->clear();
  for (const auto& op : lab::opsOf(sweep_.points)) ops_->addItem(QString::fromStdString(op));
  const auto found = ops_->findItems(shown, Qt::MatchExactly);
  ops_->setCurrentRow(found.isEmpty() ? 0 : ops_->row(found.front()));
  ops_->blockSignals(false);
  updateMachine();
  refresh();
}

void SpeedupLabWindow::updateMachine() {
  const auto& m = sweep_.machine;
  QString text = tr("CPU: %1 (%2 threads)   GPU: %3")
                     .arg(QString::fromStdString(m.cpu))
                     .arg(m.cpuThreads)
                     .arg(m.gpu.empty() ? tr("none") : QString::fromStdString(m.gpu));
  if (!m.note.empty()) text += "\n" + QString::fromStdString(m.note);
  machine_->setText(text);
}

void SpeedupLabWindow::showOp(const QString& op) {
  const auto found = ops_->findItems(op, Qt::MatchExactly);
  if (!found.isEmpty()) ops_->setCurrentItem(found.front());
  refresh();
}

void SpeedupLabWindow::refresh() {
  redraw_.stop();  // this redraw serves any that was pending
  if (!ops_->currentItem()) {
    chart_->clear();
    return;
  }
  chart_->showOp(sweep_, ops_->currentItem()->text());
}

void SpeedupLabWindow::setPresentation(bool on) {
  if (auto* a = findChild<QAction*>(QStringLiteral("presentationMode")); a && a->isChecked() != on)
    a->setChecked(on);  // re-enters once through toggled
  presentation_ = on;
  chart_->setPresentation(on);
  side_->setVisible(!on);  // the whole width for the figure on a projector
  QFont f = machine_->font();
  f.setPointSizeF(on ? 16 : QApplication::font().pointSizeF());
  machine_->setFont(f);
  refresh();
}

void SpeedupLabWindow::showSweep(lab::Sweep sweep, const QString& source) {
  setSweep(std::move(sweep));
  progress_->setRange(0, 1), progress_->setValue(1);  // nothing left to run: not "0 %"
  status_->setText(tr("Opened %1 (%2 points).").arg(source).arg(sweep_.points.size()));
}

bool SpeedupLabWindow::openSweep(const QString& path) {
  try {
    showSweep(lab::readCsvFile(path.toStdString()), path);
    return true;
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Open sweep"), QString::fromUtf8(e.what()));
    return false;
  }
}

bool SpeedupLabWindow::exportCsv(const QString& path) {
  try {
    io::writeWholeFile(path.toStdString(), lab::csvText(sweep_));
    return true;
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export CSV"), QString::fromUtf8(e.what()));
    return false;
  }
}

bool SpeedupLabWindow::exportSvg(const QString& path) {
  lab::SvgStyle style;
  if (presentation_) style.fontSize = 24, style.lineWidth = 4;
  try {
    io::writeWholeFile(path.toStdString(), lab::sweepSvg(sweep_, style));
    return true;
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export SVG"), QString::fromUtf8(e.what()));
    return false;
  }
}

QImage SpeedupLabWindow::figure() const { return chart_->grab().toImage(); }

bool SpeedupLabWindow::exportPng(const QString& path) {
  const QString error = savePngAtomically(figure(), path, {});
  if (error.isEmpty()) return true;
  QMessageBox::warning(this, tr("Export PNG"), error);
  return false;
}

void SpeedupLabWindow::copyFigure() { QApplication::clipboard()->setImage(figure()); }

}  // namespace stacklens::ui
