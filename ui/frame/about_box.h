// Help ▸ About StackLens: the build's description (version, revision, backends) as --version
// prints it, and the licence; Help ▸ About Qt.
#pragma once

class QString;

namespace stacklens::ui {

class MainWindow;

// Last of the window's tools, so that Help is the rightmost menu.
void installAboutBox(MainWindow* window);

// The About box's text (HTML), for the box and its test.
QString aboutText();

}  // namespace stacklens::ui
