// Analysis ▸ Import catalog…: which columns of a catalog give its positions (RA/Dec or
// longitude/latitude in a sky frame, or x/y in image pixels), and how its markers look.
#pragma once

#include <QCheckBox>
#include <QColor>
#include <QComboBox>
#include <QDialog>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QStringList>

#include "compute/catalog_match.h"
#include "io/wcs.h"

namespace stacklens::ui {

// The choice the dialog makes; the catalog panel applies it to every row (the positions as
// compute/catalog_match.h reads them, and how the markers look).
struct CatalogColumns : compute::CatalogPositions {
  double markerRadius = 5;              // image pixels
  QColor colour = QColor(0, 255, 255);  // DS9's cyan: apart from the match colours
};

class CatalogColumnsDialog : public QDialog {
  Q_OBJECT
 public:
  // columns: the catalog's column names (with units, e.g. "RA [deg]"); initial: the guess.
  CatalogColumnsDialog(const QString& catalogName, const QStringList& columns,
                       const CatalogColumns& initial, QWidget* parent = nullptr);

  CatalogColumns choice() const;
  void setChoice(const CatalogColumns& choice);

 private:
  void frameChanged();
  void showColour();

  QComboBox *lon_, *lat_, *x_, *y_, *frame_, *base_;
  QCheckBox* hours_;
  QDoubleSpinBox* radius_;
  QPushButton* colourButton_;
  QPushButton* ok_;
  QColor colour_;
};

}  // namespace stacklens::ui
