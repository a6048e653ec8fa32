// One CudaOpSpec as one line of text, and back, so the configurations to
// time can travel to a GPU machine and be timed there by a small program
// built from cuda_op_timer.cu alone (tests/bench/gpu_cost_table), without
// building graphworld there. Header-only C++17: nvcc compiles it too.
//
//   kind=0;in=1,64,56,56;in2=64,64,3,3;out=1,64,56,56;kernel=3,3;...
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "env/cost/cuda_op_spec.h"

namespace graphworld {
namespace spec_text_detail {

inline std::string dims(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out;
}

inline std::vector<int64_t> parse_dims(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    size_t used = 0;
    out.push_back(std::stoll(item, &used));
    if (used != item.size()) throw std::invalid_argument("not an integer: '" + item + "'");
  }
  return out;
}

}  // namespace spec_text_detail

inline std::string cuda_spec_to_text(const CudaOpSpec& s) {
  using spec_text_detail::dims;
  std::ostringstream out;
  out.precision(17);
  out << "kind=" << static_cast<int>(s.kind) << ";in=" << dims(s.in) << ";in2=" << dims(s.in2) << ";out=" << dims(s.out)
      << ";kernel=" << dims(s.kernel) << ";strides=" << dims(s.strides) << ";pads=" << dims(s.pads)
      << ";dilations=" << dims(s.dilations) << ";groups=" << s.groups << ";bias=" << s.has_bias
      << ";act=" << s.activation << ";clip=" << s.clip_max << ";mode=" << s.mode << ";batch=" << s.batch
      << ";m=" << s.m << ";n=" << s.n << ";k=" << s.k << ";ta=" << s.trans_a << ";tb=" << s.trans_b
      << ";ab=" << s.a_broadcast << ";bb=" << s.b_broadcast << ";perm=" << dims(s.perm) << ";outer=" << s.outer
      << ";pieces=" << dims(s.piece_inner) << ";numel=" << s.numel << ";inputs=" << s.num_inputs
      << ";flops=" << s.flops_per_element << ";rows=" << s.rows << ";cols=" << s.cols << ";inner=" << s.inner;
  return out.str();
}

// Throws std::invalid_argument naming the field for anything malformed.
inline CudaOpSpec cuda_spec_from_text(const std::string& text) {
  using spec_text_detail::parse_dims;
  CudaOpSpec s;
  std::stringstream in(text);
  for (std::string field; std::getline(in, field, ';');) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("field without '=': '" + field + "'");
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    try {
      if (key == "kind") {
        const int kind = std::stoi(value);
        if (kind < 0 || kind > static_cast<int>(CudaOpKind::LayerNorm)) throw std::invalid_argument("unknown kind");
        s.kind = static_cast<CudaOpKind>(kind);
      } else if (key == "in") s.in = parse_dims(value);
      else if (key == "in2") s.in2 = parse_dims(value);
      else if (key == "out") s.out = parse_dims(value);
      else if (key == "kernel") s.kernel = parse_dims(value);
      else if (key == "strides") s.strides = parse_dims(value);
      else if (key == "pads") s.pads = parse_dims(value);
      else if (key == "dilations") s.dilations = parse_dims(value);
      else if (key == "groups") s.groups = std::stoll(value);
      else if (key == "bias") s.has_bias = std::stoi(value) != 0;
      else if (key == "act") s.activation = std::stoi(value);
      else if (key == "clip") s.clip_max = std::stod(value);
      else if (key == "mode") s.mode = std::stoi(value);
      else if (key == "batch") s.batch = std::stoll(value);
      else if (key == "m") s.m = std::stoll(value);
      else if (key == "n") s.n = std::stoll(value);
      else if (key == "k") s.k = std::stoll(value);
      else if (key == "ta") s.trans_a = std::stoi(value) != 0;
      else if (key == "tb") s.trans_b = std::stoi(value) != 0;
      else if (key == "ab") s.a_broadcast = std::stoi(value) != 0;
      else if (key == "bb") s.b_broadcast = std::stoi(value) != 0;
      else if (key == "perm") s.perm = parse_dims(value);
      else if (key == "outer") s.outer = std::stoll(value);
      else if (key == "pieces") s.piece_inner = parse_dims(value);
      else if (key == "numel") s.numel = std::stoll(value);
      else if (key == "inputs") s.num_inputs = std::stoi(value);
      else if (key == "flops") s.flops_per_element = std::stoi(value);
      else if (key == "rows") s.rows = std::stoll(value);
      else if (key == "cols") s.cols = std::stoll(value);
      else if (key == "inner") s.inner = std::stoll(value);
      else throw std::invalid_argument("unknown field");
    } catch (const std::logic_error& e) {
      throw std::invalid_argument("op spec field '" + field + "': " + e.what());
    }
  }
  return s;
}

}  // namespace graphworld
