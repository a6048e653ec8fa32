// Einsum, lowered to Transpose, ReduceSum, Reshape and a batched MatMul.
// The forms transformer exporters emit (attention scores 'bhqd,bhkd->bhqk',
// weighted values 'bhqk,bhkd->bhqd', projections 'bld,dk->blk') become ops
// that the cost models price and the rules already rewrite; a dedicated
// Einsum op would be opaque to both. One or two operands, explicit letters
// (no ellipsis, no repeated letter within an operand).
#include <algorithm>

#include "common/error.h"
#include "env/onnx/import_context.h"

namespace graphworld {
namespace {

using Node = onnx::NodeProto;

struct Operand {
  Value value;
  std::string letters;  // one per axis
  Shape shape;
};

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Equation parse_equation(const ImportContext& ctx, const Node& node, size_t operands) {
  std::string text;
  for (char c : NodeAttrs(node, ctx.where(node)).get_string("equation", "")) if (c != ' ') text += c;
  auto fail = [&](const std::string& why) {
    throw ImportError(ctx.where(node) + ": equation '" + text + "' " + why);
  };
  if (text.find("...") != std::string::npos) fail("uses an ellipsis, which graphworld does not support");
  Equation eq;
  size_t arrow = text.find("->");
  std::string lhs = text.substr(0, arrow);
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    eq.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (eq.inputs.size() != operands)
    fail("names " + std::to_string(eq.inputs.size()) + " operands, the node has " + std::to_string(operands));
  std::string all;
  for (const std::string& term : eq.inputs) {
    for (char c : term)
      if (!std::isalpha(static_cast<unsigned char>(c))) fail("has '" + std::string(1, c) + "', not a letter");
    std::string sorted = term;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      fail("repeats a letter within one operand (a diagonal), which graphworld does not support");
    all += term;
  }
  if (arrow != std::string::npos) {
    eq.output = text.substr(arrow + 2);
  } else {  // implicit form: the letters that appear once, in alphabetical order
    std::string sorted = all;
    std::sort(sorted.begin(), sorted.end());
    for (char c : sorted)
      if (std::count(all.begin(), all.end(), c) == 1) eq.output += c;
  }
  for (char c : eq.output)
    if (all.find(c) == std::string::npos) fail("has output letter '" + std::string(1, c) + "' that no operand has");
  return eq;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

class EinsumLowering {
 public:
  EinsumLowering(ImportContext& ctx, const Node& node) : ctx_(ctx), node_(node) {}

  Operand operand(int index, const std::string& letters) {
    Operand x{ctx_.input(node_, index), letters, ctx_.input_info(node_, index).shape};
    if (x.shape.size() != letters.size())
      throw ImportError(ctx_.where(node_) + ": operand " + std::to_string(index) + " has shape " +
                        shape_to_string(x.shape) + " but the equation names " + std::to_string(letters.size()) + " axes ('" +
                        letters + "')");
    return x;
  }

  // Sums away the axes whose letters `keep` lacks.
  Operand sum_except(Operand x, const std::string& keep) {
    std::vector<int64_t> axes;
    std::string letters;
    Shape shape;
    for (size_t k = 0; k < x.letters.size(); ++k) {
      if (has(keep, x.letters[k])) {
        letters += x.letters[k];
        shape.push_back(x.shape[k]);
      } else {
        axes.push_back(static_cast<int64_t>(k));
      }
    }
    if (axes.empty()) return x;
    Value v = emit(OpType::ReduceSum, x.value, {{AttrKey::Axes, axes}, {AttrKey::KeepDims, int64_t{0}}});
    return {v, letters, shape};
  }

  Operand transpose_to(Operand x, const std::string& order) {
    if (x.letters == order) return x;
    std::vector<int64_t> perm;
    Shape shape;
    for (char c : order) {
      auto at = static_cast<int64_t>(x.letters.find(c));
      perm.push_back(at);
      shape.push_back(x.shape[static_cast<size_t>(at)]);
    }
    return {emit(OpType::Transpose, x.value, {{AttrKey::Perm, perm}}), order, shape};
  }

  Value reshape(const Value& v, const Shape& from, const Shape& to) {
    if (from == to) return v;
    return emit(OpType::Reshape, v, {{AttrKey::Shape, to}});
  }

  Value emit(OpType type, const Value& input, Attributes attrs) {
    return ctx_.emit(node_, type, {input}, std::move(attrs), "/einsum" + std::to_string(step_++))[0];
  }

  Value matmul(const Value& a, const Value& b) {
    return ctx_.emit(node_, OpType::MatMul, {a, b}, {}, "/einsum" + std::to_string(step_++))[0];
  }

  int64_t size_of(const Operand& a, const Operand& b, char c) const {
    if (has(a.letters, c)) return a.shape[a.letters.find(c)];
    return b.shape[b.letters.find(c)];
  }

  Shape dims(const Operand& a, const Operand& b, const std::string& letters) const {
    Shape out;
    for (char c : letters) out.push_back(size_of(a, b, c));
    return out;
  }

  static int64_t product(const Shape& s) {
    int64_t p = 1;
    for (int64_t d : s) p *= d;
    return p;
  }

  // Two operands: batch letters (both operands and the output), contracted
  // (both, not the output), left and right (one operand and the output).
  Operand pair(Operand a, Operand b, const std::string& out) {
    a = sum_except(a, b.letters + out);
    b = sum_except(b, a.letters + out);
    std::string batch, contracted, left, right;
    for (char c : out) {
      if (has(a.letters, c) && has(b.letters, c)) batch += c;
      else if (has(a.letters, c)) left += c;
      else right += c;
    }
    for (char c : a.letters)
      if (has(b.letters, c) && !has(out, c)) contracted += c;
    for (char c : batch + contracted)
      if (a.shape[a.letters.find(c)] != b.shape[b.letters.find(c)])
        throw ImportError(ctx_.where(node_) + ": letter '" + std::string(1, c) + "' has size " +
                          std::to_string(a.shape[a.letters.find(c)]) + " in one operand and " +
                          std::to_string(b.shape[b.letters.find(c)]) + " in the other");
    if (batch.empty() && contracted.size() == 1 && right.size() == 1) {
      // A projection: MatMul broadcasts the left operand's leading axes.
      Operand at = transpose_to(a, left + contracted), bt = transpose_to(b, contracted + right);
      return {matmul(at.value, bt.value), left + right, dims(a, b, left + right)};
    }
    Shape batch_dims = dims(a, b, batch);
    int64_t l = product(dims(a, b, left)), k = product(dims(a, b, contracted)), r = product(dims(a, b, right));
    Operand at = transpose_to(a, batch + left + contracted), bt = transpose_to(b, batch + contracted + right);
    Shape a_shape = batch_dims, b_shape = batch_dims;
    a_shape.insert(a_shape.end(), {l, k});
    b_shape.insert(b_shape.end(), {k, r});
    Value product_value = matmul(reshape(at.value, at.shape, a_shape), reshape(bt.value, bt.shape, b_shape));
    Shape result = batch_dims;
    result.insert(result.end(), {l, r});
    Shape wanted = dims(a, b, batch + left + right);
    return {reshape(product_value, result, wanted), batch + left + right, wanted};
  }

 private:
  ImportContext& ctx_;
  const Node& node_;
  int step_ = 0;
};

}  // namespace

void convert_einsum(ImportContext& ctx, const Node& node) {
  int operands = 0;
  for (int i = 0; i < node.input_size(); ++i) operands += ctx.has_input(node, i) ? 1 : 0;
  if (operands < 1 || operands > 2)
    throw ImportError(ctx.where(node) + ": Einsum with " + std::to_string(operands) +
                      " operands is not supported (one or two are)");
  Equation eq = parse_equation(ctx, node, static_cast<size_t>(operands));
  EinsumLowering lower(ctx, node);
  Operand result = operands == 1 ? lower.sum_except(lower.operand(0, eq.inputs[0]), eq.output)
                                 : lower.pair(lower.operand(0, eq.inputs[0]), lower.operand(1, eq.inputs[1]), eq.output);
  result = lower.transpose_to(result, eq.output);
  ctx.set_output(node, 0, result.value);
}

}  // namespace graphworld
