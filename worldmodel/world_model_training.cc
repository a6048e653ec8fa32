// Training and measuring a world model: the encoder's epochs, then the
// MDN-RNN's, keeping the epoch with the lowest held-out loss; per-head
// losses and one-step accuracy on episodes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include "common/error.h"
#include "learner/compute_threads.h"
#include "learner/flat_adam.h"
#include "learner/flat_parameters.h"
#include "worldmodel/batch_parts.h"
#include "worldmodel/lstm_sequence.h"
#include "worldmodel/world_model.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {
namespace {

// The summary's weight in the encoder's reconstruction loss: its entries
// are small fractions, and the cost ratio among them is what rewards follow.
constexpr double kSummaryWeight = 10.0;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A batch's tensors from its episodes' indices: episodes kept in memory
// are read in place, others read from their source for as long as it takes.
EpisodeBatch batch_of(const WorldModel::Impl& m, const EpisodeSource& source, const EpisodeIndices& indices) {
  std::vector<WorldEpisode> scratch(indices.size());
  std::vector<const WorldEpisode*> episodes;
  episodes.reserve(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) episodes.push_back(&source.episode(indices[k], scratch[k]));
  return m.batch(episodes);
}

// One part's items at a time (its batches, or what they prepare): a part
// is built when reached, and kept until another is; with a single part,
// for the whole of training.
template <typename T>
class PartCache {
 public:
  using Build = std::function<std::vector<T>(size_t part)>;
  explicit PartCache(Build build) : build_(std::move(build)) {}
  const std::vector<T>& get(size_t part) {
    if (part != loaded_) {
      clear();
      items_ = build_(part);
      loaded_ = part;
    }
    return items_;
  }
  void clear() {
    std::vector<T>().swap(items_);
    loaded_ = kNone;
  }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  Build build_;
  std::vector<T> items_;
  size_t loaded_ = kNone;
};

// Batches for measuring, without gradients: larger than training's, and
// cut where padding would pass a quarter of a batch. Cut at size alone,
// the held-out episodes of a 10,000-step run (1,983 steps) made two
// batches of 7,616 padded steps together (lengths 1 to 5, then 6 to 67), and
// scoring them took a fifth of each epoch; a tighter bound (an eighth)
// made so many batches of long episodes that their steps one after
// another cost more than the padding saved.
constexpr int64_t kMeasureBatchSteps = 4096;
constexpr double kMeasurePadding = 0.25;

// The encoder's reconstruction loss of inputs [.., E] (summary, mask, locations).
torch::Tensor reconstruction_loss(LatentEncoder& encoder, const torch::Tensor& input, int64_t vocab,
                                  const torch::Tensor& weight) {
  const torch::Tensor out = encoder->decode(encoder->encode(input));
  const torch::Tensor summary = (out.narrow(-1, 0, kSummaryDim) - input.narrow(-1, 0, kSummaryDim)).pow(2).mean(-1);
  torch::Tensor per_row = kSummaryWeight * summary;
  if (vocab > 0) {
    per_row = per_row + torch::binary_cross_entropy_with_logits(out.narrow(-1, kSummaryDim, vocab),
                                                                input.narrow(-1, kSummaryDim, vocab), {}, {},
                                                                torch::Reduction::None)
                            .mean(-1);
    per_row = per_row +
              (out.narrow(-1, kSummaryDim + vocab, vocab) - input.narrow(-1, kSummaryDim + vocab, vocab)).pow(2).mean(-1);
  }
  return (per_row * weight).sum() / weight.sum().clamp_min(1.0);
}

WorldModelHeadLosses to_doubles(const MdnRnnLosses& l) {
  return {l.z_nll.item<double>(), l.reward.item<double>(), l.done.item<double>(), l.mask.item<double>(),
          l.locations.item<double>()};
}

void add_weighted(WorldModelHeadLosses& sum, const WorldModelHeadLosses& l, double w) {
  sum.z_nll += w * l.z_nll;
  sum.reward += w * l.reward;
  sum.done += w * l.done;
  sum.mask += w * l.mask;
  sum.locations += w * l.locations;
}

void scale(WorldModelHeadLosses& l, double by) {
  l.z_nll *= by;
  l.reward *= by;
  l.done *= by;
  l.mask *= by;
  l.locations *= by;
}
}  // namespace

void WorldModel::train(const std::vector<WorldEpisode>& train, const std::vector<WorldEpisode>& held_out,
                       const WorldModelTrainOptions& options) {
  this->train(EpisodesInMemory(train), EpisodesInMemory(held_out), options);
}

void WorldModel::train(const EpisodeSource& train, const EpisodeSource& held_out,
                       const WorldModelTrainOptions& options) {
  if (options.batch_steps < 1 || options.min_batches < 1)
    throw UsageError("world model training needs batch_steps >= 1 and min_batches >= 1");
  if (!(options.learning_rate > 0)) throw UsageError("world model training needs a positive learning rate");
  if (options.resident_steps < 1) throw UsageError("world model training needs resident_steps >= 1");
  Impl& m = *impl_;
  if (!train.has_steps()) throw UsageError("world model training needs at least one episode with steps");
  torch::manual_seed(options.seed);
  std::mt19937_64 rng(options.seed);
  // Late epochs drive gradients into the denormal range (compute_threads.h).
  const FlushDenormals no_denormals;
  const int64_t v = m.vocabulary.size();

  // Where it trains; back on the CPU at the end (also when training fails).
  const torch::Device device(options.device);
  const bool on_cpu = device.is_cpu();
  struct BackToCpu {
    Impl& m;
    bool moved;
    ~BackToCpu() {
      if (moved) m.to_device(torch::kCPU);
    }
  } back_to_cpu{m, !on_cpu};
  if (!on_cpu) m.to_device(device);

  // Batches are built once and kept when they fit in options.resident_steps
  // (the data does not change between epochs); more data is trained a part
  // at a time, each rebuilt from its source when an epoch reaches it.
  const int64_t train_steps = train.total_steps();
  const int64_t batch_steps = std::max<int64_t>(1, std::min<int64_t>(options.batch_steps, train_steps / options.min_batches));
  const BatchParts train_parts(train, batch_steps, options.resident_steps, options.seed);
  const BatchParts held_parts(held_out, kMeasureBatchSteps, options.resident_steps, options.seed + 1,
                              kMeasurePadding);
  auto on_device = [&](EpisodeBatch b) {
    if (on_cpu) return b;
    for (torch::Tensor* t : {&b.encoder_input, &b.mask, &b.action, &b.reward, &b.done, &b.done_by_rule,
                             &b.allowed_outside, &b.valid, &b.next_valid})
      *t = t->to(device);
    return b;
  };
  auto batches_of = [&](const BatchParts& parts) {
    return [&](size_t p) {
      std::vector<EpisodeBatch> out;
      for (const EpisodeIndices& group : parts.part(p)) out.push_back(on_device(batch_of(m, parts.source(), group)));
      return out;
    };
  };
  PartCache<EpisodeBatch> train_batches(batches_of(train_parts)), held_batches(batches_of(held_parts));
  // Each part keeps its own batch order, shuffled again every epoch; parts
  // are taken in a new random order every epoch (a lone part: no draw, so
  // training on data that fits is what it always was).
  auto visit_parts = [&rng](const BatchParts& parts, std::vector<std::vector<size_t>>& orders, const auto& visit) {
    std::vector<size_t> part_order(parts.parts());
    std::iota(part_order.begin(), part_order.end(), 0);
    if (part_order.size() > 1) std::shuffle(part_order.begin(), part_order.end(), rng);
    for (size_t p : part_order) {
      std::vector<size_t>& order = orders[p];
      if (order.empty()) {
        order.resize(parts.part(p).size());
        std::iota(order.begin(), order.end(), 0);
      }
      std::shuffle(order.begin(), order.end(), rng);
      visit(p, order);
    }
  };

  // Phase 1, the encoder: an autoencoder over the training steps' inputs.
  if (options.encoder_epochs > 0) {
    torch::optim::Adam optimizer(m.encoder->parameters(), torch::optim::AdamOptions(options.learning_rate));
    std::vector<std::vector<size_t>> orders(train_parts.parts());
    for (int32_t epoch = 1; epoch <= options.encoder_epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      double sum = 0, weight = 0;
      visit_parts(train_parts, orders, [&](size_t part, const std::vector<size_t>& order) {
        const std::vector<EpisodeBatch>& batches = train_batches.get(part);
        for (size_t i : order) {
          const EpisodeBatch& b = batches[i];
          optimizer.zero_grad();
          const torch::Tensor loss = reconstruction_loss(m.encoder, b.encoder_input, v, b.valid);
          loss.backward();
          optimizer.step();
          const double w = b.valid.sum().item<double>();
          sum += loss.item<double>() * w;
          weight += w;
        }
      });
      WorldModelEpochReport report;
      report.phase = "encoder";
      report.steps = static_cast<int64_t>(weight);  // the steps trained on (all, unless a part was missed)
      report.gflop = 6.0 * static_cast<double>(matrix_weights(*m.encoder)) * weight / 1e9;
      report.epoch = epoch;
      report.epochs = options.encoder_epochs;
      report.train_loss = sum / std::max(1.0, weight);
      {
        torch::NoGradGuard no_grad;
        double hs = 0, hw = 0;
        for (size_t part = 0; part < held_parts.parts(); ++part)
          for (const EpisodeBatch& b : held_batches.get(part)) {
            const double w = b.valid.sum().item<double>();
            hs += reconstruction_loss(m.encoder, b.encoder_input, v, b.valid).item<double>() * w;
            hw += w;
          }
        report.held_out_loss = hs / std::max(1.0, hw);
      }
      report.seconds = seconds_since(start);
      if (options.on_epoch) options.on_epoch(report);
    }
  }

  // Phase 2, the MDN-RNN on the frozen encoder's z. With more than one
  // thread, a batch's step runs the model's two halves side by side, one
  // thread each (MdnRnnImpl::train_step; forward() alone runs the two
  // LSTMs side by side), with LibTorch and OpenBLAS on one thread: at a
  // few hundred steps per batch, their own threads spent as much time
  // waiting for each other as computing (worldmodel/README.md).
  const int threads = at::get_num_threads();
  const ComputeThreads one_thread(threads >= 2 && on_cpu ? 1 : threads);
  const LstmSideBySide side_by_side(threads >= 2 && on_cpu);
  const LstmGradientsInPlace gradients_in_place;  // the flat buffer's views; only .backward() below
  m.start_rule_rewards([&](const EpisodeVisitor& visit) { train.for_each(visit); });
  auto latent = [&](const EpisodeBatch& b) {
    torch::NoGradGuard no_grad;
    return m.encoder->encode(b.encoder_input);
  };
  // What the MDN-RNN reads and predicts does not change between epochs:
  // built once (an epoch of short episodes spent a fifth of its time
  // rebuilding them).
  struct Prepared {
    torch::Tensor z, condition;
    MdnRnnTargets targets;
    double weight = 0;  // valid steps
  };
  auto prepare = [&](const EpisodeBatch& b) {
    Prepared p;
    p.z = latent(b);
    p.condition = m.rnn_condition(b);
    p.targets = m.targets(b, p.z);
    p.weight = b.valid.sum().item<double>();
    return p;
  };
  // A part's batches are let go once prepared, unless they are the only
  // part (then both stay, as they always did).
  auto prepared_of = [&](const BatchParts& parts, PartCache<EpisodeBatch>& batches) {
    return [&](size_t p) {
      std::vector<Prepared> out;
      for (const EpisodeBatch& b : batches.get(p)) out.push_back(prepare(b));
      if (parts.parts() > 1) batches.clear();
      return out;
    };
  };
  PartCache<Prepared> train_data(prepared_of(train_parts, train_batches)),
      held_data(prepared_of(held_parts, held_batches));
  // GRAPHWORLD_ONE_THREAD_STEP=1: a batch's step and held-out scoring on
  // one thread beside the LSTMs, as before the halves, for measuring
  // against (the same weights).
  static const bool one_thread_step = [] {
    const char* value = std::getenv("GRAPHWORLD_ONE_THREAD_STEP");
    return value != nullptr && std::string(value) == "1";
  }();
  // Adam's step, memory-bound, on every core, and the halves of a
  // batch's step and of held-out scoring (mdn_rnn.h; started here: the
  // threads inherit the denormal setting).
  WorkerThreads adam_threads(on_cpu ? std::max(1, threads) : 1);
  auto held_out_losses = [&] {
    torch::NoGradGuard no_grad;
    WorldModelHeadLosses held_sum;
    double held_weight = 0;
    for (size_t part = 0; part < held_parts.parts(); ++part)
      for (const Prepared& p : held_data.get(part)) {
        const MdnRnnLosses l = on_cpu && !one_thread_step && m.rnn->halves_apply(p.z, &adam_threads)
                                   ? m.rnn->losses_side_by_side(p.z, p.condition, p.targets, adam_threads)
                                   : m.rnn->losses(m.rnn->forward(p.z, p.condition), p.targets);
        add_weighted(held_sum, to_doubles(l), p.weight);
        held_weight += p.weight;
      }
    scale(held_sum, 1.0 / std::max(1.0, held_weight));
    return held_sum;
  };
  // What this training may move: everything, or (keep_controller_memory)
  // all but the controller's LSTM and the next-z mixture, which then take
  // no gradient at all, so the clipping below sees only what moves.
  std::vector<torch::Tensor> kept, trained;
  if (options.keep_controller_memory) kept = m.rnn->controller_memory_parameters();
  for (const torch::Tensor& p : m.rnn->parameters())
    if (std::none_of(kept.begin(), kept.end(), [&](const torch::Tensor& k) { return k.is_same(p); }))
      trained.push_back(p);
  struct RequiresGradBack {
    std::vector<torch::Tensor>& kept;
    ~RequiresGradBack() {
      for (torch::Tensor& t : kept) t.set_requires_grad(true);
    }
  } requires_grad_back{kept};
  for (torch::Tensor& t : kept) t.set_requires_grad(false);
  // The trained parameters and their gradients in one buffer each, so
  // zeroing, clipping and Adam's step are a few operations over a million
  // floats rather than a dozen per tensor (learner/flat_parameters.h).
  const FlatParameters flat(trained);
  torch::optim::Adam optimizer(trained, torch::optim::AdamOptions(options.learning_rate));
  FlatAdam flat_adam(optimizer, flat);
  std::vector<std::vector<size_t>> orders(train_parts.parts());
  bool gradients_dirty = true;  // false right after Adam's step, which zeroes them
  // The weights of the epoch with the lowest held-out loss are kept: past
  // it the model learns the training episodes by heart.
  double best_loss = std::numeric_limits<double>::infinity();
  std::vector<torch::Tensor> best;
  for (int32_t epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    WorldModelHeadLosses sum;
    double weight = 0;
    m.rnn->train();
    visit_parts(train_parts, orders, [&](size_t part, const std::vector<size_t>& order) {
      const std::vector<Prepared>& data = train_data.get(part);
      for (size_t i : order) {
        const Prepared& p = data[i];
        if (gradients_dirty) flat.gradients().zero_();
        gradients_dirty = true;
        MdnRnnLosses l;
        if (on_cpu && !one_thread_step && m.rnn->train_step_applies(p.z, &adam_threads)) {
          // Two halves side by side (mdn_rnn.h), the same gradients.
          const std::optional<MdnRnnLosses> step = m.rnn->train_step(p.z, p.condition, p.targets, adam_threads);
          if (!step) continue;  // a bad batch must not poison the weights
          l = *step;
        } else {
          const MdnRnnOutput out = m.rnn->forward(p.z, p.condition);
          l = m.rnn->losses(out, p.targets);
          const torch::Tensor total = l.total(m.config.latent_dim);
          if (!std::isfinite(total.item<double>())) continue;  // a bad batch must not poison the weights
          total.backward();
        }
        // Clipped to norm 1, the scale folded into Adam's one pass, which
        // also leaves the gradients zero for the next batch.
        const double norm = flat_adam.gradient_norm(&adam_threads);
        if (!std::isfinite(norm)) continue;  // nor a batch whose gradients overflow; both are left out of the report
        flat_adam.fused_step(&adam_threads, std::min(1.0, 1.0 / (norm + 1e-6)), /*zero_gradients=*/true);
        gradients_dirty = false;
        add_weighted(sum, to_doubles(l), p.weight);
        weight += p.weight;
      }
    });
    m.rnn->eval();
    scale(sum, 1.0 / std::max(1.0, weight));
    WorldModelEpochReport report;
    report.phase = "mdn-rnn";
    report.steps = static_cast<int64_t>(weight);  // the steps trained on (a batch skipped above is not)
    report.gflop = 6.0 * static_cast<double>(matrix_weights(*m.rnn)) * weight / 1e9;
    report.epoch = epoch;
    report.epochs = options.epochs;
    report.train = sum;
    report.train_loss = sum.total(m.config.latent_dim);
    if (held_parts.parts() > 0) {
      report.held_out = held_out_losses();
      report.held_out_loss = report.held_out.total(m.config.latent_dim);
    }
    const double score = held_parts.parts() == 0 ? report.train_loss : report.held_out_loss;
    if (score < best_loss) {
      best_loss = score;
      best.clear();
      for (const torch::Tensor& p : m.rnn->parameters()) best.push_back(p.detach().clone());
    }
    report.seconds = seconds_since(start);
    if (options.on_epoch) options.on_epoch(report);
  }
  if (!best.empty()) {
    torch::NoGradGuard no_grad;
    auto params = m.rnn->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(best[i]);
  }
  if (!on_cpu) {
    m.to_device(torch::kCPU);
    back_to_cpu.moved = false;
  }
  m.info.trained_steps = train_steps;
  // The dream's starts and bounds are facts about the real graphs, not
  // learned weights: held-out episodes show them too (the held-out scores
  // do not pass through them). A run holds out every fifth episode as it
  // arrives, often a controller's best one, and a graph may have a start
  // only there.
  const EpisodeWalk seen = [&](const EpisodeVisitor& visit) {
    train.for_each(visit);
    held_out.for_each(visit);
  };
  m.set_starts(seen);
  m.set_support(seen);
}

WorldModelHeadLosses WorldModel::losses(const std::vector<WorldEpisode>& episodes) const {
  return losses(EpisodesInMemory(episodes));
}

WorldModelAccuracy WorldModel::evaluate(const std::vector<WorldEpisode>& episodes) const {
  return evaluate(EpisodesInMemory(episodes));
}

WorldModelHeadLosses WorldModel::losses(const EpisodeSource& episodes) const {
  torch::NoGradGuard no_grad;
  Impl& m = *impl_;
  WorldModelHeadLosses sum;
  double weight = 0;
  for (const EpisodeIndices& group : batch_indices_by_length(episodes, kMeasureBatchSteps, kMeasurePadding)) {
    const EpisodeBatch b = batch_of(m, episodes, group);
    const torch::Tensor z = m.encoder->encode(b.encoder_input);
    const MdnRnnLosses l = m.rnn->losses(m.rnn->forward(z, m.rnn_condition(b)), m.targets(b, z));
    const double w = b.valid.sum().item<double>();
    add_weighted(sum, to_doubles(l), w);
    weight += w;
  }
  scale(sum, 1.0 / std::max(1.0, weight));
  return sum;
}

WorldModelAccuracy WorldModel::evaluate(const EpisodeSource& episodes) const {
  torch::NoGradGuard no_grad;
  Impl& m = *impl_;
  const int64_t v = m.vocabulary.size();
  WorldModelAccuracy a;
  double tp = 0, fp = 0, fn = 0, done_right = 0, reward_abs = 0, nll = 0;
  for (const EpisodeIndices& group : batch_indices_by_length(episodes, kMeasureBatchSteps, kMeasurePadding)) {
    const EpisodeBatch b = batch_of(m, episodes, group);
    const torch::Tensor z = m.encoder->encode(b.encoder_input);
    const MdnRnnOutput out = m.rnn->forward(z, m.rnn_condition(b));
    const MdnRnnTargets y = m.targets(b, z);
    const int64_t t = z.size(0), n = z.size(1);
    // Masks over the vocabulary (NO-OP is always allowed and not scored);
    // a successor's xfers outside the vocabulary are misses the model
    // cannot help.
    // Scored as the dream offers it (dream_env.cc): the mask head, and a
    // match left once the count head's change is added.
    const torch::Tensor left = m.counts_after(Impl::location_counts(b.encoder_input.narrow(-1, kSummaryDim + v, v)),
                                              out.location_change.narrow(-1, 0, v), b.action.narrow(-1, 0, v)) >= 0.5;
    const torch::Tensor predicted = ((out.mask_logits.narrow(-1, 0, v) > 0) & left).to(torch::kFloat);
    const torch::Tensor truth = y.next_mask.narrow(-1, 0, v);
    const torch::Tensor nv = y.next_valid.unsqueeze(-1);
    tp += (predicted * truth * nv).sum().item<double>();
    fp += (predicted * (1 - truth) * nv).sum().item<double>();
    fn += ((1 - predicted) * truth * nv).sum().item<double>();
    const torch::Tensor outside_next =
        torch::cat({b.allowed_outside.narrow(0, 1, t - 1), torch::zeros({1, n})}, 0) * y.next_valid;
    fn += outside_next.sum().item<double>();
    // Done as the dream decides it: the done head, or the action's own rule.
    const torch::Tensor predicted_done = ((out.done_logit > 0) | (b.done_by_rule > 0.5)).to(torch::kFloat);
    done_right += ((predicted_done == y.done).to(torch::kFloat) * y.valid).sum().item<double>();
    reward_abs += ((out.reward - y.reward).abs() * y.valid).sum().item<double>();
    const int64_t k = m.config.components, d = m.config.latent_dim;
    GaussianMixture flat{out.next_z.logits.reshape({t * n, k}), out.next_z.means.reshape({t * n, k, d}),
                         out.next_z.log_sigma.reshape({t * n, k, d})};
    nll += (mixture_nll(flat, y.next_z.reshape({t * n, d})).reshape({t, n}) * y.next_valid).sum().item<double>();
    a.steps += static_cast<int64_t>(y.valid.sum().item<double>());
    a.transitions += static_cast<int64_t>(y.next_valid.sum().item<double>());
  }
  // No transition scored: zeros, not a perfect score (callers check steps).
  a.mask_precision = tp + fp > 0 ? tp / (tp + fp) : 0.0;
  a.mask_recall = tp + fn > 0 ? tp / (tp + fn) : 0.0;
  a.mask_f1 = 2 * tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 0.0;
  a.done_accuracy = a.steps > 0 ? done_right / static_cast<double>(a.steps) : 0.0;
  a.reward_mae = a.steps > 0 ? reward_abs / static_cast<double>(a.steps) : 0.0;
  a.z_nll = a.transitions > 0 ? nll / static_cast<double>(a.transitions) : 0.0;
  return a;
}

}  // namespace graphworld
