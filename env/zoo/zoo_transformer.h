// Transformer encoder pieces shared by bert-full and vit-base.
#pragma once

#include <cstdint>
#include <string>

#include "env/ops/graph_builder.h"

namespace graphworld::zoo {

// Multi-head self-attention as in BERT and ViT: q, k and v projections with
// biases; heads split by Reshape and Transpose (k transposed so that q x k
// needs no further transpose); scores scaled by 1/sqrt(head_dim); Softmax over
// the keys; context; heads merged; output projection with bias.
// x: [batch, seq, hidden] -> [batch, seq, hidden].
TensorRef self_attention(GraphBuilder& b, TensorRef x, int64_t heads, const std::string& name);

// The position-wise MLP: Linear(hidden -> inner) + bias, Gelu (exact, erf
// form), Linear(inner -> hidden) + bias.
TensorRef feed_forward(GraphBuilder& b, TensorRef x, int64_t inner, const std::string& name);

}  // namespace graphworld::zoo
