// The speedup lab's choices: ops, sizes, CPU thread counts, repeats, GPU or not, and the data
// (synthetic sky or the viewer's slice); turned into a compute::lab::SweepSpec.
#pragma once

#include <QWidget>
#include <map>

#include "compute/lab/sweep.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace stacklens::ui {

class SpeedupLabControls : public QWidget {
  Q_OBJECT
 public:
  explicit SpeedupLabControls(QWidget* parent = nullptr);

  // The description (throws compute::InvalidParameter naming the field for a bad entry).
  // source: the viewer's slice, used when the data choice says so (empty: synthetic only).
  compute::lab::SweepSpec spec(const compute::Image& source) const;
  void setSliceAvailable(bool available);

  QCheckBox* opBox(const QString& op) const { return ops_.at(op); }
  QLineEdit* sizes() const { return sizes_; }
  QLineEdit* threads() const { return threads_; }
  QSpinBox* repeats() const { return repeats_; }
  QComboBox* data() const { return data_; }
  QCheckBox* gpu() const { return gpu_; }

 private:
  std::map<QString, QCheckBox*> ops_;
  QLineEdit* sizes_;
  QLineEdit* threads_;
  QSpinBox* repeats_;
  QCheckBox* gpu_;
  QComboBox* data_;
};

}  // namespace stacklens::ui
