// The policy network exported as ONNX computes, in onnxruntime, what
// LibTorch computes: xfer log-probabilities, the location log-probabilities
// of a chosen xfer, and the value, on real observations (1e-4).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "learner/policy_module.h"
#include "learner/policy_onnx_export.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

std::shared_ptr<const TensorData> floats(const std::vector<float>& v, Shape shape) {
  return TensorData::from_floats(std::move(shape), v);
}
std::shared_ptr<const TensorData> int64s(const std::vector<int64_t>& v, Shape shape) {
  return TensorData::from_ints(std::move(shape), v);
}

void expect_close(const std::vector<float>& torch_values, const TensorData& ort, const std::string& what) {
  ASSERT_EQ(static_cast<size_t>(ort.numel()), torch_values.size()) << what;
  const float* o = ort.floats();
  for (size_t i = 0; i < torch_values.size(); ++i) {
    if (std::isinf(torch_values[i])) {
      EXPECT_TRUE(std::isinf(o[i]) && o[i] < 0) << what << "[" << i << "] should be -inf (masked)";
      continue;
    }
    EXPECT_NEAR(o[i], torch_values[i], 1e-4 * std::max(1.0f, std::abs(torch_values[i]))) << what << "[" << i << "]";
  }
}

TEST(PolicyOnnx, AgreesWithLibTorchInOnnxRuntime) {
  auto cost = testing::gpu_like_cost();
  PolicyNetworkConfig config;
  config.num_xfers = static_cast<int32_t>(testing::default_matcher().num_rules());
  config.hidden = 16;
  config.message_rounds = 2;
  config.seed = 9;
  PolicyNetwork net(config);
  const std::string model = testing::scratch_dir() + "/policy.onnx";
  export_policy_onnx_file(net, model);
  std::mt19937_64 rng(3);
  int checked = 0;
  for (const char* name : {"squeezenet1.1", "nasrnn", "bert"}) {
    GraphEnv env(build_zoo_model(name, {}), testing::default_matcher(), *cost);
    const Observation* obs = &env.reset(1);
    for (int step = 0; step < 2 && !env.done(); ++step) {
      // A rewrite the observation allows, and its locations.
      int32_t xfer = -1;
      for (int32_t x = 0; x < obs->num_xfers && xfer < 0; ++x)
        if (obs->xfer_mask[static_cast<size_t>(x)] && obs->location_count(x) > 1) xfer = x;
      ASSERT_GE(xfer, 0) << name;
      const int32_t count = obs->location_count(xfer);
      const auto first = obs->matched_nodes(xfer, 0);
      std::vector<int64_t> location_nodes;
      for (int32_t loc = 0; loc < count; ++loc)
        for (int32_t n : obs->matched_nodes(xfer, loc)) location_nodes.push_back(n);

      // LibTorch.
      torch::NoGradGuard no_grad;
      PolicyModule& m = net.impl().module;
      const ObservationBatch batch = batch_observations({obs});
      const BatchTensors t = to_tensors(batch);
      const Encoded e = m->encode(t);
      const torch::Tensor xfer_lp = m->xfer_log_probs(e, t).contiguous();
      const LocationCandidates c = location_candidates({obs}, batch, {xfer});
      const torch::Tensor loc_lp = m->location_log_probs(e, c, {xfer}, 1).contiguous();
      const torch::Tensor value = m->values(e).contiguous();

      // onnxruntime.
      const GraphTuple& g = obs->graph;
      std::vector<float> mask(obs->xfer_mask.begin(), obs->xfer_mask.end());
      const std::string dir = testing::scratch_dir() + "/policy-onnx-" + name + std::to_string(step);
      testing::write_tensor_dir(
          dir + "/in",
          {"node_features", "edge_features", "globals", "senders", "receivers", "xfer_mask", "xfer", "location_nodes"},
          {floats(g.node_features, {g.num_nodes, kNodeFeatureDim}),
           floats(g.edge_features, {g.num_edges, kEdgeFeatureDim}), floats(g.globals, {1, kGlobalFeatureDim}),
           int64s(std::vector<int64_t>(g.senders.begin(), g.senders.end()), {g.num_edges}),
           int64s(std::vector<int64_t>(g.receivers.begin(), g.receivers.end()), {g.num_edges}),
           floats(mask, {1, static_cast<int64_t>(mask.size())}), int64s({xfer}, {1}),
           int64s(location_nodes, {count, static_cast<int64_t>(first.size())})});
      std::string out;
      const std::string command = "node " + testing::source_dir() + "/tests/tools/ort_run.mjs --model " + model +
                                  " --inputs " + dir + "/in --outputs " + dir + "/out --opt all";
      ASSERT_EQ(testing::run_command(command, &out), 0) << out;
      const auto results = testing::read_tensor_dir(dir + "/out");
      ASSERT_EQ(results.size(), 3u) << out;
      expect_close(std::vector<float>(xfer_lp.data_ptr<float>(), xfer_lp.data_ptr<float>() + xfer_lp.numel()),
                   *results[0], std::string(name) + " xfer_log_probs");
      expect_close(std::vector<float>(loc_lp.data_ptr<float>(), loc_lp.data_ptr<float>() + loc_lp.numel()),
                   *results[1], std::string(name) + " location_log_probs");
      expect_close({value.item<float>()}, *results[2], std::string(name) + " value");
      ++checked;
      obs = env.step({xfer, 0}).observation;
    }
  }
  EXPECT_GE(checked, 4);
}

}  // namespace
}  // namespace graphworld
