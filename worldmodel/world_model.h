// A trained world model as one object: the latent encoder (z_t from an
// observation summary, README.md says how it is trained and why it does not
// collapse), the MDN-RNN over (z_t, mask_t, a_t) and the xfer vocabulary it
// predicts over. Train it from episodes, measure it on held-out episodes,
// save it as a checked file (FILE.gwworld) and load it back.
//
// Torch-free on purpose (the modules live behind Impl, in
// world_model_modules.h), so commands include it cheaply.
//
//   WorldModel wm(WorldModelConfig{}, XferVocabulary::from_episodes(train, N), info);
//   wm.train(train, held_out, options);              // encoder, then MDN-RNN
//   WorldModelAccuracy a = wm.evaluate(held_out);    // mask F1, done accuracy, reward MAE, z NLL
//   wm.save("model.gwworld");
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "worldmodel/episode_source.h"
#include "worldmodel/world_episode.h"

namespace graphworld {

struct WorldModelConfig {
  int64_t latent_dim = 32;      // D: size of z
  int64_t hidden = 256;         // the LSTM's width
  int64_t components = 8;       // K: Gaussians in the next-z mixture
  int64_t encoder_hidden = 128;
  // The controller's h from an LSTM of its own over (z, a), beside the one
  // that reads the mask and location counts and predicts them
  // (MdnRnnConfig::bookkeeping_inputs). The dream's counts are its own
  // predictions; read by the LSTM whose h the controller sees, their
  // differences from the real counts made the controller choose otherwise
  // in the dream than in the real graph (worldmodel/README.md). false: one
  // LSTM for both, as in the World Models paper.
  bool separate_controller_memory = true;
  // The next mask's logits get a learned term per (action, rule)
  // (MdnRnnConfig::mask_by_choice). Files written without it (five config
  // fields) load with it off and predict as they always did.
  bool mask_by_choice = true;
};

// Where a world model came from and what it fits: the rules and features it
// was trained on, and the environment's horizon.
struct WorldModelInfo {
  std::string rule_library_hash;
  int32_t feature_version = 0;
  int32_t max_steps = 0;
  // Where a chosen rule was applied in its real episodes: at its
  // best-paying location (the environments priced every location,
  // model_based.best_locations) or at its first. An agent acts the same way.
  bool best_locations = false;
  // With best_locations: the place that pays most within two rewrites
  // (model_based.look_ahead_locations, world_episode.h look_ahead_location).
  bool look_ahead_locations = false;
  std::vector<std::string> graphs;  // the training graphs, as the run named them
  int64_t trained_steps = 0;        // real steps it has learned from
  std::string source;               // stores or run it was trained from
};

// Where rules went, for messages: "their best-paying location", "the
// location that pays most within two rewrites" or "their first location"
// (WorldModelInfo::best_locations and look_ahead_locations).
std::string rule_placement(bool best_locations, bool look_ahead_locations = false);

struct WorldModelHeadLosses {
  static constexpr double kRewardWeight = 10.0;  // MdnRnnLosses::kRewardWeight (world_model.cc asserts they agree)
  double z_nll = 0, reward = 0, done = 0, mask = 0, locations = 0;
  // What training minimises (MdnRnnLosses::total in mdn_rnn.h).
  double total(int64_t latent_dim) const {
    return z_nll / static_cast<double>(latent_dim) + kRewardWeight * reward + done + mask + locations;
  }
};

struct WorldModelEpochReport {
  std::string phase;  // "encoder" or "mdn-rnn"
  int32_t epoch = 0, epochs = 0;
  double train_loss = 0, held_out_loss = 0;       // encoder: reconstruction
  WorldModelHeadLosses train, held_out;           // mdn-rnn: per head
  double seconds = 0;
  int64_t steps = 0;  // training steps this epoch trained on (padding excluded)
  // The matrix-product work of the epoch's training passes over those steps
  // (forward and backward, padding excluded; held-out scoring not counted),
  // in GFLOP: 6 FLOPs per matrix weight of the phase's network per step.
  double gflop = 0;
};

struct WorldModelTrainOptions {
  int32_t encoder_epochs = 40;  // 0: keep the encoder as it is (z must not move under a trained controller)
  int32_t epochs = 100;         // MDN-RNN epochs
  // Steps per Adam step, padding included, at most: episodes of similar
  // length are grouped (sorted by length, then cut) until a batch's longest
  // episode times its episode count would pass the batch size; an episode
  // longer than it makes a batch of its own. A few hundred steps per Adam
  // step keep the LSTM's matrix products large enough to run near the
  // machine's speed, where a handful of short episodes would be all
  // overhead. Small data sets get smaller batches, so that an epoch still
  // takes min_batches Adam steps where the data allows: the batch size is
  // min(batch_steps, training steps / min_batches), at least 1.
  int32_t batch_steps = 512;
  int32_t min_batches = 64;
  double learning_rate = 2e-3;
  uint64_t seed = 0;
  // With the controller's own memory (WorldModelConfig::
  // separate_controller_memory): train only the bookkeeping LSTM and the
  // reward, done, mask and count heads, and keep the controller's LSTM and
  // the next-z mixture as they are. With encoder_epochs 0 (z unchanged), a
  // controller trained in the dream then reads, in the dream and in the
  // real graph, the h it was trained on. Ignored with one LSTM.
  bool keep_controller_memory = false;
  // Where training runs: "cpu", or "cuda:N" on a CUDA LibTorch (the
  // caller resolves it: learner/compute_device.h). The model comes back to
  // the CPU at the end, as it was saved and is loaded.
  std::string device = "cpu";
  // Steps held in memory as training tensors at once, padding included
  // (about 2.5 KiB a step at the default sizes), for each of the training
  // and the held-out data. Data that fits is built once and kept; more is
  // cut into parts of at most this many steps, each a random share of the
  // batches, rebuilt from the episode source whenever an epoch reaches it
  // (parts in a new random order every epoch, batches shuffled within).
  // No limit by default (a model-based run's episodes are in memory
  // anyway); `worldmodel train --resident-steps` sets one.
  int64_t resident_steps = std::numeric_limits<int64_t>::max();
  std::function<void(const WorldModelEpochReport&)> on_epoch;  // progress, once per epoch
};

// One-step prediction accuracy over real transitions (teacher forcing: the
// model sees the real z and mask of each step).
struct WorldModelAccuracy {
  int64_t steps = 0;        // steps scored for reward and done
  int64_t transitions = 0;  // steps whose next state is known (mask, z)
  double mask_f1 = 0, mask_precision = 0, mask_recall = 0;
  double done_accuracy = 0;
  double reward_mae = 0;    // percentage points per step
  double z_nll = 0;         // per transition, nats
};

class WorldModel {
 public:
  WorldModel(WorldModelConfig config, XferVocabulary vocabulary, WorldModelInfo info, uint64_t seed = 0);
  ~WorldModel();
  WorldModel(WorldModel&&) noexcept;
  WorldModel& operator=(WorldModel&&) noexcept;

  // Trains the encoder (options.encoder_epochs) and then the MDN-RNN on
  // `train`, reporting `held_out` losses each epoch and keeping the MDN-RNN
  // epoch with the lowest held-out loss. The dream's real starts and
  // bounds (Impl::set_starts, set_support) come from both sets.
  // Single-threaded math is deterministic given the seed.
  void train(const std::vector<WorldEpisode>& train, const std::vector<WorldEpisode>& held_out,
             const WorldModelTrainOptions& options);
  WorldModelHeadLosses losses(const std::vector<WorldEpisode>& episodes) const;
  WorldModelAccuracy evaluate(const std::vector<WorldEpisode>& episodes) const;
  // The same over episodes wherever they are kept (an EpisodeFile for a
  // store too large for memory): read a batch at a time.
  void train(const EpisodeSource& train, const EpisodeSource& held_out, const WorldModelTrainOptions& options);
  WorldModelHeadLosses losses(const EpisodeSource& episodes) const;
  WorldModelAccuracy evaluate(const EpisodeSource& episodes) const;

  void save(const std::string& path) const;
  // FormatError naming the file and what is wrong (not a world model,
  // damaged, an unknown version).
  static WorldModel load(const std::string& path);
  // The same without the file (a model-based run's parameters carry it);
  // `what` names the source in errors.
  std::string to_bytes() const;
  static WorldModel from_bytes(const std::string& bytes, const std::string& what);

  const WorldModelConfig& config() const;
  const XferVocabulary& vocabulary() const;
  const WorldModelInfo& info() const;
  WorldModelInfo& info();
  int64_t parameter_count() const;

  struct Impl;  // worldmodel/world_model_modules.h
  Impl& impl() const { return *impl_; }

 private:
  explicit WorldModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A human description (`graphworld worldmodel show`, train's summary).
std::string describe_world_model(const WorldModel& model);

}  // namespace graphworld
