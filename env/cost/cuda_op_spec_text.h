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

inline int64_t parse_int(const std::string& item) {
  size_t used = 0;
  const int64_t value = std::stoll(item, &used);
  if (used != item.size()) throw std::invalid_argument("not an integer: '" + item + "'");
  return value;
}

inline std::vector<int64_t> parse_dims(const std::string& text) {
  std::vector<int64_t> out;
  if (text.empty()) return out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(parse_int(item));
  if (text.back() == ',') throw std::invalid_argument("a list ends in ','");
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

// Throws std::invalid_argument when `s` lacks the dims its kind needs (so
// neither the timer nor the model reads past a shape).
inline void validate_cuda_spec(const CudaOpSpec& s) {
  auto need = [](const std::vector<int64_t>& dims, size_t rank, const char* what) {
    if (dims.size() != rank)
      throw std::invalid_argument(std::string(what) + " needs " + std::to_string(rank) + " dims, has " +
                                  std::to_string(dims.size()));
    for (int64_t d : dims)
      if (d < 0) throw std::invalid_argument(std::string(what) + " has a negative dim");
  };
  switch (s.kind) {
    case CudaOpKind::Conv:
      need(s.in, 4, "conv input");
      need(s.in2, 4, "conv weight");
      need(s.out, 4, "conv output");
      if (s.groups < 1) throw std::invalid_argument("conv groups must be >= 1");
      break;
    case CudaOpKind::Pool:
      need(s.in, 4, "pool input");
      need(s.out, 4, "pool output");
      need(s.kernel, 2, "pool kernel");
      break;
    case CudaOpKind::Gemm:
      if (s.batch < 1 || s.m < 0 || s.n < 0 || s.k < 0) throw std::invalid_argument("gemm sizes must be >= 0, batch >= 1");
      break;
    case CudaOpKind::Transpose:
      if (s.perm.size() != s.in.size()) throw std::invalid_argument("transpose perm and input differ in rank");
      for (int64_t p : s.perm)
        if (p < 0 || p >= static_cast<int64_t>(s.in.size())) throw std::invalid_argument("transpose perm out of range");
      break;
    default:
      break;
  }
}

// Throws std::invalid_argument naming the field for anything malformed.
inline CudaOpSpec cuda_spec_from_text(const std::string& text) {
  using spec_text_detail::parse_dims;
  using spec_text_detail::parse_int;
  CudaOpSpec s;
  std::stringstream in(text);
  for (std::string field; std::getline(in, field, ';');) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("field without '=': '" + field + "'");
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    try {
      if (key == "kind") {
        const int kind = static_cast<int>(parse_int(value));
        if (kind < 0 || kind > static_cast<int>(CudaOpKind::LayerNorm)) throw std::invalid_argument("unknown kind");
        s.kind = static_cast<CudaOpKind>(kind);
      } else if (key == "in") s.in = parse_dims(value);
      else if (key == "in2") s.in2 = parse_dims(value);
      else if (key == "out") s.out = parse_dims(value);
      else if (key == "kernel") s.kernel = parse_dims(value);
      else if (key == "strides") s.strides = parse_dims(value);
      else if (key == "pads") s.pads = parse_dims(value);
      else if (key == "dilations") s.dilations = parse_dims(value);
      else if (key == "groups") s.groups = parse_int(value);
      else if (key == "bias") s.has_bias = static_cast<int>(parse_int(value)) != 0;
      else if (key == "act") s.activation = static_cast<int>(parse_int(value));
      else if (key == "clip") {
        size_t used = 0;
        s.clip_max = std::stod(value, &used);
        if (used != value.size()) throw std::invalid_argument("not a number: '" + value + "'");
      }
      else if (key == "mode") s.mode = static_cast<int>(parse_int(value));
      else if (key == "batch") s.batch = parse_int(value);
      else if (key == "m") s.m = parse_int(value);
      else if (key == "n") s.n = parse_int(value);
      else if (key == "k") s.k = parse_int(value);
      else if (key == "ta") s.trans_a = static_cast<int>(parse_int(value)) != 0;
      else if (key == "tb") s.trans_b = static_cast<int>(parse_int(value)) != 0;
      else if (key == "ab") s.a_broadcast = static_cast<int>(parse_int(value)) != 0;
      else if (key == "bb") s.b_broadcast = static_cast<int>(parse_int(value)) != 0;
      else if (key == "perm") s.perm = parse_dims(value);
      else if (key == "outer") s.outer = parse_int(value);
      else if (key == "pieces") s.piece_inner = parse_dims(value);
      else if (key == "numel") s.numel = parse_int(value);
      else if (key == "inputs") s.num_inputs = static_cast<int>(parse_int(value));
      else if (key == "flops") s.flops_per_element = static_cast<int>(parse_int(value));
      else if (key == "rows") s.rows = parse_int(value);
      else if (key == "cols") s.cols = parse_int(value);
      else if (key == "inner") s.inner = parse_int(value);
      else throw std::invalid_argument("unknown field");
    } catch (const std::logic_error& e) {
      throw std::invalid_argument("op spec field '" + field + "': " + e.what());
    }
  }
  validate_cuda_spec(s);
  return s;
}

}  // namespace graphworld
