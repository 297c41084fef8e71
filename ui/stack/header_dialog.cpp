// Shows StackInfo::header as a filterable key / value / comment table.
#include "ui/stack/header_dialog.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QVBoxLayout>
#include "ui/frame/main_window.h"

namespace stacklens::ui {

HeaderDialog::HeaderDialog(const QString& title, const std::vector<io::HeaderCard>& cards,
                           QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(title);
  auto* layout = new QVBoxLayout(this);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter keys and values…"));
  filter_->setClearButtonEnabled(true);
  table_ = new QTableWidget(static_cast<int>(cards.size()), 3, this);
  table_->setHorizontalHeaderLabels({tr("Key"), tr("Value"), tr("Comment")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setStretchLastSection(true);
  QFont mono("monospace");
  mono.setStyleHint(QFont::TypeWriter);
  table_->setFont(mono);
  for (int row = 0; row < static_cast<int>(cards.size()); ++row) {
    const auto& card = cards[static_cast<size_t>(row)];
    table_->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(card.key)));
    table_->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(card.value)));
    table_->setItem(row, 2, new QTableWidgetItem(QString::fromStdString(card.comment)));
  }
  table_->resizeColumnsToContents();
  layout->addWidget(filter_);
  layout->addWidget(table_);
  if (cards.empty()) layout->addWidget(new QLabel(tr("This file has no header entries."), this));
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
    for (int row = 0; row < table_->rowCount(); ++row) {
      bool match = text.isEmpty();
      for (int col = 0; col < 3 && !match; ++col)
        match = table_->item(row, col)->text().contains(text, Qt::CaseInsensitive);
      table_->setRowHidden(row, !match);
    }
  });
  resize(720, 560);
}

}  // namespace stacklens::ui

namespace stacklens::ui {

void showHeader(MainWindow* window) {
  if (!window->stack()) return;
  if (auto* open = window->findChild<HeaderDialog*>()) open->close();  // one at a time
  const io::StackInfo& info = window->info();
  auto* dialog = new HeaderDialog(QObject::tr("Header — %1 (HDU %2)")
                                      .arg(QFileInfo(QString::fromStdString(info.path)).fileName())
                                      .arg(info.hdu),
                                  info.header, window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->show();
}

}  // namespace stacklens::ui
