// One-layer LSTMs over whole padded sequences from a zero state, each
// sequence one autograd node, on the CPU: what the MDN-RNN's training and
// scoring run instead of torch::nn::LSTM's forward (worldmodel/README.md,
// "Training speed").
//
// Why: this LibTorch's CPU LSTM records a dozen small operators per time
// step in the forward pass and as many autograd nodes for the backward
// pass, and the world model's long episodes (up to 100 steps) run a step
// at a time over a handful of rows, so dispatch, not arithmetic, was most of
// an MDN-RNN epoch. Here the input projection of every step is one matrix
// product before the loop, a step is one product with the recurrent weights
// plus one pass over the gates, the backward pass mirrors it, and the
// weight gradients are one product each over all steps. Several LSTMs (the
// MDN-RNN's two are independent) can run side by side (LstmSideBySide).
//
// The maths is torch::nn::LSTM's (gates i, f, g, o; b_ih and b_hh both
// added), so weights and files are unchanged; results agree with it to
// float rounding (tests/worldmodel/lstm_sequence_test.cc).
#pragma once

#include <torch/torch.h>

#include <vector>

namespace graphworld {

struct LstmSequenceRun {
  torch::Tensor input;  // [T, B, I] float on the CPU
  torch::nn::LSTM lstm;  // one layer, one direction, with biases, not batch-first
};

struct LstmSequenceResult {
  torch::Tensor output;  // [T, B, H]: h of every step
  torch::Tensor h_n;     // [1, B, H]: the state after the last step
  torch::Tensor c_n;     // [1, B, H]
};

// True when `lstm` is what lstm_sequences computes (one layer, one
// direction, biases, not batch-first, no projection) and `input` is a
// [T, B, I] float tensor on the CPU; callers use torch::nn::LSTM otherwise.
// Always false when the environment sets GRAPHWORLD_ATEN_LSTM=1: the
// previous code, for measuring against (docs/benchmarks/world-model.md).
bool lstm_sequence_applies(const torch::nn::LSTM& lstm, const torch::Tensor& input);

// While one lives on a thread, lstm_sequences there runs its LSTMs side by
// side, each on a thread of its own (kept for the process's life) with
// one-thread matrix products; set the rest of LibTorch to one thread too
// (ComputeThreads), or its thread pools and OpenBLAS's spin against the
// LSTMs. Without one, the LSTMs run one after another on the calling
// thread with LibTorch's threads as they are.
class LstmSideBySide {
 public:
  explicit LstmSideBySide(bool on);
  ~LstmSideBySide();
  LstmSideBySide(const LstmSideBySide&) = delete;
  LstmSideBySide& operator=(const LstmSideBySide&) = delete;

 private:
  bool previous_;
};

// While one lives on a thread, the LSTMs that lstm_sequences runs there add
// their weights' and biases' gradients straight into the parameters'
// .grad() tensors where those are defined (a training loop's flat buffers,
// learner/flat_parameters.h) in their backward pass, rather than returning
// new tensors for autograd to add: a second pass over 1.6 MB per LSTM
// weight. Only for loss.backward(): torch::autograd::grad, which must
// return gradients and leave .grad() alone, would see them added there.
class LstmGradientsInPlace {
 public:
  LstmGradientsInPlace();
  ~LstmGradientsInPlace();
  LstmGradientsInPlace(const LstmGradientsInPlace&) = delete;
  LstmGradientsInPlace& operator=(const LstmGradientsInPlace&) = delete;

 private:
  bool previous_;
};

// Runs every LSTM over its input from a zero state. Gradients reach the
// weights, the biases and the inputs that require them, from the outputs
// and the final states alike.
std::vector<LstmSequenceResult> lstm_sequences(const std::vector<LstmSequenceRun>& runs);

}  // namespace graphworld
