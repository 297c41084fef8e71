// Edit ▸ Copy as command: the `stacklens-cli process` line that runs the processing dock's
// pipeline over the whole open stack (compute/pipeline_command.h), put on the clipboard, with
// notes (a PSF made in the viewer must be saved first; the whole-volume 3D alternative).
#pragma once

#include <QString>

namespace stacklens::ui {

class MainWindow;

// The command text for the window's stack and pipeline: the line, then each note as a "# " line.
// Output beside the input as NAME_processed.EXT. Empty when no stack is open.
QString pipelineCommandText(const MainWindow* window);

// Adds Edit ▸ Copy as command (Ctrl+Shift+C), which copies the text and shows it.
void installCopyCommand(MainWindow* window);

}  // namespace stacklens::ui
