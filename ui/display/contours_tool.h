// View ▸ Contours: the dock that draws contours of the shown slice over the view
// (ui/display/contours_panel.h), made on first use beside the display dock.
#pragma once

namespace stacklens::ui {

class MainWindow;
class ContoursPanel;

// The window's contours panel, made on first use, shown, raised and drawing.
ContoursPanel* showContours(MainWindow* window);

}  // namespace stacklens::ui
