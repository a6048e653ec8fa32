// CURVE keys of one run, kept in its folder: RUN/keys/learner.key (the
// learner's pair) and RUN/keys/actor.key (the pair every actor of the run
// presents; the learner admits its public key alone). Both are mode 0600.
//
// A run is secured when RUN/keys exists: the learner makes the keys when it
// binds a non-loopback address (or is asked to), a resumed learner and
// every actor find them there. Anyone who can read the run folder can join
// the run, so keep it private to the user who runs it.
#pragma once

#include <string>

#include "common/transport.h"

namespace graphworld {

// What `graphworld launch` puts in a run folder before its learner starts
// (the keys and RUN/slurm): a new run may begin in a folder holding only these.
bool is_launcher_entry(const std::string& name);

// True if the run folder holds keys (the run uses CURVE).
bool run_has_keys(const std::string& run_dir);
// Makes the run's two key pairs unless they exist. Error if they cannot be
// written.
void make_run_keys(const std::string& run_dir);
// CURVE settings of the learner, or of an actor, from the run's keys
// (FormatError naming the file if one is missing, unreadable or readable by
// others). Other fields of `base` are kept.
TransportOptions learner_transport_with_keys(const std::string& run_dir, TransportOptions base);
TransportOptions actor_transport_with_keys(const std::string& run_dir, TransportOptions base);

}  // namespace graphworld
