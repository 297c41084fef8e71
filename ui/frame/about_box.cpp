// The text comes from version/build_info, the one source --version also prints.
#include "ui/frame/about_box.h"

#include <QApplication>
#include <QMenuBar>
#include <QMessageBox>

#include "ui/frame/main_window.h"
#include "version/build_info.h"

namespace stacklens::ui {

QString aboutText() {
  QString text = QObject::tr(
                     "<h3>StackLens %1</h3>"
                     "<p>A viewer for FITS and TIFF image stacks, Zarr and OME-Zarr, "
                     "with processing on the GPU (CUDA) or the CPU.</p>")
                     .arg(QString::fromStdString(build_info::version()).toHtmlEscaped());
  text += QObject::tr("<p>Revision: %1</p><table>")
              .arg(QString::fromStdString(build_info::revision()).toHtmlEscaped());
  for (const build_info::Component& c : build_info::components()) {
    const QString version = c.version.empty() ? QObject::tr("not built")
                                              : QString::fromStdString(c.version).toHtmlEscaped();
    const QString note = QString::fromStdString(c.note).toHtmlEscaped();
    text += QString("<tr><td>%1:&nbsp;</td><td>%2%3</td></tr>")
                .arg(QString::fromStdString(c.name).toHtmlEscaped(), version,
                     note.isEmpty() ? QString() : " (" + note + ")");
  }
  text += QObject::tr(
      "</table><p>Licence: GPL-3.0-or-later (FFTW is GPL; Qt is used under the "
      "LGPL). This program comes with ABSOLUTELY NO WARRANTY.</p>");
  return text;
}

void installAboutBox(MainWindow* window) {
  QMenu* help = window->menuBar()->addMenu(QObject::tr("&Help"));
  help->addAction(QObject::tr("&About StackLens"), window, [window] {
    QMessageBox::about(window, QObject::tr("About StackLens"), aboutText());
  });
  help->addAction(QObject::tr("About &Qt"), window, [window] { QMessageBox::aboutQt(window); });
}

}  // namespace stacklens::ui
