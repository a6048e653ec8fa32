#include "tests/support/test_env.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>


namespace graphworld::testing {
namespace fs = std::filesystem;

std::string source_dir() { return GRAPHWORLD_SOURCE_DIR; }

std::string graphworld_binary() {
  const char* path = std::getenv("GRAPHWORLD_BIN");
  return path ? path : std::string(GRAPHWORLD_BINARY_DIR) + "/launch/graphworld";
}

std::string model_path(const std::string& file_name) {
  const char* dir = std::getenv("GRAPHWORLD_TEST_MODELS");
  std::string base = dir ? dir : std::string(GRAPHWORLD_TEST_MODELS_DIR);
  std::string path = base + "/" + file_name;
  if (!fs::exists(path))
    ADD_FAILURE() << "test model " << path
                  << " is missing: run '/usr/bin/python3 tests/data/export_models.py " << base << "' (ctest does)";
  return path;
}

std::string scratch_dir() {
  static std::string dir = [] {
    std::string d = std::string(GRAPHWORLD_BINARY_DIR) + "/test-scratch/" + std::to_string(::getpid());
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

int run_command(const std::string& command, std::string* output) {
  std::string full = command + " 2>&1";
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return -1;
  constexpr size_t kKeepHead = 1 << 20, kKeepTail = 1 << 20;
  std::array<char, 4096> buffer;
  std::string head, tail;
  size_t n, dropped = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    const size_t into_head = std::min(n, kKeepHead - head.size());
    head.append(buffer.data(), into_head);
    tail.append(buffer.data() + into_head, n - into_head);
    if (tail.size() > 2 * kKeepTail) {
      dropped += tail.size() - kKeepTail;
      tail.erase(0, tail.size() - kKeepTail);
    }
  }
  int status = ::pclose(pipe);
  if (output) {
    if (tail.size() > kKeepTail) {
      dropped += tail.size() - kKeepTail;
      tail.erase(0, tail.size() - kKeepTail);
    }
    *output = dropped ? head + "\n[... " + std::to_string(dropped) + " bytes of output dropped ...]\n" + tail
                      : head + tail;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string file_difference(const std::string& path_a, const std::string& path_b) {
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::string("(cannot open " + path + ")");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string a = read(path_a), b = read(path_b);
  if (a == b) return "";
  size_t offset = 0;
  while (offset < a.size() && offset < b.size() && a[offset] == b[offset]) ++offset;
  return path_a + " (" + std::to_string(a.size()) + " bytes) and " + path_b + " (" + std::to_string(b.size()) +
         " bytes) first differ at byte " + std::to_string(offset);
}

void write_tensor_dir(const std::string& dir, const std::vector<std::string>& names,
                      const std::vector<std::shared_ptr<const TensorData>>& tensors) {
  fs::create_directories(dir);
  std::ostringstream manifest;
  manifest << "{\"tensors\":[";
  for (size_t k = 0; k < tensors.size(); ++k) {
    std::string file = std::to_string(k) + ".bin";
    std::ofstream out(dir + "/" + file, std::ios::binary);
    out.write(static_cast<const char*>(tensors[k]->raw()), static_cast<std::streamsize>(tensors[k]->nbytes()));
    manifest << (k ? "," : "") << "{\"name\":\"" << names[k] << "\",\"dtype\":\"" << dtype_name(tensors[k]->dtype())
             << "\",\"shape\":" << shape_to_string(tensors[k]->shape()) << ",\"file\":\"" << file << "\"}";
  }
  manifest << "]}";
  std::ofstream(dir + "/manifest.json") << manifest.str();
}

std::vector<std::shared_ptr<TensorData>> read_tensor_dir(const std::string& dir) {
  std::ifstream in(dir + "/manifest.json");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  // The manifest is written by tests/tools/ort_run.mjs in a fixed shape.
  std::regex entry(R"re(\{[^{}]*"dtype"\s*:\s*"(\w+)"[^{}]*"shape"\s*:\s*\[([^\]]*)\][^{}]*"file"\s*:\s*"([^"]+)"[^{}]*\})re");
  std::vector<std::shared_ptr<TensorData>> tensors;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    Shape shape;
    std::stringstream dims((*it)[2].str());
    std::string dim;
    while (std::getline(dims, dim, ','))
      if (dim.find_first_not_of(" \t") != std::string::npos) shape.push_back(std::stoll(dim));
    DType dtype = (*it)[1].str() == "int64" ? DType::Int64 : DType::Float32;
    auto data = std::make_shared<TensorData>(dtype, shape);
    std::ifstream file(dir + "/" + (*it)[3].str(), std::ios::binary);
    file.read(static_cast<char*>(data->raw()), static_cast<std::streamsize>(data->nbytes()));
    EXPECT_TRUE(file.good()) << "short tensor file " << (*it)[3].str() << " in " << dir;
    tensors.push_back(data);
  }
  return tensors;
}

std::vector<std::shared_ptr<TensorData>> run_onnxruntime(const std::string& model_file, const Graph& graph,
                                                         const std::vector<std::shared_ptr<const TensorData>>& inputs) {
  static int counter = 0;
  std::string base = scratch_dir() + "/ort" + std::to_string(counter++);
  std::vector<std::string> names;
  for (OpId id : graph.input_ops()) names.push_back(graph.op(id).name);
  write_tensor_dir(base + "/in", names, inputs);
  std::string output;
  std::string command = "node " + source_dir() + "/tests/tools/ort_run.mjs --model '" + model_file + "' --inputs " +
                        base + "/in --outputs " + base + "/out --threads 1 --opt disabled";
  int status = run_command(command, &output);
  EXPECT_EQ(status, 0) << command << "\n" << output;
  if (status != 0) return {};
  return read_tensor_dir(base + "/out");
}

OrtComparison ort_compare(const std::string& model_a, const std::string& model_b, const std::string& input_shapes) {
  std::string output;
  std::string command = "node " + source_dir() + "/tests/tools/ort_compare.mjs '" + model_a + "' '" + model_b + "' --json";
  if (!input_shapes.empty()) command += " --input-shapes '" + input_shapes + "'";
  int status = run_command(command, &output);
  EXPECT_EQ(status, 0) << command << "\n" << output;
  OrtComparison result;
  std::smatch m;
  auto number = [&](const char* key) {
    std::regex re(std::string("\"") + key + R"re("\s*:\s*([-0-9.eE+]+|null))re");
    if (std::regex_search(output, m, re) && m[1] != "null") return std::stod(m[1]);
    ADD_FAILURE() << "no " << key << " in ort_compare output: " << output;
    return -1.0;
  };
  result.max_abs_err = number("max_abs_err");
  result.max_rel_err = number("max_rel_err");
  result.outputs = static_cast<int>(number("outputs"));
  return result;
}

std::vector<OrtComparison> ort_compare_many(const std::string& model_a, const std::vector<std::string>& models_b) {
  if (models_b.size() == 1) return {ort_compare(model_a, models_b[0])};
  std::string command = "node " + source_dir() + "/tests/tools/ort_compare.mjs '" + model_a + "'";
  for (const std::string& b : models_b) command += " '" + b + "'";
  command += " --json";
  std::string output;
  int status = run_command(command, &output);
  EXPECT_EQ(status, 0) << command << "\n" << output;
  std::vector<OrtComparison> results;
  std::regex entry(R"re("max_abs_err"\s*:\s*([-0-9.eE+]+)\s*,\s*"max_rel_err"\s*:\s*([-0-9.eE+]+)\s*,\s*"outputs"\s*:\s*([0-9]+))re");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), entry); it != std::sregex_iterator(); ++it)
    results.push_back({std::stod((*it)[1]), std::stod((*it)[2]), std::stoi((*it)[3])});
  EXPECT_EQ(results.size(), models_b.size()) << output;
  return results;
}

double relative_error(const TensorData& expected, const TensorData& actual) {
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (!std::isfinite(expected.floats()[i])) return INFINITY;
    diff = std::max(diff, static_cast<double>(std::fabs(expected.floats()[i] - actual.floats()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(expected.floats()[i])));
  }
  return std::isfinite(diff) ? diff / scale : INFINITY;
}

std::map<OpType, int> op_type_counts(const Graph& graph) {
  std::map<OpType, int> counts;
  for (const Op& op : graph.ops()) ++counts[op.type];
  return counts;
}

}  // namespace graphworld::testing
