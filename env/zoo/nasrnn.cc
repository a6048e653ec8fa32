// TASO's NASRNN benchmark (nasrnn.py): the recurrent cell found by neural
// architecture search (Zoph & Le), unrolled over 5 steps with hidden size 512.
// TASO keeps the initial state as a weight; here it is a graph input "state",
// next to the step inputs "x0".."x4".
#include <string>
#include <vector>

#include "env/zoo/zoo_builders.h"
#include "env/zoo/zoo_layers.h"

namespace graphworld::zoo {
namespace {

constexpr int64_t kHidden = 512;
constexpr int kSteps = 5;

// x * W1 + h * W2, each weight [kHidden, kHidden].
TensorRef combine(GraphBuilder& b, TensorRef x, TensorRef h, const std::string& name) {
  TensorRef wx = linear(b, x, kHidden, false, join(name, "x"));
  TensorRef wh = linear(b, h, kHidden, false, join(name, "h"));
  return binary(b, OpType::Add, wx, wh, join(name, "add"));
}

TensorRef nas_node(GraphBuilder& b, TensorRef h, TensorRef x, const std::string& name) {
  std::vector<TensorRef> t;
  for (int i = 0; i < 8; ++i) t.push_back(combine(b, x, h, join(name, "t" + std::to_string(i))));
  // m[i] = combine_type(fa(a), fc(c)), named "m<i>" with operands "m<i>.a" and
  // "m<i>.b". The operands are built into locals because the order in which
  // function arguments are evaluated is unspecified, and the op order should
  // not depend on the compiler.
  std::vector<TensorRef> m;
  auto mid = [&](OpType combine_type, OpType fa, TensorRef a, OpType fc, TensorRef c) {
    const std::string mid_name = join(name, "m" + std::to_string(m.size()));
    TensorRef left = unary(b, fa, a, join(mid_name, "a"));
    TensorRef right = unary(b, fc, c, join(mid_name, "b"));
    return binary(b, combine_type, left, right, mid_name);
  };
  m.push_back(mid(OpType::Add, OpType::Relu, t[0], OpType::Sigmoid, t[3]));
  m.push_back(mid(OpType::Add, OpType::Sigmoid, t[1], OpType::Tanh, t[2]));
  m.push_back(mid(OpType::Mul, OpType::Sigmoid, t[4], OpType::Tanh, t[5]));
  m.push_back(mid(OpType::Mul, OpType::Sigmoid, t[6], OpType::Relu, t[7]));
  m.push_back(mid(OpType::Add, OpType::Sigmoid, m[1], OpType::Tanh, m[2]));
  m.push_back(mid(OpType::Mul, OpType::Tanh, m[0], OpType::Tanh, m[3]));
  m.push_back(mid(OpType::Mul, OpType::Tanh, m[4], OpType::Tanh, m[5]));
  return unary(b, OpType::Tanh, m[6], join(name, "out"));
}

}  // namespace

Graph build_nasrnn(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  std::vector<TensorRef> xs;
  for (int i = 0; i < kSteps; ++i) xs.push_back(builder.input("x" + std::to_string(i), {options.batch, kHidden}));
  TensorRef state = builder.input("state", {options.batch, kHidden});
  for (int i = 0; i < kSteps; ++i) state = nas_node(builder, state, xs[i], "step" + std::to_string(i));
  builder.output(state, "output");
  return builder.finish();
}

}  // namespace graphworld::zoo
