// Ctrl-C and SIGTERM as a stop request that long-running commands poll
// (train, learner, actor): the first asks for a clean stop, a second takes
// the default action and ends the process at once.
#pragma once

namespace graphworld {

// Installs the handlers and clears any earlier request.
void install_stop_signals();
void restore_default_signals();
// Lock-free: safe to call from any thread.
bool stop_requested();

}  // namespace graphworld
