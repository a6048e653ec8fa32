// Ctrl-C, SIGTERM and SIGUSR1 as a stop request that long-running commands
// poll (train, learner, actor, the cluster job): the first asks for a clean
// stop, a second takes the default action and ends the process at once.
// SIGUSR1 is how Slurm warns a job before its time limit, and the one
// signal srun passes to its tasks without ending the step.
#pragma once

namespace graphworld {

// Installs the handlers and clears any earlier request.
void install_stop_signals();
void restore_default_signals();
// Lock-free: safe to call from any thread.
bool stop_requested();
// The signal that asked for the stop (SIGINT, SIGTERM or SIGUSR1); 0 if none did.
int stop_signal_number();

}  // namespace graphworld
