// graphworld devices: what CPU/GPU support this build and machine have.
#include <cstdio>
#include <thread>

#include "common/gpu_info.h"
#include "common/json_writer.h"
#include "launch/commands.h"

namespace graphworld {
namespace {

std::string version_text(int v) {
  if (v <= 0) return "-";
  return std::to_string(v);
}

int run_devices(const CliArgs& args) {
  GpuInfo info = probe_gpus();
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object();
    json.key("cpu_threads").value(static_cast<int64_t>(std::thread::hardware_concurrency()));
    json.key("cuda_built").value(info.cuda_built);
    json.key("cuda_runtime_version").value(info.cuda_runtime_version);
    json.key("cudnn_version").value(info.cudnn_version);
    json.key("cublas_version").value(info.cublas_version);
    json.key("nccl_version").value(info.nccl_version);
    json.key("gpus").begin_array();
    for (const auto& d : info.devices) {
      json.begin_object().key("index").value(d.index).key("name").value(d.name);
      json.key("compute_capability").value(std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor));
      json.key("memory_gib").value(d.memory_gib).end_object();
    }
    json.end_array();
    json.key("self_test").value(info.self_test);
    json.key("error").value(info.runtime_error);
    json.end_object();
    std::printf("%s\n", json.str().c_str());
    return 0;
  }
  std::printf("CPU: %u hardware threads (ATen executor)\n", std::thread::hardware_concurrency());
  if (!info.cuda_built) {
    std::printf("CUDA: %s\n", info.runtime_error.c_str());
    return 0;
  }
  std::printf("CUDA: built; runtime %s, cuDNN %s, cuBLAS %s, NCCL %s\n", version_text(info.cuda_runtime_version).c_str(),
              version_text(info.cudnn_version).c_str(), version_text(info.cublas_version).c_str(),
              version_text(info.nccl_version).c_str());
  if (!info.runtime_error.empty()) std::printf("GPUs: none usable (%s)\n", info.runtime_error.c_str());
  for (const auto& d : info.devices)
    std::printf("GPU %d: %s, compute %d.%d, %.1f GiB\n", d.index, d.name.c_str(), d.compute_major, d.compute_minor,
                d.memory_gib);
  if (!info.self_test.empty()) std::printf("self-test (cuBLAS SGEMM, cuDNN ReLU on GPU 0): %s\n", info.self_test.c_str());
  return 0;
}

}  // namespace

Subcommand devices_command() {
  return {{"devices",
           "",
           "Show the CPU and GPU support of this build: CUDA, cuDNN, cuBLAS and NCCL versions, visible GPUs.",
           "",
           {{"--json", "", "", "print one JSON object"}}},
          run_devices};
}

}  // namespace graphworld
