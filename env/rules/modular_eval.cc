#include "env/rules/modular_eval.h"

#include <algorithm>

#include "common/error.h"
#include "env/graph/hashing.h"
#include "env/ops/op_schema.h"
#include "env/rules/rule_constant.h"

namespace graphworld {

namespace {

constexpr int64_t P = kFingerprintPrime;

int64_t add(int64_t a, int64_t b) { return (a + b) % P; }
int64_t mul(int64_t a, int64_t b) { return (a * b) % P; }
bool negative(int64_t v) { return v > P / 2; }
int64_t signed_value(int64_t v) { return negative(v) ? v - P : v; }

int64_t inverse(int64_t a) {
  // Fermat: a^(p-2) mod p.
  int64_t result = 1, base = a % P, e = P - 2;
  while (e > 0) {
    if (e & 1) result = mul(result, base);
    base = mul(base, base);
    e >>= 1;
  }
  return result;
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Index into `shape` for a broadcast read at output coordinate `coord`.
int64_t broadcast_index(const Shape& shape, const std::vector<int64_t>& coord) {
  const size_t offset = coord.size() - shape.size();
  int64_t index = 0;
  for (size_t i = 0; i < shape.size(); ++i) index = index * shape[i] + (shape[i] == 1 ? 0 : coord[offset + i]);
  return index;
}

ModTensor elementwise(const ModTensor& a, const ModTensor& b, const Shape& out_shape, bool multiply) {
  ModTensor out{out_shape, std::vector<int64_t>(static_cast<size_t>(num_elements(out_shape)))};
  std::vector<int64_t> coord(out_shape.size(), 0);
  for (size_t i = 0; i < out.values.size(); ++i) {
    int64_t x = a.values[static_cast<size_t>(broadcast_index(a.shape, coord))];
    int64_t y = b.values[static_cast<size_t>(broadcast_index(b.shape, coord))];
    out.values[i] = multiply ? mul(x, y) : add(x, y);
    for (size_t d = coord.size(); d-- > 0;) {
      if (++coord[d] < out_shape[d]) break;
      coord[d] = 0;
    }
  }
  return out;
}

ModTensor matmul(const ModTensor& a, const ModTensor& b, const Shape& out_shape) {
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  const int64_t batches = num_elements(out_shape) / (m * n);
  const int64_t a_batches = num_elements(a.shape) / (m * k), b_batches = num_elements(b.shape) / (k * n);
  ModTensor out{out_shape, std::vector<int64_t>(static_cast<size_t>(batches * m * n), 0)};
  for (int64_t bt = 0; bt < batches; ++bt) {
    const int64_t* pa = a.values.data() + (a_batches == 1 ? 0 : bt) * m * k;
    const int64_t* pb = b.values.data() + (b_batches == 1 ? 0 : bt) * k * n;
    int64_t* po = out.values.data() + bt * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int64_t t = 0; t < k; ++t) acc = add(acc, mul(pa[i * k + t], pb[t * n + j]));
        po[i * n + j] = acc;
      }
  }
  return out;
}

ModTensor conv(const Attributes& attrs, const ModTensor& x, const ModTensor& w, const Shape& out_shape) {
  auto strides = attrs.get_ints(AttrKey::Strides, {1, 1});
  auto pads = attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0});
  const bool relu = attrs.get_int(AttrKey::Activation, 0) == static_cast<int64_t>(Activation::Relu);
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = out_shape[2], OW = out_shape[3];
  ModTensor out{out_shape, std::vector<int64_t>(static_cast<size_t>(N * O * OH * OW), 0)};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * strides[0] - pads[0] + kh;
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow * strides[1] - pads[1] + kw;
                if (iw < 0 || iw >= W) continue;
                acc = add(acc, mul(x.values[static_cast<size_t>(((n * C + c) * H + ih) * W + iw)],
                                   w.values[static_cast<size_t>(((o * C + c) * KH + kh) * KW + kw)]));
              }
            }
          if (relu && negative(acc)) acc = 0;
          out.values[static_cast<size_t>(((n * O + o) * OH + oh) * OW + ow)] = acc;
        }
  return out;
}

ModTensor pool(OpType type, const Attributes& attrs, const ModTensor& x, const Shape& out_shape) {
  auto kernel = attrs.require_ints(AttrKey::KernelShape);
  auto strides = attrs.get_ints(AttrKey::Strides, {1, 1});
  auto pads = attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0});
  const int64_t NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = out_shape[2], OW = out_shape[3];
  ModTensor out{out_shape, std::vector<int64_t>(static_cast<size_t>(NC * OH * OW), 0)};
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t acc = 0, count = 0;
        bool first = true;
        for (int64_t kh = 0; kh < kernel[0]; ++kh)
          for (int64_t kw = 0; kw < kernel[1]; ++kw) {
            const int64_t ih = oh * strides[0] - pads[0] + kh, iw = ow * strides[1] - pads[1] + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const int64_t v = x.values[static_cast<size_t>((nc * H + ih) * W + iw)];
            ++count;
            if (type == OpType::AvgPool) {
              acc = add(acc, v);
            } else if (first || signed_value(v) > signed_value(acc)) {
              acc = v;
            }
            first = false;
          }
        if (type == OpType::AvgPool && count > 0) acc = mul(acc, inverse(count));
        out.values[static_cast<size_t>((nc * OH + oh) * OW + ow)] = acc;
      }
  return out;
}

ModTensor transpose(const Attributes& attrs, const ModTensor& x, const Shape& out_shape) {
  auto perm = attrs.require_ints(AttrKey::Perm);
  ModTensor out{out_shape, std::vector<int64_t>(x.values.size())};
  auto in_strides = strides_of(x.shape);
  std::vector<int64_t> coord(out_shape.size(), 0);
  for (size_t i = 0; i < out.values.size(); ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < coord.size(); ++d) src += coord[d] * in_strides[static_cast<size_t>(perm[d])];
    out.values[i] = x.values[static_cast<size_t>(src)];
    for (size_t d = coord.size(); d-- > 0;) {
      if (++coord[d] < out_shape[d]) break;
      coord[d] = 0;
    }
  }
  return out;
}

// Concat and split share this: copy `x` into or out of a slab along `axis`.
void copy_slab(const ModTensor& from, int64_t from_offset, ModTensor& to, int64_t to_offset, int64_t axis,
               int64_t extent) {
  const int64_t outer = num_elements(Shape(from.shape.begin(), from.shape.begin() + axis));
  const int64_t inner = num_elements(Shape(from.shape.begin() + axis + 1, from.shape.end()));
  const int64_t from_axis = from.shape[static_cast<size_t>(axis)], to_axis = to.shape[static_cast<size_t>(axis)];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t a = 0; a < extent; ++a)
      for (int64_t i = 0; i < inner; ++i)
        to.values[static_cast<size_t>((o * to_axis + to_offset + a) * inner + i)] =
            from.values[static_cast<size_t>((o * from_axis + from_offset + a) * inner + i)];
}

}  // namespace

std::vector<ModTensor> evaluate_mod(OpType type, const Attributes& attrs, const std::vector<const ModTensor*>& in,
                                    const std::vector<TensorInfo>& outputs) {
  const Shape& shape = outputs.at(0).shape;
  switch (type) {
    case OpType::Add: return {elementwise(*in[0], *in[1], shape, false)};
    case OpType::Mul: return {elementwise(*in[0], *in[1], shape, true)};
    case OpType::MatMul: {
      ModTensor out = matmul(*in[0], *in[1], shape);
      if (attrs.get_int(AttrKey::Activation, 0) == static_cast<int64_t>(Activation::Relu))
        for (int64_t& v : out.values) v = negative(v) ? 0 : v;
      return {out};
    }
    case OpType::Relu: {
      ModTensor out = *in[0];
      for (int64_t& v : out.values) v = negative(v) ? 0 : v;
      return {out};
    }
    case OpType::Conv: return {conv(attrs, *in[0], *in[1], shape)};
    case OpType::AvgPool:
    case OpType::MaxPool: return {pool(type, attrs, *in[0], shape)};
    case OpType::Transpose: return {transpose(attrs, *in[0], shape)};
    case OpType::Concat: {
      const int64_t axis = normalize_axis(attrs.require_int(AttrKey::Axis), static_cast<int64_t>(shape.size()), "concat");
      ModTensor out{shape, std::vector<int64_t>(static_cast<size_t>(num_elements(shape)))};
      int64_t offset = 0;
      for (const ModTensor* t : in) {
        copy_slab(*t, 0, out, offset, axis, t->shape[static_cast<size_t>(axis)]);
        offset += t->shape[static_cast<size_t>(axis)];
      }
      return {out};
    }
    case OpType::Split: {
      const int64_t axis =
          normalize_axis(attrs.get_int(AttrKey::Axis, 0), static_cast<int64_t>(in[0]->shape.size()), "split");
      std::vector<ModTensor> outs;
      int64_t offset = 0;
      for (const TensorInfo& info : outputs) {
        ModTensor part{info.shape, std::vector<int64_t>(static_cast<size_t>(info.numel()))};
        copy_slab(*in[0], offset, part, 0, axis, info.shape[static_cast<size_t>(axis)]);
        offset += info.shape[static_cast<size_t>(axis)];
        outs.push_back(std::move(part));
      }
      return outs;
    }
    case OpType::Weight: {
      // Only identities: other constants have no exact integer value.
      if (attrs.get_int(AttrKey::Fill, 0) != static_cast<int64_t>(ConstantFill::Identity)) break;
      ModTensor out{shape, std::vector<int64_t>(static_cast<size_t>(num_elements(shape)), 0)};
      for (int64_t i : identity_positions(shape)) out.values[static_cast<size_t>(i)] = 1;
      return {out};
    }
    case OpType::EnlargeKernel: {
      const ModTensor& w = *in[0];
      ModTensor out{shape, std::vector<int64_t>(static_cast<size_t>(num_elements(shape)), 0)};
      const int64_t dh = (shape[2] - w.shape[2]) / 2, dw = (shape[3] - w.shape[3]) / 2;
      for (int64_t oc = 0; oc < w.shape[0] * w.shape[1]; ++oc)
        for (int64_t h = 0; h < w.shape[2]; ++h)
          for (int64_t x = 0; x < w.shape[3]; ++x)
            out.values[static_cast<size_t>((oc * shape[2] + h + dh) * shape[3] + x + dw)] =
                w.values[static_cast<size_t>((oc * w.shape[2] + h) * w.shape[3] + x)];
      return {out};
    }
    default: break;
  }
  throw GraphError("the rule generator cannot evaluate " + std::string(op_type_name(type)));
}

uint64_t mod_tensor_hash(const ModTensor& t) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int64_t d : t.shape) h = hash_combine(h, static_cast<uint64_t>(d));
  for (int64_t v : t.values) h = hash_combine(h, static_cast<uint64_t>(v));
  return h;
}

}  // namespace graphworld
