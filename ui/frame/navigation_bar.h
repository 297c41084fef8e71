// The z navigation row: slider, spin box, world-coordinate label, play/pause with fps and loop
// mode.
#pragma once

#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>
#include <QWidget>

#include "io/stack.h"

namespace stacklens::ui {

class NavigationBar : public QWidget {
  Q_OBJECT
 public:
  explicit NavigationBar(QWidget* parent = nullptr);

  void setCount(int slices);  // z range 0 … slices−1 (keeps the value when possible)
  int count() const { return count_; }
  int value() const { return slider_->value(); }
  void setValue(int z);
  void step(int delta);  // clamps at the ends
  void setWorldText(const QString& text) { world_->setText(text); }
  // What the label says at slice z: the spectral (or other third-axis) world coordinate from
  // the WCS, else z in the spacing's unit, else "slice z / last".
  static QString worldText(const io::StackInfo& info, const io::Wcs* wcs, int z);
  QString worldText() const { return world_->text(); }

  void setPlaying(bool on);
  bool playing() const { return timer_.isActive(); }
  void setFps(int fps) { fps_->setValue(fps); }
  // Bounce reverses at the ends; loop wraps around.
  void setBounce(bool on) { mode_->setCurrentIndex(on ? 1 : 0); }
  // The next slice playback shows after z (direction changes at the ends when bouncing).
  int nextPlayed(int z);

  QSlider* slider() const { return slider_; }
  QSpinBox* spin() const { return spin_; }

 signals:
  void valueChanged(int z);

 private:
  QSlider* slider_;
  QSpinBox* spin_;
  QLabel* world_;
  QToolButton* play_;
  QSpinBox* fps_;
  QComboBox* mode_;
  QTimer timer_;
  int count_ = 1;
  int direction_ = 1;
};

}  // namespace stacklens::ui
