// The exporter's spelling for runtimes that fuse (env/onnx/export_spelling.h):
// merged convs read through Splits come back as separate convs with their
// original kernels, activations behind a Concat go back into its convs, and
// 2-D MatMuls become Gemms; each spelling computes what the graph computes,
// in the executor (after re-import) and in onnxruntime.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>

#include "common/error.h"
#include "env/onnx/export_spelling.h"
#include "env/onnx/grouped_conv_spelling.h"
#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "env/ops/executor.h"
#include "env/ops/graph_builder.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

using Ints = std::vector<int64_t>;

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

std::map<std::string, int> op_counts(const onnx::ModelProto& model) {
  std::map<std::string, int> counts;
  for (const auto& node : model.graph().node()) ++counts[node.op_type()];
  return counts;
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// The export re-imported computes what `graph` computes (executor), and the
// file computes it in onnxruntime too.
void expect_equivalent(const Graph& graph, const std::string& bytes, const std::string& label) {
  const Graph back = import_onnx_bytes(bytes, label);
  const auto inputs = random_inputs(graph, 7);
  const auto want = Executor(graph).run(inputs);
  const auto got = Executor(back).run(inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_LE(testing::relative_error(*want[k], *got[k]), 1e-5) << label;
  const std::string path = testing::scratch_dir() + "/" + label + ".onnx";
  write_onnx_bytes(bytes, path);
  const auto ort = testing::run_onnxruntime(path, graph, inputs);
  for (size_t k = 0; k < want.size(); ++k) EXPECT_LE(testing::relative_error(*want[k], *ort[k]), 1e-4) << label;
  std::filesystem::remove(path);
}

TEST(ExportSpelling, KernelPieceTrimsZeroBordersThePaddingCanAbsorb) {
  // Two output channels: the first a 1x1 kernel enlarged to 3x3, the second a real 3x3.
  auto kernel = std::make_shared<TensorData>(DType::Float32, Shape{2, 1, 3, 3});
  for (int i = 0; i < 18; ++i) kernel->floats()[i] = 0;
  kernel->floats()[4] = 2.5f;
  for (int i = 9; i < 18; ++i) kernel->floats()[i] = static_cast<float>(i);
  Ints pads = {1, 1, 1, 1};
  auto first = conv_kernel_piece(*kernel, 0, 1, pads, {1, 1});
  EXPECT_EQ(first->shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(first->floats()[0], 2.5f);
  EXPECT_EQ(pads, (Ints{0, 0, 0, 0}));
  pads = {1, 1, 1, 1};
  auto second = conv_kernel_piece(*kernel, 1, 2, pads, {1, 1});
  EXPECT_EQ(second->shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(second->floats()[0], 9.0f);
  EXPECT_EQ(pads, (Ints{1, 1, 1, 1}));
  // Without padding to give up, a zero border stays (the output size depends on it).
  pads = {0, 0, 0, 0};
  EXPECT_EQ(conv_kernel_piece(*kernel, 0, 1, pads, {1, 1})->shape(), (Shape{1, 1, 3, 3}));
  // Asymmetric: only the top pad can absorb a row.
  pads = {1, 0, 0, 0};
  EXPECT_EQ(conv_kernel_piece(*kernel, 0, 1, pads, {1, 1})->shape(), (Shape{1, 1, 2, 3}));
  EXPECT_EQ(pads, (Ints{0, 0, 0, 0}));
}

// What merge-parallel-convs with kernel enlargement leaves: one conv over
// the concatenated kernels, read through a Split, whose pieces a BatchNorm
// and a Relu follow.
TEST(ExportSpelling, MergedConvThroughSplitIsWrittenAsItsPieces) {
  GraphBuilder b(11);
  TensorRef x = b.input("x", {1, 4, 9, 9});
  TensorRef w1 = b.random_weight({6, 4, 1, 1}, -1, 1, "w1");
  TensorRef w3 = b.random_weight({8, 4, 3, 3}, -1, 1, "w3");
  TensorRef big = b.add1(OpType::EnlargeKernel, {w1}, {{AttrKey::KernelShape, Ints{3, 3}}});
  TensorRef merged_w = b.add1(OpType::Concat, {big, w3}, {{AttrKey::Axis, int64_t{0}}});
  TensorRef bias = b.random_weight({14}, -1, 1, "bias");
  TensorRef conv = b.add1(OpType::Conv, {x, merged_w, bias}, {{AttrKey::Pads, Ints{1, 1, 1, 1}}}, "merged");
  std::vector<TensorRef> parts = b.add(OpType::Split, {conv}, {{AttrKey::Axis, int64_t{1}}, {AttrKey::Split, Ints{6, 8}}});
  TensorRef inner = b.add(OpType::Split, {parts[1]}, {{AttrKey::Axis, int64_t{1}}, {AttrKey::Split, Ints{3, 5}}})[1];
  b.output(b.add1(OpType::Relu, {parts[0]}), "a");
  b.output(b.add1(OpType::Sigmoid, {inner}), "b");
  const Graph graph = b.finish();
  const std::string bytes = export_onnx_bytes(graph);
  const onnx::ModelProto model = parse(bytes);
  auto counts = op_counts(model);
  EXPECT_EQ(counts["Split"], 0);
  EXPECT_EQ(counts["Conv"], 2) << "one conv per leaf piece of the nested Splits that something reads";
  std::map<int64_t, int64_t> kernel_by_channels;
  for (const auto& node : model.graph().node()) {
    if (node.op_type() != "Conv") continue;
    const auto* kernel = attribute(node, "kernel_shape");
    ASSERT_NE(kernel, nullptr);
    for (const auto& init : model.graph().initializer())
      if (init.name() == node.input(1)) kernel_by_channels[init.dims(0)] = kernel->ints(0);
  }
  EXPECT_EQ(kernel_by_channels[6], 1) << "the enlarged kernel is trimmed back to 1x1";
  EXPECT_EQ(kernel_by_channels.count(3), 0u) << "the piece nobody reads is not written";
  EXPECT_EQ(kernel_by_channels[5], 3);
  for (const auto& init : model.graph().initializer()) EXPECT_NE(init.dims(0), 14) << "the merged kernel is not shipped";
  expect_equivalent(graph, bytes, "merged_conv");
  // Spelling off (optimize --spelling as-searched) writes the merge as it is.
  ExportOptions as_searched;
  as_searched.spell_for_fusing_runtimes = false;
  const std::string merged = export_onnx_bytes(graph, as_searched);
  EXPECT_EQ(op_counts(parse(merged))["Split"], 2);
  EXPECT_EQ(op_counts(parse(merged))["Conv"], 1);
  expect_equivalent(graph, merged, "merged_conv_as_searched");
}

// merge-grouped-convs: convs on different inputs become one grouped conv
// over their Concat; moving a Relu behind a Concat makes relu(concat(...)).
TEST(ExportSpelling, GroupedConvOverConcatAndMovedActivationsGoBack) {
  GraphBuilder b(12);
  TensorRef x = b.input("x", {1, 4, 7, 7});
  TensorRef ca = b.add1(OpType::Conv, {x, b.random_weight({4, 4, 1, 1}, -1, 1)}, {}, "a");
  TensorRef cb = b.add1(OpType::Conv, {x, b.random_weight({4, 4, 1, 1}, -1, 1)}, {}, "b");
  TensorRef joined = b.add1(OpType::Concat, {ca, cb}, {{AttrKey::Axis, int64_t{1}}});
  TensorRef relu = b.add1(OpType::Relu, {joined});
  TensorRef grouped = b.add1(OpType::Conv, {relu, b.random_weight({6, 4, 3, 3}, -1, 1)},
                             {{AttrKey::Group, int64_t{2}}, {AttrKey::Pads, Ints{1, 1, 1, 1}}}, "grouped");
  std::vector<TensorRef> parts = b.add(OpType::Split, {grouped}, {{AttrKey::Axis, int64_t{1}}, {AttrKey::Split, Ints{3, 3}}});
  b.output(parts[0], "p");
  b.output(parts[1], "q");
  const Graph graph = b.finish();
  const std::string bytes = export_onnx_bytes(graph);
  const onnx::ModelProto model = parse(bytes);
  auto counts = op_counts(model);
  EXPECT_EQ(counts["Split"], 0);
  EXPECT_EQ(counts["Concat"], 0) << "the grouped conv's pieces read the Concat's inputs";
  EXPECT_EQ(counts["Conv"], 4);
  EXPECT_EQ(counts["Relu"], 2) << "the Relu behind the Concat goes into each conv";
  for (const auto& node : model.graph().node()) {
    if (node.op_type() == "Conv") {
      EXPECT_EQ(attribute(node, "group")->i(), 1);
    }
  }
  expect_equivalent(graph, bytes, "grouped_conv");
}

// merge-parallel-convs-enlarge-bias followed by cancelling its Split against
// the Concat that joined the two convs (SqueezeNet's fire modules): one conv
// whose kernel is a 1x1 enlarged to 3x3 stacked on a 3x3. Written as the two
// convs and a Concat.
TEST(ExportSpelling, MergedKernelWithoutSplitIsWrittenAsItsRunsAndAConcat) {
  GraphBuilder b(14);
  TensorRef x = b.input("x", {1, 4, 8, 8});
  TensorRef big = b.add1(OpType::EnlargeKernel, {b.random_weight({8, 4, 1, 1}, -1, 1)}, {{AttrKey::KernelShape, Ints{3, 3}}});
  TensorRef merged_w = b.add1(OpType::Concat, {big, b.random_weight({8, 4, 3, 3}, -1, 1)}, {{AttrKey::Axis, int64_t{0}}});
  TensorRef conv = b.add1(OpType::Conv, {x, merged_w, b.random_weight({16}, -1, 1)},
                          {{AttrKey::Pads, Ints{1, 1, 1, 1}}, {AttrKey::Activation, int64_t(Activation::Relu)}});
  b.output(conv, "y");
  const Graph graph = b.finish();
  const std::string bytes = export_onnx_bytes(graph);
  const onnx::ModelProto model = parse(bytes);
  auto counts = op_counts(model);
  EXPECT_EQ(counts["Conv"], 2);
  EXPECT_EQ(counts["Concat"], 1);
  EXPECT_EQ(counts["Relu"], 2) << "each piece keeps the fused activation";
  std::vector<int64_t> kernels;
  for (const auto& node : model.graph().node())
    if (node.op_type() == "Conv") kernels.push_back(attribute(node, "kernel_shape")->ints(0));
  EXPECT_EQ(kernels, (Ints{1, 3}));
  expect_equivalent(graph, bytes, "merged_kernel_runs");
  // A kernel whose zero borders are scattered (not runs of several channels) stays one conv.
  auto kernel = std::make_shared<TensorData>(DType::Float32, Shape{6, 1, 3, 3});
  for (int i = 0; i < 54; ++i) kernel->floats()[i] = (i % 9 == 4 || i >= 9) ? 1.0f : 0.0f;
  EXPECT_EQ(kernel_channel_runs(*kernel, {1, 1, 1, 1}, {1, 1}).size(), 1u);
}

// A dilated kernel gives up dilation-many pads per trimmed row.
TEST(ExportSpelling, TrimmingADilatedKernelGivesUpDilationManyPads) {
  auto kernel = std::make_shared<TensorData>(DType::Float32, Shape{1, 1, 3, 3});
  for (int i = 0; i < 9; ++i) kernel->floats()[i] = i == 4 ? 1.0f : 0.0f;
  Ints pads = {2, 2, 2, 2};
  EXPECT_EQ(conv_kernel_piece(*kernel, 0, 1, pads, {2, 2})->shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(pads, (Ints{0, 0, 0, 0}));
  pads = {1, 1, 1, 1};  // dilation 2 needs 2 pads per row: nothing to trim
  EXPECT_EQ(conv_kernel_piece(*kernel, 0, 1, pads, {2, 2})->shape(), (Shape{1, 1, 3, 3}));
}

// Pieces covering two groups each of a 4-group conv over a 2-input Concat;
// and a conv that already has an activation keeps the Relu after the Concat.
TEST(ExportSpelling, PiecesOfSeveralGroupsAndConvsWithTheirOwnActivation) {
  GraphBuilder b(15);
  TensorRef x = b.input("x", {1, 4, 6, 6});
  TensorRef u = b.add1(OpType::Conv, {x, b.random_weight({4, 4, 1, 1}, -1, 1)}, {});
  TensorRef v = b.add1(OpType::Conv, {x, b.random_weight({4, 4, 1, 1}, -1, 1)}, {});
  TensorRef joined = b.add1(OpType::Concat, {u, v}, {{AttrKey::Axis, int64_t{1}}});
  TensorRef grouped = b.add1(OpType::Conv, {joined, b.random_weight({8, 2, 1, 1}, -1, 1)}, {{AttrKey::Group, int64_t{4}}});
  std::vector<TensorRef> parts = b.add(OpType::Split, {grouped}, {{AttrKey::Axis, int64_t{1}}, {AttrKey::Split, Ints{4, 4}}});
  b.output(parts[0], "p");
  b.output(parts[1], "q");
  TensorRef s = b.add1(OpType::Conv, {x, b.random_weight({4, 4, 1, 1}, -1, 1)},
                       {{AttrKey::Activation, int64_t(Activation::Sigmoid)}});
  TensorRef t = b.add1(OpType::Conv, {x, b.random_weight({4, 4, 1, 1}, -1, 1)}, {});
  b.output(b.add1(OpType::Relu, {b.add1(OpType::Concat, {s, t}, {{AttrKey::Axis, int64_t{1}}})}), "r");
  const Graph graph = b.finish();
  const std::string bytes = export_onnx_bytes(graph);
  const onnx::ModelProto model = parse(bytes);
  int grouped_pieces = 0;
  for (const auto& node : model.graph().node())
    if (node.op_type() == "Conv" && attribute(node, "group")->i() == 2) ++grouped_pieces;
  EXPECT_EQ(grouped_pieces, 2) << "each piece spans two of the four groups";
  EXPECT_EQ(op_counts(model)["Split"], 0);
  EXPECT_EQ(op_counts(model)["Relu"], 1) << "Sigmoid then Relu is not Relu: the activation stays after the Concat";
  expect_equivalent(graph, bytes, "several_groups");
}

TEST(ExportSpelling, TwoDimensionalMatMulWithoutAddIsGemm) {
  GraphBuilder b(13);
  TensorRef x = b.input("x", {2, 8});
  TensorRef h = b.input("h", {2, 8});
  TensorRef xw = b.add1(OpType::MatMul, {x, b.random_weight({8, 8}, -1, 1)});
  TensorRef merged = b.add1(OpType::MatMul, {b.add1(OpType::Concat, {x, h}, {{AttrKey::Axis, int64_t{1}}}),
                                             b.random_weight({16, 8}, -1, 1)});
  TensorRef sum = b.add1(OpType::Add, {xw, b.random_weight({8}, -1, 1)});
  TensorRef seq = b.input("s", {2, 3, 8});
  TensorRef batched = b.add1(OpType::MatMul, {seq, b.random_weight({8, 8}, -1, 1)});
  b.output(b.add1(OpType::Tanh, {merged}), "t");
  b.output(sum, "u");
  b.output(batched, "v");
  const Graph graph = b.finish();
  const std::string bytes = export_onnx_bytes(graph);
  auto counts = op_counts(parse(bytes));
  EXPECT_EQ(counts["Gemm"], 1) << "the MatMul an activation follows";
  EXPECT_EQ(counts["MatMul"], 2) << "MatMul+Add is left to the runtime's own Gemm fusion; 3-D stays MatMul";
  expect_equivalent(graph, bytes, "matmul_gemm");
}

// grouped_conv_spelling.h: the factor is the smallest that makes both
// channels-per-group counts multiples of the channel block and divides the
// groups, at most 4.
TEST(ExportSpelling, RegroupFactorWidensNarrowGroupsToTheChannelBlock) {
  struct Case {
    int64_t groups, in_per_group, out_per_group, block, factor;
    const char* why;
  };
  const int64_t avx512 = kAvx512ChannelBlock, avx2 = kAvx2ChannelBlock;
  const Case cases[] = {
      {32, 4, 4, avx512, 4, "ResNeXt 32x4d, first stage"},
      {32, 8, 8, avx512, 2, "ResNeXt 32x4d, second stage"},
      {32, 16, 16, avx512, 1, "already a block"},
      {1, 4, 4, avx512, 1, "not grouped"},
      {64, 1, 1, avx512, 1, "depthwise: onnxruntime runs it blocked as it is"},
      {32, 2, 2, avx512, 1, "a factor of 8 costs more FLOPs than the block saves"},
      {6, 4, 4, avx512, 1, "4 does not divide 6 groups"},
      {8, 8, 16, avx512, 2, "input and output per group both count"},
      {9, 16, 8, avx512, 1, "the factor 2 the outputs need does not divide 9 groups"},
      {2, 8, 8, avx512, 2, "down to one group: a plain conv"},
      // A block of 8: half the widening, and 8-channel groups fit as they are.
      {32, 4, 4, avx2, 2, "ResNeXt 32x4d, first stage, AVX2"},
      {32, 8, 8, avx2, 1, "ResNeXt 32x4d, second stage, AVX2"},
      {32, 2, 2, avx2, 4, "2-channel groups, AVX2"},
      {32, 4, 4, 0, 1, "no blocked kernels: keep every group"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(regroup_factor(c.groups, c.in_per_group, c.out_per_group, c.block), c.factor) << c.why;
  const int64_t here = this_cpu_channel_block();
  EXPECT_TRUE(here == 0 || here == avx2 || here == avx512) << here;
}

// Four groups of one output channel reading two input channels each, merged
// two by two: each output row keeps its two weights in its own half.
TEST(ExportSpelling, RegroupedKernelIsBlockDiagonalWithinEachMergedGroup) {
  auto kernel = std::make_shared<TensorData>(DType::Float32, Shape{4, 2, 1, 1});
  for (int i = 0; i < 8; ++i) kernel->floats()[i] = static_cast<float>(i + 1);
  const auto wide = regrouped_kernel(*kernel, 4, 2);
  ASSERT_EQ(wide->shape(), (Shape{4, 4, 1, 1}));
  const std::vector<float> want = {1, 2, 0, 0,   // output 0: group 0, first half of merged group 0
                                   0, 0, 3, 4,   // output 1: group 1, second half
                                   5, 6, 0, 0,   // output 2: group 2, first half of merged group 1
                                   0, 0, 7, 8};  // output 3: group 3
  EXPECT_EQ(std::vector<float>(wide->floats(), wide->floats() + 16), want);
  EXPECT_THROW(regrouped_kernel(*kernel, 4, 3), GraphError) << "3 does not divide 4 groups";
}

// A ResNeXt-style 3x3 conv of 16 groups of 4 channels (with its Relu) is
// written as 4 groups of 16 when optimize asks for it; the original kernel
// is not shipped, a second conv sharing the kernel shares the regrouped
// one, and depthwise convs keep their groups. Other exports keep the
// graph's groups.
TEST(ExportSpelling, NarrowGroupedConvIsWrittenWithWiderGroups) {
  GraphBuilder b(16);
  TensorRef x = b.input("x", {1, 64, 6, 6});
  TensorRef kernel = b.random_weight({64, 4, 3, 3}, -1, 1);
  TensorRef grouped = b.add1(OpType::Conv, {x, kernel, b.random_weight({64}, -1, 1)},
                             {{AttrKey::Group, int64_t{16}}, {AttrKey::Pads, Ints{1, 1, 1, 1}},
                              {AttrKey::Strides, Ints{2, 2}}, {AttrKey::Activation, int64_t(Activation::Relu)}},
                             "grouped");
  TensorRef depthwise = b.add1(OpType::Conv, {grouped, b.random_weight({64, 1, 3, 3}, -1, 1)},
                               {{AttrKey::Group, int64_t{64}}, {AttrKey::Pads, Ints{1, 1, 1, 1}}}, "depthwise");
  TensorRef twin = b.add1(OpType::Conv, {depthwise, kernel}, {{AttrKey::Group, int64_t{16}}}, "twin");
  b.output(twin, "y");
  const Graph graph = b.finish();
  EXPECT_TRUE(has_regroupable_conv(graph, kAvx512ChannelBlock));
  EXPECT_FALSE(has_regroupable_conv(graph, 0));
  ExportOptions regroup;
  regroup.regroup_channel_block = kAvx512ChannelBlock;
  ExportReport report;
  const std::string bytes = export_onnx_bytes(graph, regroup, &report);
  EXPECT_EQ(report.regrouped_convs, 2);
  const onnx::ModelProto model = parse(bytes);
  std::map<std::string, std::vector<int64_t>> groups_by_kernel;
  for (const auto& node : model.graph().node())
    if (node.op_type() == "Conv") groups_by_kernel[node.input(1)].push_back(attribute(node, "group")->i());
  ASSERT_EQ(groups_by_kernel.size(), 2u) << "the two 16-group convs share one regrouped kernel";
  for (const auto& init : model.graph().initializer()) {
    const std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
    if (dims.size() != 4) continue;
    EXPECT_NE(dims[1], 4) << "the narrow kernel is not shipped";
    if (dims[1] == 16) {
      EXPECT_EQ(groups_by_kernel[init.name()], (Ints{4, 4})) << "16 groups of 4 written as 4 of 16";
    }
    if (dims[1] == 1) {
      EXPECT_EQ(groups_by_kernel[init.name()], (Ints{64})) << "the depthwise conv keeps its groups";
    }
  }
  EXPECT_EQ(op_counts(model)["Relu"], 1);
  expect_equivalent(graph, bytes, "regrouped_conv");
  ExportReport none;
  const onnx::ModelProto plain = parse(export_onnx_bytes(graph, {}, &none));
  EXPECT_EQ(none.regrouped_convs, 0) << "only optimize asks for the regrouping";
  for (const auto& node : plain.graph().node()) {
    if (node.op_type() == "Conv") {
      EXPECT_NE(attribute(node, "group")->i(), 4);
    }
  }
}

}  // namespace
}  // namespace graphworld
