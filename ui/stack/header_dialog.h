// A window listing the header cards (FITS) or tags and ImageJ metadata (TIFF), with a filter.
#pragma once

#include <QDialog>
#include <QLineEdit>
#include <QTableWidget>
#include <vector>

#include "io/stack.h"

namespace stacklens::ui {

class HeaderDialog : public QDialog {
  Q_OBJECT
 public:
  HeaderDialog(const QString& title, const std::vector<io::HeaderCard>& cards,
               QWidget* parent = nullptr);
  QTableWidget* table() const { return table_; }

 private:
  QTableWidget* table_;
  QLineEdit* filter_;
};

class MainWindow;
// File ▸ Header…: the open HDU's header (one dialog at a time).
void showHeader(MainWindow* window);

}  // namespace stacklens::ui
