// Times a configuration list (graphworld cost export-gpu-configs) on this
// GPU with the cuda cost model's own timer (env/cost/cuda_op_timer.cu), so a
// GPU machine needs neither LibTorch nor a graphworld build: nvcc, cuDNN and
// cuBLAS are enough. tests/bench/gpu_cost_table builds and runs it.
//
//   time_configs LIST OUT [--deadline-s S] [--method loop|graph]
//
// --method: how each op is timed (CudaTimingMethod in cuda_op_spec.h): graph
// (the default, as the cuda cost model times) replays the calls from a CUDA
// graph, the device time; loop launches them from the host.
//
// OUT gets 'fingerprint ...' and one 'ms<tab>key' line per configuration,
// flushed as it goes, so a run stopped at its deadline keeps what it timed.
// A configuration the GPU refuses is reported on stderr and left out.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "env/cost/cuda_op_spec.h"
#include "env/cost/cuda_op_spec_text.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s LIST OUT [--deadline-s S] [--method loop|graph]\n", argv[0]);
    return 2;
  }
  double deadline_s = 1e18;
  graphworld::CudaTimingPolicy policy;  // the cuda cost model's own (graph replay)
  for (int i = 3; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value\n", flag.c_str());
      return 2;
    }
    const std::string value = argv[i + 1];
    if (flag == "--deadline-s") {
      deadline_s = std::atof(value.c_str());
    } else if (flag == "--method" && (value == "loop" || value == "graph")) {
      policy.method = value == "graph" ? graphworld::CudaTimingMethod::kGraph : graphworld::CudaTimingMethod::kLoop;
    } else {
      std::fprintf(stderr, "unknown option %s %s (give --deadline-s S or --method loop|graph)\n", flag.c_str(), value.c_str());
      return 2;
    }
  }
  std::ifstream in(argv[1]);
  std::string line;
  if (!in || !std::getline(in, line) || line != "graphworld-gpu-configs 1") {
    std::fprintf(stderr, "%s: not a configuration list from 'graphworld cost export-gpu-configs'\n", argv[1]);
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> configs;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) configs.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  std::FILE* out = std::fopen(argv[2], "w");
  if (!out) {
    std::perror(argv[2]);
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  try {
    std::fprintf(out, "fingerprint %s\n", graphworld::cuda_device_fingerprint(policy.method).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "no GPU to time on: %s\n", e.what());
    return 1;
  }
  size_t timed = 0, failed = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (elapsed() > deadline_s) {
      std::fprintf(stderr, "deadline: stopped after %zu of %zu configurations\n", i, configs.size());
      break;
    }
    try {
      const double ms = graphworld::cuda_time_op(graphworld::cuda_spec_from_text(configs[i].second), policy);
      std::fprintf(out, "%.9g\t%s\n", ms, configs[i].first.c_str());
      std::fflush(out);
      ++timed;
    } catch (const std::exception& e) {
      ++failed;
      std::fprintf(stderr, "%s: %s\n", configs[i].first.c_str(), e.what());
    }
    if ((i + 1) % 250 == 0)
      std::fprintf(stderr, "timed %zu of %zu configurations, %.0f s\n", i + 1, configs.size(), elapsed());
  }
  std::fclose(out);
  std::fprintf(stderr, "timed %zu configurations (%zu failed) in %.1f s\n", timed, failed, elapsed());
  return timed > 0 ? 0 : 1;
}
