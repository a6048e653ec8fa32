// Commands run in this process for their JSON report, for callers that
// are not a shell (the Python module, python/): `optimize_json(args)` is
// what `graphworld optimize ARGS... --json` prints, and `cost_json(args)`
// what `graphworld cost ARGS... --json` prints, as text. The same options,
// checks and errors (UsageError and the rest, with the same wording) as the
// commands; progress still goes to stderr unless --quiet is among `args`.
#pragma once

#include <string>
#include <vector>

namespace graphworld {

std::string optimize_json(const std::vector<std::string>& args);
std::string cost_json(const std::vector<std::string>& args);

}  // namespace graphworld
