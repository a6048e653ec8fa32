#include "worldmodel/model_based_parameters.h"

#include <sstream>

#include "common/error.h"

namespace graphworld {

namespace {
constexpr const char* kMagic = "graphworld model-based parameters 2";
}

// A text header of numbers, then the two byte sections whose sizes it gives.
std::string encode_model_based_parameters(const ModelBasedParameters& p) {
  std::ostringstream out;
  out.precision(17);
  out << kMagic << "\n"
      << p.generation << " " << p.round << " " << p.ask << " " << p.real_episodes << " " << p.greedy_episodes << " " << p.explore
      << " " << p.random_steps << " " << (p.dream ? 1 : 0) << " " << p.world_model.size() << " " << p.controller.size() << " " << p.plans.size()
      << "\n";
  for (const std::vector<int32_t>& plan : p.plans) {
    out << plan.size();
    for (int32_t x : plan) out << " " << x;
    out << "\n";
  }
  std::string blob = out.str();
  blob += p.world_model;
  blob += p.controller;
  return blob;
}

ModelBasedParameters decode_model_based_parameters(const std::string& blob, const std::string& what) {
  const size_t first = blob.find('\n');
  if (first == std::string::npos || blob.compare(0, first, kMagic) != 0)
    throw FormatError(what + ": not a model-based run's parameters (the learner and this actor differ in kind "
                             "or build)");
  size_t line_end = blob.find('\n', first + 1);
  if (line_end == std::string::npos) throw FormatError(what + ": the model-based parameters' header is cut short");
  std::istringstream in(blob.substr(first + 1, line_end - first - 1));
  ModelBasedParameters p;
  int dream = 0;
  size_t model_bytes = 0, controller_bytes = 0, plans = 0;
  if (!(in >> p.generation >> p.round >> p.ask >> p.real_episodes >> p.greedy_episodes >> p.explore >> p.random_steps >> dream >> model_bytes >>
        controller_bytes >> plans) ||
      p.generation < 0 || p.round < 0 || p.real_episodes < 0 || p.greedy_episodes < 0 || !(p.explore >= 0 && p.explore <= 1) || p.random_steps < 0 ||
      (dream != 0 && dream != 1) || plans > 100000)
    throw FormatError(what + ": the model-based parameters' header does not read");
  for (size_t i = 0; i < plans; ++i) {
    const size_t start = line_end + 1;
    line_end = blob.find('\n', start);
    if (line_end == std::string::npos) throw FormatError(what + ": the model-based parameters' plans are cut short");
    std::istringstream plan_in(blob.substr(start, line_end - start));
    size_t length = 0;
    std::vector<int32_t> plan;
    if (!(plan_in >> length) || length > 1000000) throw FormatError(what + ": a dream plan's length does not read");
    for (size_t k = 0; k < length; ++k) {
      int32_t x = -1;
      if (!(plan_in >> x) || x < 0) throw FormatError(what + ": a dream plan's rules do not read");
      plan.push_back(x);
    }
    p.plans.push_back(std::move(plan));
  }
  const size_t body = line_end + 1;
  if (model_bytes > blob.size() - body || controller_bytes > blob.size() - body - model_bytes ||
      blob.size() != body + model_bytes + controller_bytes)
    throw FormatError(what + ": the model-based parameters hold " + std::to_string(blob.size() - body) +
                      " bytes of models, their header says " + std::to_string(model_bytes + controller_bytes));
  if ((p.generation == 0) != (model_bytes == 0) || (model_bytes == 0) != (controller_bytes == 0))
    throw FormatError(what + ": the model-based parameters' generation and models disagree");
  p.dream = dream == 1;
  p.world_model = blob.substr(body, model_bytes);
  p.controller = blob.substr(body + model_bytes, controller_bytes);
  return p;
}

}  // namespace graphworld
