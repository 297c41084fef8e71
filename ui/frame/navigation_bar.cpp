// Slider, spin box and playback for moving through z.
#include "ui/frame/navigation_bar.h"

#include <QHBoxLayout>
#include <QStyle>
#include <algorithm>

#include "io/wcs.h"

namespace stacklens::ui {

NavigationBar::NavigationBar(QWidget* parent) : QWidget(parent) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(4, 2, 4, 2);
  play_ = new QToolButton(this);
  play_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  play_->setToolTip(tr("Play / pause (Space)"));
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setToolTip(tr("Slice (←/→, PgUp/PgDn, Home/End)"));
  spin_ = new QSpinBox(this);
  world_ = new QLabel(this);
  world_->setMinimumWidth(170);
  world_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  fps_ = new QSpinBox(this);
  fps_->setRange(1, 120);
  fps_->setValue(10);
  fps_->setSuffix(tr(" fps"));
  mode_ = new QComboBox(this);
  mode_->addItems({tr("loop"), tr("bounce")});
  row->addWidget(play_);
  row->addWidget(new QLabel("z", this));
  row->addWidget(slider_, 1);
  row->addWidget(spin_);
  row->addWidget(world_);
  row->addWidget(fps_);
  row->addWidget(mode_);
  setCount(1);

  connect(slider_, &QSlider::valueChanged, spin_, &QSpinBox::setValue);
  connect(spin_, &QSpinBox::valueChanged, slider_, &QSlider::setValue);
  connect(slider_, &QSlider::valueChanged, this, &NavigationBar::valueChanged);
  connect(play_, &QToolButton::clicked, this, [this] { setPlaying(!playing()); });
  connect(fps_, &QSpinBox::valueChanged, this, [this](int fps) { timer_.setInterval(1000 / fps); });
  timer_.setInterval(1000 / fps_->value());
  connect(&timer_, &QTimer::timeout, this, [this] { setValue(nextPlayed(value())); });
}

void NavigationBar::setCount(int slices) {
  count_ = std::max(1, slices);
  const QSignalBlocker a(slider_), b(spin_);
  slider_->setRange(0, count_ - 1);
  spin_->setRange(0, count_ - 1);
  slider_->setPageStep(std::max(1, std::min(10, count_ / 10)));
  spin_->setValue(slider_->value());
  const bool many = count_ > 1;
  for (QWidget* w : std::initializer_list<QWidget*>{slider_, spin_, play_, fps_, mode_})
    w->setEnabled(many);
  if (!many) setPlaying(false);
}

void NavigationBar::setValue(int z) { slider_->setValue(std::clamp(z, 0, count_ - 1)); }

void NavigationBar::step(int delta) { setValue(value() + delta); }

void NavigationBar::setPlaying(bool on) {
  if (on && count_ > 1)
    timer_.start();
  else
    timer_.stop();
  play_->setIcon(style()->standardIcon(playing() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
}

int NavigationBar::nextPlayed(int z) {
  if (count_ <= 1) return 0;
  if (mode_->currentIndex() == 0) return (z + 1) % count_;
  if (z + direction_ < 0 || z + direction_ >= count_) direction_ = -direction_;
  return z + direction_;
}

QString NavigationBar::worldText(const io::StackInfo& info, const io::Wcs* wcs, int z) {
  if (wcs && info.z > 1) {
    const std::string world = wcs->formatSpectral(z);
    if (!world.empty()) return QString::fromStdString(world);
  }
  if (info.spacingKnown && info.z > 1) {
    const QString unit = QString::fromStdString(info.units[0]);
    return QString("z = %1 %2").arg(z * info.spacing[0], 0, 'g', 6).arg(unit).trimmed();
  }
  return tr("slice %1 / %2").arg(z).arg(info.z - 1);
}

}  // namespace stacklens::ui
