#include "ui/display/contours_panel.h"

#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QFuture>
#include <QPushButton>
#include <QSaveFile>
#include <QTextStream>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "compute/backend.h"
#include "ui/display/view_decorations.h"

namespace stacklens::ui {

ContoursPanel::ContoursPanel(ViewDecorations* decorations, QWidget* parent)
    : QWidget(parent), decorations_(decorations) {
  pool_.setMaxThreadCount(1);
  on_ = new QCheckBox(tr("Draw contours"));
  mode_ = new QComboBox;
  mode_->addItems({tr("Count, inside the limits"), tr("List")});
  count_ = new QSpinBox;
  count_->setRange(1, 100);
  count_->setValue(5);
  list_ = new QLineEdit;
  list_->setPlaceholderText(tr("e.g. 10, 20, 50"));
  smoothing_ = new QDoubleSpinBox;
  smoothing_->setRange(0, 50);
  smoothing_->setDecimals(2);
  smoothing_->setSuffix(tr(" px σ"));
  source_ = new QLabel(tr("the shown slice"));
  source_->setWordWrap(true);
  auto* exportButton = new QPushButton(tr("Export to DS9 regions…"));
  status_ = new QLabel;
  status_->setWordWrap(true);
  auto* form = new QFormLayout;
  form->addRow(tr("Levels:"), mode_);
  form->addRow(tr("Count:"), count_);
  form->addRow(tr("List:"), list_);
  form->addRow(tr("Smoothing:"), smoothing_);
  form->addRow(tr("Of:"), source_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(on_);
  layout->addLayout(form);
  layout->addWidget(exportButton);
  layout->addWidget(status_);
  layout->addStretch(1);
  for (QWidget* w : std::initializer_list<QWidget*>{mode_, count_, list_, smoothing_})
    w->setEnabled(false);
  connect(on_, &QCheckBox::toggled, this, [this](bool on) {
    for (QWidget* w : std::initializer_list<QWidget*>{mode_, count_, list_, smoothing_})
      w->setEnabled(on);
    recompute();
  });
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { recompute(); });
  connect(count_, &QSpinBox::valueChanged, this, [this] { recompute(); });
  connect(list_, &QLineEdit::editingFinished, this, [this] { recompute(); });
  connect(smoothing_, &QDoubleSpinBox::valueChanged, this, [this] { recompute(); });
  connect(exportButton, &QPushButton::clicked, this, &ContoursPanel::exportRequested);
}

// The decorations are not touched here: the window destroys them before its docks.
ContoursPanel::~ContoursPanel() {
  ++generation_;
  pool_.waitForDone();
}

void ContoursPanel::setStack(std::shared_ptr<const io::StackReader> reader) {
  stack_ = std::move(reader);
  other_.reset();
  source_->setText(tr("the shown slice"));
  lines_.clear();
  decorations_->setContours({});
}

void ContoursPanel::setSlice(int z, render::SliceData data, int width, int height) {
  z_ = z, slice_ = std::move(data), width_ = width, height_ = height;
  recompute();
}

void ContoursPanel::setLimits(float low, float high) {
  if (low == low_ && high == high_) return;
  low_ = low, high_ = high;
  if (mode_->currentIndex() == 0) recompute();
}

void ContoursPanel::setDrawing(bool on) { on_->setChecked(on); }
void ContoursPanel::setLevelCount(int count) {
  mode_->setCurrentIndex(0);
  count_->setValue(count);
}
void ContoursPanel::setLevelList(const QString& list) {
  list_->setText(list);
  mode_->setCurrentIndex(1);
  recompute();
}

void ContoursPanel::setSourceFile(const QString& path) {
  std::shared_ptr<const io::StackReader> reader;
  if (!path.isEmpty()) {
    try {
      reader = io::openStack(path.toStdString());
      if (reader->info().x != width_ || reader->info().y != height_)
        throw std::runtime_error("its slices are not the stack's size");
    } catch (const std::exception& e) {
      status_->setText(tr("%1: %2").arg(path, QString::fromUtf8(e.what())));
      return;  // the contours drawn stay as they are
    }
  }
  other_ = std::move(reader);
  source_->setText(other_ ? tr("%1 (the same slice, or its last)").arg(QFileInfo(path).fileName())
                          : tr("the shown slice"));
  recompute();
}

std::vector<double> ContoursPanel::levels() const {
  if (mode_->currentIndex() == 0) return compute::contourLevels(low_, high_, count_->value());
  std::vector<double> out;
  for (const QString& part : list_->text().split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    const double v = part.trimmed().toDouble(&ok);
    if (ok && std::isfinite(v)) out.push_back(v);
  }
  return out;
}

void ContoursPanel::recompute() {
  const quint64 generation = ++generation_;
  if (!on_->isChecked() || (!slice_ && !other_) || width_ <= 0) {
    lines_.clear();
    decorations_->setContours({});
    return;
  }
  const std::vector<double> levels = this->levels();
  const double sigma = smoothing_->value();
  auto slice = slice_;
  auto other = other_;
  const int z = z_, width = width_, height = height_;
  status_->setText(tr("Computing…"));
  QtConcurrent::run(&pool_,
                    [slice, other, z, width, height, levels, sigma] {
                      compute::Image image = compute::Image::host({1, height, width});
                      if (other)
                        other->readSlice(std::min<int64_t>(z, other->info().z - 1), image.data());
                      else
                        std::copy(slice->begin(), slice->end(), image.data());
                      if (sigma > 0) {
                        compute::BlurParams p;
                        p.sigmaY = p.sigmaX = sigma;
                        p.nanAware = true;
                        image = compute::makeCpuBackend(1)->gaussianBlur(image, p);
                      }
                      return compute::contourLines(image.data(), width, height, levels);
                    })
      .then(this,
            [this, generation, z](std::vector<compute::ContourLine> lines) {
              if (generation != generation_) return;
              lines_ = std::move(lines);
              decorations_->setContours(lines_);
              status_->setText(tr("%1 lines").arg(lines_.size()));
              emit contoursReady(z);
            })
      .onFailed(this, [this](const std::exception& e) {
        status_->setText(tr("Contours failed: %1").arg(QString::fromUtf8(e.what())));
      });
}

QString ContoursPanel::exportRegions(const QString& path) const {
  QSaveFile file(path);  // written whole or not at all
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) return file.errorString();
  QTextStream out(&file);
  out << "# Region file format: DS9 version 4.1\n"
      << "global color=green width=1\nimage\n";
  // DS9's image coordinates start at 1 at the first pixel's centre.
  auto point = [](const compute::ContourPoint& p) {
    return QString("%1,%2").arg(p.x + 1, 0, 'f', 3).arg(p.y + 1, 0, 'f', 3);
  };
  for (const compute::ContourLine& line : lines_) {
    const QString tag = QString(" # tag={contour %1}\n").arg(line.level, 0, 'g', 7);
    if (line.closed && line.points.size() >= 3) {
      QStringList points;
      for (const auto& p : line.points) points << point(p);
      out << "polygon(" << points.join(',') << ")" << tag;
    } else {
      for (size_t k = 0; k + 1 < line.points.size(); ++k)
        out << "line(" << point(line.points[k]) << "," << point(line.points[k + 1]) << ")" << tag;
    }
  }
  out.flush();
  return file.commit() ? QString() : file.errorString();
}

}  // namespace stacklens::ui
