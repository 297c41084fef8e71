// File dialogs of the File menu, window-modal and non-blocking (no nested event loop in a slot).
#include "ui/stack/file_choosers.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QUrl>

#include "ui/frame/main_window.h"
#include "ui/stack/save_tool.h"

namespace stacklens::ui {
namespace {

// A Zarr image is a folder; choosing its zarr.json, .zarray or .zattrs opens the folder
// (io::openStack), for file dialogs that cannot choose folders.
const char* kStackFilter =
    "Stacks (*.fits *.fit *.fts *.fz *.fits.gz *.tif *.tiff zarr.json .zarray .zattrs);;FITS "
    "(*.fits *.fit *.fts *.fz *.fits.gz);;TIFF (*.tif *.tiff);;Zarr metadata (zarr.json .zarray "
    ".zattrs);;All files (*)";

QFileDialog* fileDialog(MainWindow* window, const QString& title, const QString& filter) {
  auto* dialog = new QFileDialog(window, title, window->lastFolder(), filter);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  return dialog;
}

QFileDialog* saveDialog(MainWindow* window, const QString& title, const QString& filter,
                        const QString& suffix) {
  QFileDialog* dialog = fileDialog(window, title, filter);
  dialog->setAcceptMode(QFileDialog::AcceptSave);
  dialog->setDefaultSuffix(suffix);
  return dialog;
}

}  // namespace

void chooseStackToOpen(MainWindow* window) {
  QFileDialog* dialog = fileDialog(window, QObject::tr("Open stack"), kStackFilter);
  dialog->setFileMode(QFileDialog::ExistingFile);
  QObject::connect(dialog, &QFileDialog::fileSelected, window,
                   [window](const QString& path) { window->openFile(path); });
  dialog->open();
}

void chooseFolderToOpen(MainWindow* window) {
  QFileDialog* dialog = fileDialog(window, QObject::tr("Open Zarr folder"), QString());
  dialog->setFileMode(QFileDialog::Directory);
  dialog->setOption(QFileDialog::ShowDirsOnly);
  QObject::connect(dialog, &QFileDialog::fileSelected, window,
                   [window](const QString& path) { window->openFile(path); });
  dialog->open();
}

void chooseUrlToOpen(MainWindow* window) {
  auto* dialog = new QInputDialog(window);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(QObject::tr("Open URL"));
  dialog->setLabelText(QObject::tr("OME-Zarr image or Zarr array (http:// or https://):"));
  dialog->setTextValue("https://");
  dialog->resize(560, dialog->height());
  QObject::connect(dialog, &QInputDialog::textValueSelected, window, [window](const QString& text) {
    const QString url = text.trimmed();
    const QString scheme = QUrl(url).scheme().toLower();
    if (scheme != "http" && scheme != "https")
      window->reportError(QObject::tr("Cannot open %1").arg(url),
                          QObject::tr("not an http:// or https:// URL"));
    else
      window->openFile(url);  // read in the background: a slow server never blocks the window
  });
  dialog->open();
}

void chooseWhereToSave(MainWindow* window, bool wholeStack) {
  if (!window->stack()) return;
  QFileDialog* dialog =
      saveDialog(window, wholeStack ? QObject::tr("Save stack") : QObject::tr("Save slice"),
                 "FITS (*.fits);;TIFF (*.tif *.tiff)", "fits");
  QObject::connect(dialog, &QFileDialog::fileSelected, window,
                   [window, wholeStack](const QString& path) {
                     if (auto* save = window->tool<SaveTool>()) save->saveData(path, wholeStack);
                   });
  dialog->open();
}

void chooseWhereToExport(MainWindow* window, bool colorbar) {
  if (!window->slicePath()->currentSlice()) return;
  QFileDialog* dialog = saveDialog(window, QObject::tr("Export view"), "PNG (*.png)", "png");
  QObject::connect(dialog, &QFileDialog::fileSelected, window,
                   [window, colorbar](const QString& path) {
                     const QString error = window->exportPng(path, colorbar);
                     if (!error.isEmpty())
                       window->reportError(QObject::tr("Cannot export the view"), error);
                   });
  dialog->open();
}

}  // namespace stacklens::ui
