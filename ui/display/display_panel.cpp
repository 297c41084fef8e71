// Builds the display controls and keeps DisplaySettings in step with them.
#include "ui/display/display_panel.h"

#include <QColorDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSignalBlocker>
#include <cfloat>

#include "render/colormap.h"

namespace stacklens::ui {

using render::LimitsMode;
using render::Scale;

static QString limitsLabel(LimitsMode m) {
  switch (m) {
    case LimitsMode::MinMax:
      return DisplayPanel::tr("min/max");
    case LimitsMode::ZScale:
      return DisplayPanel::tr("zscale");
    case LimitsMode::Manual:
      return DisplayPanel::tr("manual");
    default:
      return QString(render::limitsModeName(m)) + " %";
  }
}

// One form row per setting. Each row's controls are made just before the row is added, so that
// the form's row labels (made by addRow) keep their place among the children and focus chain.
DisplayPanel::DisplayPanel(QWidget* parent) : QWidget(parent) {
  auto* form = new QFormLayout(this);
  addColormapRow(form);
  addScaleRow(form);
  addLimitsModeRow(form);
  addLimitsRow(form);
  addOptionsRow(form);
  updateNanButton();
  exponent_->setEnabled(false);  // the linear scale, the first, has no exponent
  connectControls();
}

void DisplayPanel::addColormapRow(QFormLayout* form) {
  colormap_ = new QComboBox(this);
  colormap_->addItems(render::colormapNames());
  form->addRow(tr("Colormap"), colormap_);
}

// The scale and, beside it, the exponent of the log and power scales.
void DisplayPanel::addScaleRow(QFormLayout* form) {
  scale_ = new QComboBox(this);
  for (Scale s : render::kAllScales) scale_->addItem(render::scaleName(s), int(s));
  exponent_ = new QDoubleSpinBox(this);
  exponent_->setRange(1.01, 1e6);
  exponent_->setDecimals(2);
  exponent_->setValue(render::kDefaultScaleExponent);
  exponent_->setToolTip(tr("Exponent a of the log and power scales (DS9 default 1000)"));
  auto* scaleRow = new QHBoxLayout();
  scaleRow->addWidget(scale_, 1);
  scaleRow->addWidget(exponent_);
  form->addRow(tr("Scale"), scaleRow);
}

void DisplayPanel::addLimitsModeRow(QFormLayout* form) {
  limitsMode_ = new QComboBox(this);
  for (LimitsMode m : render::kAllLimitsModes) limitsMode_->addItem(limitsLabel(m), int(m));
  limitsMode_->setCurrentIndex(limitsMode_->findData(int(mode_)));
  recompute_ = new QPushButton(tr("↻"), this);
  recompute_->setToolTip(tr("Recompute the limits from the slice shown"));
  recompute_->setMaximumWidth(36);
  auto* modeRow = new QHBoxLayout();
  modeRow->addWidget(limitsMode_, 1);
  modeRow->addWidget(recompute_);
  form->addRow(tr("Limits"), modeRow);
}

// The low and high limits, shown or typed: any float.
void DisplayPanel::addLimitsRow(QFormLayout* form) {
  low_ = new QDoubleSpinBox(this);
  high_ = new QDoubleSpinBox(this);
  for (QDoubleSpinBox* box : {low_, high_}) {
    box->setRange(-FLT_MAX, FLT_MAX);
    box->setDecimals(6);
    box->setKeyboardTracking(false);
  }
  auto* limitsRow = new QHBoxLayout();
  limitsRow->addWidget(low_);
  limitsRow->addWidget(high_);
  form->addRow(tr("Low / high"), limitsRow);
}

void DisplayPanel::addOptionsRow(QFormLayout* form) {
  invert_ = new QCheckBox(tr("Invert"), this);
  smooth_ = new QCheckBox(tr("Smooth"), this);
  smooth_->setToolTip(tr("Bilinear sampling instead of nearest pixel"));
  nanColour_ = new QPushButton(this);
  nanColour_->setToolTip(tr("Colour of NaN (blank) pixels"));
  auto* optionsRow = new QHBoxLayout();
  optionsRow->addWidget(invert_);
  optionsRow->addWidget(smooth_);
  optionsRow->addWidget(nanColour_);
  form->addRow(optionsRow);
}

void DisplayPanel::connectControls() {
  connect(colormap_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    settings_.colormap = name;
    emitChanged();
  });
  connect(scale_, &QComboBox::currentIndexChanged, this, [this] {
    settings_.scale = static_cast<Scale>(scale_->currentData().toInt());
    exponent_->setEnabled(settings_.scale == Scale::Log || settings_.scale == Scale::Power);
    emitChanged();
  });
  connect(exponent_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    settings_.exponent = static_cast<float>(v);
    emitChanged();
  });
  connect(limitsMode_, &QComboBox::currentIndexChanged, this, [this] {
    mode_ = static_cast<LimitsMode>(limitsMode_->currentData().toInt());
    if (!updating_) emit limitsModeChanged(mode_);
  });
  connect(recompute_, &QPushButton::clicked, this, [this] { emit limitsModeChanged(mode_); });
  auto manualEdit = [this] {
    if (updating_) return;
    setManualLimits({static_cast<float>(low_->value()), static_cast<float>(high_->value())});
  };
  connect(low_, &QDoubleSpinBox::valueChanged, this, manualEdit);
  connect(high_, &QDoubleSpinBox::valueChanged, this, manualEdit);
  connect(invert_, &QCheckBox::toggled, this, [this](bool on) {
    settings_.invert = on;
    emitChanged();
  });
  connect(smooth_, &QCheckBox::toggled, this, [this](bool on) {
    settings_.smooth = on;
    emitChanged();
  });
  connect(nanColour_, &QPushButton::clicked, this, [this] {
    const QColor c = QColorDialog::getColor(settings_.nanColour, this, tr("NaN colour"));
    if (c.isValid()) setNanColour(c);
  });
}

void DisplayPanel::emitChanged() {
  if (!updating_) emit displayChanged(settings_);
}

void DisplayPanel::updateNanButton() {
  nanColour_->setText(tr("NaN"));
  nanColour_->setStyleSheet(QString("background-color: %1; color: %2")
                                .arg(settings_.nanColour.name(),
                                     settings_.nanColour.lightness() > 128 ? "black" : "white"));
}

void DisplayPanel::setColormap(const QString& name) {
  if (colormap_->findText(name) >= 0) colormap_->setCurrentText(name);
}
void DisplayPanel::setScale(Scale scale) { scale_->setCurrentIndex(scale_->findData(int(scale))); }
void DisplayPanel::setLimitsMode(LimitsMode mode) {
  const int index = limitsMode_->findData(int(mode));
  if (index == limitsMode_->currentIndex())
    emit limitsModeChanged(mode);
  else
    limitsMode_->setCurrentIndex(index);
}
void DisplayPanel::setInvert(bool on) { invert_->setChecked(on); }
void DisplayPanel::setSmooth(bool on) { smooth_->setChecked(on); }
void DisplayPanel::setNanColour(const QColor& colour) {
  settings_.nanColour = colour;
  updateNanButton();
  emitChanged();
}

void DisplayPanel::setExponent(double exponent) { exponent_->setValue(exponent); }

void DisplayPanel::setSettings(const render::DisplaySettings& s, LimitsMode mode) {
  setColormap(s.colormap);
  setScale(s.scale);
  setExponent(s.exponent);
  setInvert(s.invert);
  setSmooth(s.smooth);
  if (s.nanColour != settings_.nanColour) setNanColour(s.nanColour);
  if (mode == LimitsMode::Manual)
    setManualLimits(s.limits);
  else if (mode != mode_)
    setLimitsMode(mode);
}

void DisplayPanel::showLimits(render::Limits limits) {
  updating_ = true;
  low_->setValue(limits.low);
  high_->setValue(limits.high);
  updating_ = false;
  settings_.limits = limits;
  emitChanged();
}

void DisplayPanel::setManualLimits(render::Limits limits) {
  if (!(limits.high > limits.low)) return;
  updating_ = true;
  limitsMode_->setCurrentIndex(limitsMode_->findData(int(LimitsMode::Manual)));
  mode_ = LimitsMode::Manual;
  updating_ = false;
  showLimits(limits);
}

}  // namespace stacklens::ui
