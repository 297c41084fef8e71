// File ▸ Open…, Open folder…, Open URL…, Save slice/stack as… and Export view…: a non-blocking
// dialog (a file dialog starts in the last folder used), then the window's operation on the
// chosen file or URL.
#pragma once

namespace stacklens::ui {

class MainWindow;

void chooseStackToOpen(MainWindow* window);
void chooseFolderToOpen(MainWindow* window);                  // a Zarr array or OME-Zarr image
void chooseUrlToOpen(MainWindow* window);                     // the same over http:// or https://
void chooseWhereToSave(MainWindow* window, bool wholeStack);  // the slice shown or the stack
void chooseWhereToExport(MainWindow* window, bool colorbar);  // the view as PNG

}  // namespace stacklens::ui
