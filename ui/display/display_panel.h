// The display controls: colormap, scale, limits mode and values, invert, NaN colour, sampling.
#pragma once

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QWidget>

#include "render/display_settings.h"

class QFormLayout;

namespace stacklens::ui {

class DisplayPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DisplayPanel(QWidget* parent = nullptr);

  render::DisplaySettings settings() const { return settings_; }
  render::LimitsMode limitsMode() const { return mode_; }
  // Programmatic changes update the controls and emit the same signals as the user would.
  void setColormap(const QString& name);
  void setScale(render::Scale scale);
  void setLimitsMode(render::LimitsMode mode);
  void setInvert(bool on);
  void setSmooth(bool on);
  void setNanColour(const QColor& colour);
  void setExponent(double exponent);  // of the log and power scales
  // Every setting at once (undo, sessions): manual limits when mode is Manual, else the mode,
  // whose limits the window computes.
  void setSettings(const render::DisplaySettings& settings, render::LimitsMode mode);
  // Computed or dragged limits: shown in the spin boxes (dragged ones switch to manual).
  void showLimits(render::Limits limits);
  void setManualLimits(render::Limits limits);

  QComboBox* colormapBox() const { return colormap_; }

 signals:
  void displayChanged(const render::DisplaySettings& settings);
  // The user chose a limits mode (or asked to recompute): the window computes them.
  void limitsModeChanged(render::LimitsMode mode);

 private:
  // The constructor's steps.
  void addColormapRow(QFormLayout* form);
  void addScaleRow(QFormLayout* form);
  void addLimitsModeRow(QFormLayout* form);
  void addLimitsRow(QFormLayout* form);
  void addOptionsRow(QFormLayout* form);
  void connectControls();

  void emitChanged();
  void updateNanButton();

  render::DisplaySettings settings_;
  render::LimitsMode mode_ = render::LimitsMode::P99_5;
  QComboBox* colormap_;
  QComboBox* scale_;
  QDoubleSpinBox* exponent_;
  QComboBox* limitsMode_;
  QDoubleSpinBox* low_;
  QDoubleSpinBox* high_;
  QPushButton* recompute_;
  QCheckBox* invert_;
  QCheckBox* smooth_;
  QPushButton* nanColour_;
  bool updating_ = false;
};

}  // namespace stacklens::ui
