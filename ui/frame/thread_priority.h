// The priority of the threads that process (live processing, dialogs' jobs, read-ahead, the 3D
// view): below the GUI thread's, so that the viewer stays responsive while they work.
#pragma once

namespace stacklens::ui {

// Lowers the calling thread's scheduling priority (Linux: nice +5, or STACKLENS_PROCESSING_NICE;
// elsewhere nothing), so that processing yields the CPU to the GUI thread and the renderer.
// Threads it creates later inherit the lower priority.
void lowerThreadPriority();

}  // namespace stacklens::ui
