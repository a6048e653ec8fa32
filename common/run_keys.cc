#include "common/run_keys.h"

#include <filesystem>

#include "common/curve_keys.h"
#include "common/error.h"

namespace graphworld {
namespace fs = std::filesystem;

namespace {
std::string keys_dir(const std::string& run_dir) { return run_dir + "/keys"; }
std::string learner_key(const std::string& run_dir) { return keys_dir(run_dir) + "/learner.key"; }
std::string actor_key(const std::string& run_dir) { return keys_dir(run_dir) + "/actor.key"; }
}  // namespace

bool is_launcher_entry(const std::string& name) { return name == "keys" || name == "slurm"; }

bool run_has_keys(const std::string& run_dir) { return fs::is_directory(keys_dir(run_dir)); }

void make_run_keys(const std::string& run_dir) {
  require_curve();
  std::error_code ec;
  fs::create_directories(keys_dir(run_dir), ec);
  if (ec) throw Error(keys_dir(run_dir) + ": cannot create the keys folder (" + ec.message() + ")");
  fs::permissions(keys_dir(run_dir), fs::perms::owner_all, fs::perm_options::replace, ec);
  if (!fs::exists(learner_key(run_dir))) write_curve_keys(learner_key(run_dir), generate_curve_keys());
  if (!fs::exists(actor_key(run_dir))) write_curve_keys(actor_key(run_dir), generate_curve_keys());
}

TransportOptions learner_transport_with_keys(const std::string& run_dir, TransportOptions base) {
  base.curve = true;
  base.own_keys = read_curve_keys(learner_key(run_dir));
  base.admitted_keys = {read_curve_keys(actor_key(run_dir)).public_key};
  return base;
}

TransportOptions actor_transport_with_keys(const std::string& run_dir, TransportOptions base) {
  base.curve = true;
  base.own_keys = read_curve_keys(actor_key(run_dir));
  base.learner_public_key = read_curve_keys(learner_key(run_dir)).public_key;
  return base;
}

}  // namespace graphworld
