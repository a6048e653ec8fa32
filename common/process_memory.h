// This process's memory, for reports: the resident set now (to watch a long
// run stay flat) and its peak.
#pragma once

#include <cstdint>

namespace graphworld {

uint64_t current_rss_bytes();  // 0 where /proc is not there
double peak_rss_mib();

}  // namespace graphworld
