// File ▸ Open…, Open folder…, Save slice/stack as… and Export view…: a non-blocking file dialog
// that starts in the last folder used, then the window's operation on the chosen file.
#pragma once

namespace stacklens::ui {

class MainWindow;

void chooseStackToOpen(MainWindow* window);
void chooseFolderToOpen(MainWindow* window);                  // a Zarr array or OME-Zarr image
void chooseWhereToSave(MainWindow* window, bool wholeStack);  // the slice shown or the stack
void chooseWhereToExport(MainWindow* window, bool colorbar);  // the view as PNG

}  // namespace stacklens::ui
