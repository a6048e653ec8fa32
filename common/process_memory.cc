#include "common/process_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

namespace graphworld {

uint64_t current_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

}  // namespace graphworld
