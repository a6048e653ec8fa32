// The policy network as an ONNX model (opset 17), so a trained policy runs
// in any ONNX runtime without graphworld or LibTorch.
//
// One observation per run, every size dynamic:
//   inputs   node_features   float [nodes, 64]
//            edge_features   float [edges, 8]
//            globals         float [1, 6]
//            senders         int64 [edges]     producing node of each edge
//            receivers       int64 [edges]     consuming node
//            xfer_mask       float [1, N+1]    1 where the xfer is allowed
//            xfer            int64 [1]         the xfer whose locations to score
//            location_nodes  int64 [C, K]      the K matched nodes of each of
//                                              its C locations (K is fixed per xfer)
//   outputs  xfer_log_probs      float [1, N+1]  (-inf where masked)
//            location_log_probs  float [C]
//            value               float [1, 1]
// Segment sums are ScatterElements with reduction "add"; the layout of the
// feature arrays is env/gym/observation.h's (kObservationFeatureVersion).
#pragma once

#include <string>

#include "learner/policy_network.h"

namespace graphworld {

std::string export_policy_onnx_bytes(const PolicyNetwork& network);
void export_policy_onnx_file(const PolicyNetwork& network, const std::string& path);

}  // namespace graphworld
