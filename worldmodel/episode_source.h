// Episodes a world model trains on or is measured on, wherever they are
// kept: in memory (EpisodesInMemory), or in an episode file on disk when a
// store's rebuilt episodes would not fit in memory (worldmodel/
// episode_file.h). Training reads them a batch at a time
// (WorldModelTrainOptions::resident_steps bounds how many it holds).
//
// Torch-free, like world_episode.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "worldmodel/world_episode.h"

namespace graphworld {

class EpisodeSource {
 public:
  virtual ~EpisodeSource() = default;
  virtual size_t size() const = 0;
  // Steps of episode i, and whether its last step ended it, known without
  // reading it.
  virtual int64_t steps(size_t i) const = 0;
  virtual bool complete(size_t i) const = 0;
  // Episode i: a reference to it where it lives in memory, otherwise read
  // into `scratch` and a reference to that. Valid until the next call with
  // the same scratch.
  virtual const WorldEpisode& episode(size_t i, WorldEpisode& scratch) const = 0;

  int64_t total_steps() const;
  bool has_steps() const;  // some episode has at least one step
  // Calls visit on every episode in order.
  void for_each(const std::function<void(const WorldEpisode&)>& visit) const;
};

// A vector of episodes, not copied: it must outlive this.
class EpisodesInMemory final : public EpisodeSource {
 public:
  explicit EpisodesInMemory(const std::vector<WorldEpisode>& episodes) : episodes_(episodes) {}
  size_t size() const override { return episodes_.size(); }
  int64_t steps(size_t i) const override { return static_cast<int64_t>(episodes_.at(i).steps.size()); }
  bool complete(size_t i) const override { return episodes_.at(i).complete(); }
  const WorldEpisode& episode(size_t i, WorldEpisode&) const override { return episodes_.at(i); }

 private:
  const std::vector<WorldEpisode>& episodes_;
};

// Some of another source's episodes, in the order given (a train or
// held-out split). The base must outlive this.
class EpisodeSelection final : public EpisodeSource {
 public:
  EpisodeSelection(const EpisodeSource& base, std::vector<size_t> indices);
  size_t size() const override { return indices_.size(); }
  int64_t steps(size_t i) const override { return base_.steps(indices_.at(i)); }
  bool complete(size_t i) const override { return base_.complete(indices_.at(i)); }
  const WorldEpisode& episode(size_t i, WorldEpisode& scratch) const override {
    return base_.episode(indices_.at(i), scratch);
  }

 private:
  const EpisodeSource& base_;
  std::vector<size_t> indices_;
};

// The vocabulary of every allowed xfer in a source's episodes (the same as
// XferVocabulary::from_episodes, read one episode at a time).
XferVocabulary vocabulary_of(const EpisodeSource& episodes, int32_t num_xfers);

}  // namespace graphworld
