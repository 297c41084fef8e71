// The viewer's main window.
#include "ui/main_window.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

namespace stacklens::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("StackLens");
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  view_ = new render::SliceView(central);
  view_->setMinimumSize(320, 320);
  layout->addWidget(view_, 1);
  auto* row = new QHBoxLayout();
  slider_ = new QSlider(Qt::Horizontal, central);
  spin_ = new QSpinBox(central);
  sliceLabel_ = new QLabel(central);
  row->addWidget(new QLabel("z", central));
  row->addWidget(slider_, 1);
  row->addWidget(spin_);
  row->addWidget(sliceLabel_);
  layout->addLayout(row);
  setCentralWidget(central);
  connect(slider_, &QSlider::valueChanged, spin_, &QSpinBox::setValue);
  connect(spin_, &QSpinBox::valueChanged, slider_, &QSlider::setValue);
  connect(slider_, &QSlider::valueChanged, this, &MainWindow::requestSlice);

  auto* file = menuBar()->addMenu("&File");
  file->addAction("&Open…", QKeySequence::Open, this, [this] {
    QString path = QFileDialog::getOpenFileName(this, "Open stack", {},
                                                "Stacks (*.fits *.fit *.fts *.fz *.gz *.tif *.tiff);;All files (*)");
    if (!path.isEmpty()) openFile(path);
  });
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  resize(900, 800);
}

MainWindow::~MainWindow() = default;

bool MainWindow::openFile(const QString& path, bool quiet) {
  try {
    reader_ = io::openStack(path.toStdString());
  } catch (const std::exception& e) {
    if (!quiet) QMessageBox::critical(this, "Cannot open file", QString::fromStdString(e.what()));
    statusBar()->showMessage(QString::fromStdString(e.what()));
    return false;
  }
  const auto& info = reader_->info();
  setWindowTitle(QFileInfo(path).fileName() + " — StackLens");
  limitsSet_ = false;
  slider_->blockSignals(true);
  slider_->setRange(0, static_cast<int>(info.z - 1));
  spin_->setRange(0, static_cast<int>(info.z - 1));
  slider_->setValue(static_cast<int>(info.z / 2));
  spin_->setValue(static_cast<int>(info.z / 2));
  slider_->blockSignals(false);
  requestSlice(slider_->value());
  statusBar()->showMessage(QString("%1 × %2 × %3 %4").arg(info.z).arg(info.y).arg(info.x).arg(io::dtypeName(info.dtype)));
  return true;
}

// Reads slice z on a pool thread; a newer request makes older results stale.
void MainWindow::requestSlice(int z) {
  if (!reader_) return;
  const quint64 generation = ++generation_;
  auto reader = reader_;
  (void)QtConcurrent::run([this, reader, generation, z] {
    const auto& info = reader->info();
    auto pixels = std::make_shared<std::vector<float>>(static_cast<size_t>(info.y * info.x));
    try {
      reader->readSlice(z, pixels->data());
    } catch (const std::exception&) {
      pixels.reset();
    }
    QMetaObject::invokeMethod(this, [this, generation, z, pixels] { showSlice(generation, z, pixels); },
                              Qt::QueuedConnection);
  });
}

void MainWindow::showSlice(quint64 generation, int z, std::shared_ptr<std::vector<float>> pixels) {
  if (generation != generation_ || !pixels) return;
  const auto& info = reader_->info();
  if (!limitsSet_) {
    // Until the display controls land: 0.5–99.5 % of the first slice shown.
    std::vector<float> finite;
    for (float v : *pixels)
      if (std::isfinite(v)) finite.push_back(v);
    if (!finite.empty()) {
      auto at = [&](double q) {
        auto k = static_cast<size_t>(q * (finite.size() - 1));
        std::nth_element(finite.begin(), finite.begin() + k, finite.end());
        return finite[k];
      };
      view_->setLimits(at(0.005), at(0.995));
      limitsSet_ = true;
    }
  }
  view_->setSlice(pixels->data(), static_cast<int>(info.x), static_cast<int>(info.y));
  sliceLabel_->setText(QString("%1 / %2").arg(z).arg(info.z - 1));
  emit sliceShown(z);
}

}  // namespace stacklens::ui
