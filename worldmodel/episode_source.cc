#include "worldmodel/episode_source.h"

#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace graphworld {

int64_t EpisodeSource::total_steps() const {
  int64_t n = 0;
  for (size_t i = 0; i < size(); ++i) n += steps(i);
  return n;
}

bool EpisodeSource::has_steps() const {
  for (size_t i = 0; i < size(); ++i)
    if (steps(i) > 0) return true;
  return false;
}

void EpisodeSource::for_each(const std::function<void(const WorldEpisode&)>& visit) const {
  WorldEpisode scratch;
  for (size_t i = 0; i < size(); ++i) visit(episode(i, scratch));
}

EpisodeSelection::EpisodeSelection(const EpisodeSource& base, std::vector<size_t> indices)
    : base_(base), indices_(std::move(indices)) {
  for (size_t i : indices_)
    if (i >= base_.size())
      throw std::out_of_range("episode " + std::to_string(i) + " selected of " + std::to_string(base_.size()));
}

// Here, beside vocabulary_of, rather than in world_episode.cc: the two are
// one rule.
XferVocabulary XferVocabulary::from_episodes(const std::vector<WorldEpisode>& episodes, int32_t num_xfers) {
  return vocabulary_of(EpisodesInMemory(episodes), num_xfers);
}

XferVocabulary vocabulary_of(const EpisodeSource& episodes, int32_t num_xfers) {
  std::set<int32_t> seen;
  episodes.for_each([&](const WorldEpisode& e) {
    for (const WorldStep& s : e.steps) seen.insert(s.allowed.begin(), s.allowed.end());
  });
  return XferVocabulary(std::vector<int32_t>(seen.begin(), seen.end()), num_xfers);
}

}  // namespace graphworld
