// A saved episode: enough to replay it exactly on the same graph.
//
// File format (text, one item per line):
//   graphworld-episode 1
//   graph <structural hash of the initial graph, hex>
//   seed <seed>
//   actions <count>
//   <xfer> <location>        (one line per action)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphworld {

class RuleMatcher;

struct EpisodeRecord {
  uint64_t graph_hash = 0;
  uint64_t seed = 0;
  struct Step {
    int32_t xfer = 0;
    int32_t location = 0;
  };
  std::vector<Step> actions;
};

// The names of the rules the episode applied, in order (NO-OP and
// out-of-range xfers left out): what a search result's `applied` lists.
std::vector<std::string> applied_rule_names(const EpisodeRecord& record, const RuleMatcher& matcher);

// Writes atomically (temporary file, then rename); Error if it cannot.
void save_episode(const EpisodeRecord& record, const std::string& path);
// FormatError naming the file and line for anything malformed.
EpisodeRecord load_episode(const std::string& path);

}  // namespace graphworld
