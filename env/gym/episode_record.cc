#include "env/gym/episode_record.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "env/rules/rule_matcher.h"

namespace graphworld {

std::vector<std::string> applied_rule_names(const EpisodeRecord& record, const RuleMatcher& matcher) {
  std::vector<std::string> names;
  for (const EpisodeRecord::Step& a : record.actions)
    if (a.xfer >= 0 && a.xfer < static_cast<int32_t>(matcher.num_rules()))
      names.push_back(matcher.rules()[static_cast<size_t>(a.xfer)].name);
  return names;
}

void save_episode(const EpisodeRecord& record, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw Error("cannot write episode '" + tmp + "': check the directory exists and is writable");
    char hash[32];
    std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(record.graph_hash));
    out << "graphworld-episode 1\ngraph " << hash << "\nseed " << record.seed << "\nactions " << record.actions.size()
        << "\n";
    for (const auto& a : record.actions) out << a.xfer << ' ' << a.location << '\n';
    if (!out.flush()) throw Error("writing episode '" + tmp + "' failed (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error("cannot move '" + tmp + "' to '" + path + "': " + std::strerror(errno));
}

EpisodeRecord load_episode(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FormatError("cannot open episode '" + path + "': " + std::strerror(errno));
  int line_no = 0;
  std::string line;
  auto next = [&](const char* what) {
    ++line_no;
    if (!std::getline(in, line))
      throw FormatError(path + ":" + std::to_string(line_no) + ": the file ends before " + what);
    return std::istringstream(line);
  };
  auto bad = [&](const std::string& what) {
    return FormatError(path + ":" + std::to_string(line_no) + ": " + what + " (got '" + line + "')");
  };
  EpisodeRecord record;
  std::string word, hex;
  int version = 0;
  if (!(next("the header") >> word >> version) || word != "graphworld-episode")
    throw bad("not a graphworld episode file");
  if (version != 1) throw bad("episode format version " + std::to_string(version) + " is not supported (this build reads 1)");
  if (!(next("the graph hash") >> word >> hex) || word != "graph") throw bad("expected 'graph <hash>'");
  try {
    size_t used = 0;
    record.graph_hash = std::stoull(hex, &used, 16);
    if (used != hex.size()) throw std::invalid_argument(hex);
  } catch (const std::logic_error&) {
    throw bad("the graph hash is not hexadecimal");
  }
  if (!(next("the seed") >> word >> record.seed) || word != "seed") throw bad("expected 'seed <integer>'");
  size_t count = 0;
  if (!(next("the action count") >> word >> count) || word != "actions") throw bad("expected 'actions <count>'");
  for (size_t i = 0; i < count; ++i) {
    EpisodeRecord::Step step;
    if (!(next("every action is listed") >> step.xfer >> step.location)) throw bad("expected '<xfer> <location>'");
    record.actions.push_back(step);
  }
  return record;
}

}  // namespace graphworld
