#include "ui/analysis/catalog_columns_dialog.h"

#include <QColorDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <array>

namespace stacklens::ui {
namespace {

// The frames offered, in the combo's order (DS9's names).
constexpr std::array kFrames = {io::SkyFrame::Fk5,      io::SkyFrame::Icrs,
                                io::SkyFrame::Fk4,      io::SkyFrame::Galactic,
                                io::SkyFrame::Ecliptic, io::SkyFrame::Image};

QComboBox* columnBox(const QStringList& columns) {
  auto* box = new QComboBox;
  box->addItem(QObject::tr("(none)"));
  box->addItems(columns);
  return box;
}

// Item 0 is "(none)": column k is item k + 1.
int columnOf(const QComboBox* box) { return box->currentIndex() - 1; }
void chooseColumn(QComboBox* box, int column) {
  box->setCurrentIndex(column >= 0 && column + 1 < box->count() ? column + 1 : 0);
}

}  // namespace

CatalogColumnsDialog::CatalogColumnsDialog(const QString& catalogName, const QStringList& columns,
                                           const CatalogColumns& initial, QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Catalog columns"));
  lon_ = columnBox(columns);
  lat_ = columnBox(columns);
  x_ = columnBox(columns);
  y_ = columnBox(columns);
  hours_ = new QCheckBox(tr("RA in hours"));
  frame_ = new QComboBox;
  for (io::SkyFrame f : kFrames) frame_->addItem(QString::fromLatin1(io::skyFrameName(f)));
  base_ = new QComboBox;
  base_->addItems({tr("1-based (DS9, SExtractor)"), tr("0-based (NumPy)")});
  radius_ = new QDoubleSpinBox;
  radius_->setRange(0.5, 500);
  radius_->setDecimals(1);
  radius_->setSuffix(tr(" px"));
  colourButton_ = new QPushButton;
  connect(colourButton_, &QPushButton::clicked, this, [this] {
    const QColor c = QColorDialog::getColor(colour_, this, tr("Marker colour"));
    if (c.isValid()) {
      colour_ = c;
      showColour();
    }
  });

  auto* form = new QFormLayout;
  form->addRow(tr("Frame:"), frame_);
  form->addRow(tr("Longitude / RA:"), lon_);
  form->addRow(QString(), hours_);
  form->addRow(tr("Latitude / Dec:"), lat_);
  form->addRow(tr("x:"), x_);
  form->addRow(tr("y:"), y_);
  form->addRow(tr("Pixels:"), base_);
  form->addRow(tr("Marker radius:"), radius_);
  form->addRow(tr("Marker colour:"), colourButton_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  ok_ = buttons->button(QDialogButtonBox::Ok);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  auto* title =
      new QLabel(tr("<b>%1</b>: %2 columns").arg(catalogName.toHtmlEscaped()).arg(columns.size()));
  layout->addWidget(title);
  layout->addLayout(form);
  layout->addWidget(buttons);

  for (QComboBox* box : {lon_, lat_, x_, y_, frame_})
    connect(box, &QComboBox::currentIndexChanged, this, &CatalogColumnsDialog::frameChanged);
  setChoice(initial);
}

CatalogColumns CatalogColumnsDialog::choice() const {
  CatalogColumns c;
  c.frame = kFrames[size_t(std::max(0, frame_->currentIndex()))];
  c.lon = columnOf(lon_);
  c.lat = columnOf(lat_);
  c.x = columnOf(x_);
  c.y = columnOf(y_);
  c.lonInHours = hours_->isChecked();
  c.oneBased = base_->currentIndex() == 0;
  c.markerRadius = radius_->value();
  c.colour = colour_;
  return c;
}

void CatalogColumnsDialog::setChoice(const CatalogColumns& c) {
  for (size_t k = 0; k < kFrames.size(); ++k)
    if (kFrames[k] == c.frame) frame_->setCurrentIndex(int(k));
  chooseColumn(lon_, c.lon);
  chooseColumn(lat_, c.lat);
  chooseColumn(x_, c.x);
  chooseColumn(y_, c.y);
  hours_->setChecked(c.lonInHours);
  base_->setCurrentIndex(c.oneBased ? 0 : 1);
  radius_->setValue(c.markerRadius);
  colour_ = c.colour;
  showColour();
  frameChanged();
}

// Sky frames read the longitude and latitude columns, the image frame the x and y columns: only
// the pair that will be used is editable, and OK waits until both of its columns are chosen.
void CatalogColumnsDialog::frameChanged() {
  const bool sky = kFrames[size_t(std::max(0, frame_->currentIndex()))] != io::SkyFrame::Image;
  for (QWidget* w : std::initializer_list<QWidget*>{lon_, lat_, hours_}) w->setEnabled(sky);
  for (QWidget* w : std::initializer_list<QWidget*>{x_, y_, base_}) w->setEnabled(!sky);
  ok_->setEnabled(choice().valid());
}

void CatalogColumnsDialog::showColour() {
  colourButton_->setText(colour_.name());
  colourButton_->setStyleSheet(
      QString("background-color: %1; color: %2")
          .arg(colour_.name(), colour_.lightness() > 128 ? "black" : "white"));
}

}  // namespace stacklens::ui
