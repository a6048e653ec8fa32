// The persistent cache of measured op costs: one text file per device
// fingerprint, mapping a configuration's canonical key to milliseconds.
//
// File format (version 1):
//   graphworld-cost-cache 1
//   fingerprint <device fingerprint>
//   <ms>\t<canonical key>            one line per configuration
//   end <record count> <checksum>    FNV-1a 64 of every byte before this line
//
// Safety:
// - writers take an exclusive lock (flock on FILE.lock), merge what is on
//   disk now with their own entries, write FILE.tmp.<pid> and rename it over
//   FILE, so two processes measuring at once lose nothing and readers never
//   see a half-written file;
// - a file that fails any check (header, fingerprint, record syntax, count,
//   checksum) is never trusted: it is reported, moved to FILE.corrupt for
//   inspection, and the cache is rebuilt by measuring again.
#pragma once

#include <string>
#include <unordered_map>

namespace graphworld {

using CostEntries = std::unordered_map<std::string, double>;

// `ms` as the file stores it (9 significant digits). A measurement is rounded
// so before use, so the process that measured it and every later one that
// reads it back price the configuration identically.
double round_to_cache_precision(double ms);

class CostCacheFile {
 public:
  CostCacheFile(std::string path, std::string fingerprint);

  // Entries on disk now; empty if there is no file. A corrupt file is moved
  // aside and reported through problem() (and on stderr).
  CostEntries load();
  // Entries on disk now, for a file that is only ever read (a shipped cost
  // table, perhaps in a read-only tree): no lock file, and a corrupt file is
  // left where it is and reported through problem() alone.
  CostEntries load_read_only();
  // Writes `entries` merged with the file's current contents, under the lock.
  // Returns the number of entries in the file afterwards.
  size_t merge_and_save(const CostEntries& entries);

  const std::string& path() const { return path_; }
  // The last corruption found ("" if none), for tests and reports.
  const std::string& problem() const { return problem_; }

 private:
  // Parses the file; on corruption sets problem_ and returns false.
  bool parse(const std::string& text, CostEntries& out);
  CostEntries load_unlocked();
  std::string path_;
  std::string fingerprint_;
  std::string problem_;
};

// Where caches and calibration files live: $GRAPHWORLD_CACHE_DIR, else
// $XDG_CACHE_HOME/graphworld, else ~/.cache/graphworld.
std::string default_cache_dir();

}  // namespace graphworld
