// The speedup lab's choices (see speedup_lab_controls.h).
#include "ui/lab/speedup_lab_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "compute/lab/lab_ops.h"
#include "compute/lab/sweep_text.h"

namespace stacklens::ui {

namespace lab = compute::lab;

SpeedupLabControls::SpeedupLabControls(QWidget* parent) : QWidget(parent) {
  auto* opsGroup = new QGroupBox(tr("Operations"), this);
  auto* grid = new QGridLayout(opsGroup);
  const lab::SweepSpec def = lab::defaultSweepSpec();
  int i = 0;
  for (const auto& name : lab::labOpNames()) {
    const QString op = QString::fromStdString(name);
    auto* box = new QCheckBox(op, opsGroup);
    box->setObjectName("op-" + op);
    box->setChecked(std::find(def.ops.begin(), def.ops.end(), name) != def.ops.end());
    box->setToolTip(QString::fromStdString(lab::explainOp(name)));
    grid->addWidget(box, i / 2, i % 2);
    ops_[op] = box;
    ++i;
  }
  sizes_ = new QLineEdit(QString::fromLatin1(lab::kDefaultSizes), this);
  sizes_->setToolTip(
      tr("Image edges N (N×N): A:B doubles from A to B, A:B:F multiplies by F, "
         "or a list 256,1000,4096. Volume ops use a cube of as many voxels."));
  threads_ = new QLineEdit(QStringLiteral("1,all"), this);
  threads_->setToolTip(tr("CPU thread counts: 1,all or e.g. 1,4,all"));
  repeats_ = new QSpinBox(this);
  repeats_->setRange(1, 100);
  repeats_->setValue(def.repeats);
  repeats_->setToolTip(
      tr("Timed runs after one warm-up; the median is drawn, the bars span "
         "min to max"));
  gpu_ = new QCheckBox(tr("Time the GPU when one is usable"), this);
  gpu_->setChecked(true);
  data_ = new QComboBox(this);
  data_->addItem(tr("Synthetic sky"));
  data_->addItem(tr("The open slice (mirrored or cropped to each size)"));
  auto* form = new QFormLayout;
  form->addRow(tr("Sizes"), sizes_);
  form->addRow(tr("CPU threads"), threads_);
  form->addRow(tr("Repeats"), repeats_);
  form->addRow(tr("Data"), data_);
  form->addRow(gpu_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(opsGroup);
  layout->addLayout(form);
  layout->addStretch();
  setSliceAvailable(false);
}

void SpeedupLabControls::setSliceAvailable(bool available) {
  auto* model = qobject_cast<QStandardItemModel*>(data_->model());
  if (model) model->item(1)->setEnabled(available);
  if (!available) data_->setCurrentIndex(0);
}

lab::SweepSpec SpeedupLabControls::spec(const compute::Image& source) const {
  lab::SweepSpec s;
  for (const auto& [op, box] : ops_)
    if (box->isChecked()) s.ops.push_back(op.toStdString());
  // The lab's own order (cheap ops first), not the map's alphabetical one.
  std::vector<std::string> ordered;
  for (const auto& name : lab::labOpNames())
    if (std::find(s.ops.begin(), s.ops.end(), name) != s.ops.end()) ordered.push_back(name);
  s.ops = ordered;
  s.sizes = lab::parseSizes(sizes_->text().toStdString());
  s.threads = lab::parseThreads(threads_->text().toStdString());
  s.repeats = repeats_->value();
  s.gpu = gpu_->isChecked();
  if (data_->currentIndex() == 1) s.source = source;
  lab::validate(s);
  return s;
}

}  // namespace stacklens::ui
