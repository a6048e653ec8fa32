// The world model against real episodes of real graphs: trained on random
// episodes, it must predict held-out episodes' masks, done and rewards
// within the targets; a dream never offers a masked action; a
// saved model loads back identical and a damaged file is refused.
#include "worldmodel/world_model.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "tests/learner/training_fixture.h"
#include "worldmodel/controller.h"
#include "worldmodel/dream_env.h"
#include "worldmodel/dream_trainer.h"
#include "worldmodel/model_based_config.h"
#include "worldmodel/model_based_training.h"
#include "worldmodel/world_episode.h"

namespace graphworld {
namespace {

using testing::default_matcher;

// Random episodes (rules at their first location) of squeezenet1.1 and nasrnn under the
// GPU-like rates (both have rewrites that pay there).
std::vector<WorldEpisode> random_episodes(int32_t per_graph, int32_t max_steps, uint64_t seed) {
  auto cost = testing::gpu_like_cost();
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1", "nasrnn"});
  GraphEnvOptions options;
  options.max_steps = max_steps;
  std::vector<WorldEpisode> all;
  for (size_t g = 0; g < graphs.size(); ++g) {
    GraphEnv env(graphs[g].graph, default_matcher(), *cost, options);
    auto episodes = play_episodes(env, static_cast<int32_t>(g), per_graph, random_rule_chooser(0.03),
                                  seed + 1000 * g);
    all.insert(all.end(), episodes.begin(), episodes.end());
  }
  return all;
}

WorldModel trained_model(const std::vector<WorldEpisode>& train, const std::vector<WorldEpisode>& held_out) {
  WorldModelConfig config;
  config.hidden = 128;
  WorldModelInfo info;
  info.max_steps = 40;
  info.feature_version = kObservationFeatureVersion;
  WorldModel model(config, XferVocabulary::from_episodes(train, static_cast<int32_t>(default_matcher().num_rules())),
                   info, 3);
  WorldModelTrainOptions options;
  // The default 100 epochs. At 60 the held-out mask F1 sat at 0.9895-0.9901
  // and moved across the 0.99 target with the thread count alone; at 80,
  // 0.9909-0.9914 (0.9903 on one thread once sibling merges of rank 3 and 4
  // joined the rules; with rank 2 too, 0.985: env/rules/hand_written_rules.cc),
  // and 0.9886-0.9894 once the fused LSTMs, flushed denormals and the flat
  // Adam step changed the rounding, the held-out loss still falling there.
  // At 100, 0.9899-0.9901 by machine, until the mask's per-(action, rule)
  // term (MdnRnnConfig::mask_by_choice): 0.9906. With the 1308-rule
  // library, whose rule ids differ, 0.9896 at 100; at 120, 0.9905.
  options.epochs = 120;
  options.seed = 5;
  options.on_epoch = [](const WorldModelEpochReport& r) {
    if (r.epoch % 20 == 0)
      std::printf("%s %d: train %.4f held-out %.4f (z %.3f r %.4f d %.4f m %.4f l %.4f) %.2fs\n", r.phase.c_str(),
                  r.epoch, r.train_loss, r.held_out_loss, r.held_out.z_nll, r.held_out.reward, r.held_out.done,
                  r.held_out.mask, r.held_out.locations, r.seconds);
  };
  model.train(train, held_out, options);
  return model;
}

// Trained once and shared by every test here (minutes; ctest runs them in
// one process, tests/CMakeLists.txt ONE_PROCESS).
struct Trained {
  std::vector<WorldEpisode> train, held_out;
  WorldModel model;
};
const Trained& trained() {
  static const Trained* t = [] {
    torch::set_num_threads(1);
    std::vector<WorldEpisode> train, held_out;
    split_episodes(random_episodes(400, 40, 1), 0.2, 7, train, held_out);
    WorldModel model = trained_model(train, held_out);
    return new Trained{std::move(train), std::move(held_out), std::move(model)};
  }();
  return *t;
}

TEST(WorldModel, PredictsHeldOutMasksDoneAndRewardsOfRealEpisodes) {
  const WorldModel& model = trained().model;
  const std::vector<WorldEpisode>& held_out = trained().held_out;
  const WorldModelAccuracy a = model.evaluate(held_out);
  std::printf("held out: %lld steps, mask F1 %.4f (P %.4f R %.4f), done %.4f, reward MAE %.4f pp, z NLL %.3f\n",
              static_cast<long long>(a.steps), a.mask_f1, a.mask_precision, a.mask_recall, a.done_accuracy,
              a.reward_mae, a.z_nll);
  EXPECT_GE(a.mask_f1, 0.99);
  EXPECT_GE(a.done_accuracy, 0.99);
  EXPECT_LE(a.reward_mae, 0.1);
}

TEST(WorldModel, ADreamNeverOffersAnActionItsPredictedMaskForbids) {
  const WorldModel& model = trained().model;
  std::vector<WorldStep> firsts;
  for (const WorldEpisode& e : trained().held_out) firsts.push_back(e.steps.front());
  const torch::Tensor starts = model.impl().encoder_inputs(firsts);
  ASSERT_EQ(model.impl().starts.size(0), 2) << "one start per training graph";
  DreamOptions options;
  options.batch = 64;
  options.max_steps = 40;
  options.seed = 9;
  DreamEnv dream(model, starts, options);
  DreamController controller = make_controller(model, 4);
  const int64_t v = model.vocabulary().size();
  // The most times each rule was applied in one real episode, held-out ones
  // included (one cut off by the horizon, 40, only up to its best step),
  // counted here from the data: no dream episode applies a rule more often.
  std::vector<float> most(static_cast<size_t>(v), 1.0f);
  std::vector<WorldEpisode> all = trained().train;
  all.insert(all.end(), trained().held_out.begin(), trained().held_out.end());
  for (const WorldEpisode& e : all) {
    std::vector<float> applied(static_cast<size_t>(v), 0.0f);
    const size_t counted = useful_steps(e, 40);
    for (size_t t = 0; t < counted; ++t)
      if (const int32_t i = model.vocabulary().index_of(e.steps[t].xfer); i >= 0 && i < v)
        most[static_cast<size_t>(i)] = std::max(most[static_cast<size_t>(i)], ++applied[static_cast<size_t>(i)]);
  }
  ASSERT_TRUE(torch::equal(model.impl().applications_max, torch::tensor(most)));
  const torch::Tensor limit = torch::tensor(most);
  torch::Tensor applied = torch::zeros({64, v});
  int64_t ended = 0, masked_seen = 0;
  for (int step = 0; step < 300; ++step) {
    const torch::Tensor mask = dream.mask().clone();
    ASSERT_TRUE(mask.select(1, v).all().item<bool>()) << "NO-OP is always allowed";
    masked_seen += (~mask).sum().item<int64_t>();
    const ControllerOutput out = controller->forward(dream.z(), dream.hidden(), mask);
    const torch::Tensor p = torch::softmax(out.logits, 1);
    // Probability exactly 0 where the mask forbids.
    ASSERT_EQ(p.masked_select(~mask).abs().sum().item<double>(), 0.0) << "step " << step;
    const torch::Tensor action = torch::multinomial(p, 1).squeeze(1);
    ASSERT_TRUE(mask.gather(1, action.unsqueeze(1)).all().item<bool>()) << "step " << step;
    applied.scatter_add_(1, action.clamp_max(v - 1).unsqueeze(1), (action < v).to(torch::kFloat).unsqueeze(1));
    ASSERT_TRUE((applied <= limit).all().item<bool>()) << "step " << step << ": a rule applied more often than in any episode";
    const DreamStepResult result = dream.step(action);
    // No action earns more in the dream than the data ever showed for it.
    ASSERT_TRUE((result.reward <= model.impl().reward_max.index_select(0, action)).all().item<bool>()) << "step " << step;
    applied.index_put_({result.done}, 0.0);
    ended += result.done.sum().item<int64_t>();
  }
  EXPECT_GT(masked_seen, 0) << "the predicted masks forbid something";
  EXPECT_GT(ended, 0) << "dream episodes end";
  // A forbidden action is refused, not stepped.
  const torch::Tensor forbidden = (~dream.mask()).nonzero();
  ASSERT_GT(forbidden.size(0), 0);
  torch::Tensor actions = torch::full({64}, v, torch::kInt64);
  const int64_t row = forbidden[0][0].item<int64_t>();
  actions[row] = forbidden[0][1].item<int64_t>();
  EXPECT_THROW(dream.step(actions), UsageError);
}

// A rewrite's cost in the dream is what makes a controller stop: on one
// batch where nothing earns anything, NO-OP gains probability with a step
// cost and keeps it without one (no entropy bonus either way).
TEST(WorldModel, AStepCostInTheDreamTeachesTheControllerToStop) {
  torch::set_num_threads(1);
  const WorldModel& model = trained().model;
  const int64_t v = model.vocabulary().size(), rows = 64;
  auto noop_probability_after = [&](double step_cost) {
    DreamController controller = make_controller(model, 11);
    torch::optim::Adam optimizer(controller->parameters(), torch::optim::AdamOptions(1e-2));
    DreamBatch batch;
    batch.rows = rows;
    batch.steps = 1;
    batch.z = torch::zeros({rows, model.config().latent_dim});
    batch.h = torch::zeros({rows, model.config().hidden});
    batch.mask = torch::ones({rows, v + 1}, torch::kBool);
    batch.action = torch::arange(rows) % 2 * v;  // NO-OP and rule 0, alternately
    const ControllerOutput before = controller->forward(batch.z, batch.h, batch.mask);
    batch.log_prob = torch::log_softmax(before.logits, 1).gather(1, batch.action.unsqueeze(1)).squeeze(1).detach();
    batch.value = before.value.detach();
    batch.reward = torch::zeros({rows});
    batch.done = torch::ones({rows}, torch::kBool);
    batch.bootstrap = torch::zeros({rows});
    PpoOptions ppo;
    ppo.entropy_coef = 0.0;
    ppo.epochs = 4;
    ppo.minibatch_size = rows;
    std::mt19937_64 rng(2);
    const double p0 = torch::softmax(before.logits, 1)[0][v].item<double>();
    learn_from_dream_batch(controller, optimizer, batch, ppo, step_cost, rng);
    torch::NoGradGuard no_grad;
    const double p1 = torch::softmax(controller->forward(batch.z, batch.h, batch.mask).logits, 1)[0][v].item<double>();
    return p1 - p0;
  };
  const double with_cost = noop_probability_after(0.05), without = noop_probability_after(0.0);
  std::printf("NO-OP probability change: %+.4f with a step cost, %+.4f without\n", with_cost, without);
  EXPECT_GT(with_cost, 0.01);  // PPO's clipping bounds one batch's change
  EXPECT_LT(std::abs(without), 0.002);
}

// PPO in the dream must give a controller that does better in the real
// environment than the random policy that made the world model's data, and
// whose dream prediction is close to what it really gets. Breaking the
// controller's training (no updates) fails this.
TEST(WorldModel, AControllerTrainedInTheDreamBeatsRandomInTheRealEnvironment) {
  torch::set_num_threads(1);
  const WorldModel& model = trained().model;
  DreamTrainingOptions options;
  options.dream.batch = 128;
  options.dream.max_steps = 40;
  options.dream.seed = 3;
  options.horizon = 16;
  options.ppo.minibatch_size = 256;
  options.ppo.epochs = 2;
  options.ppo.seed = 3;
  DreamTrainer trainer(model, make_controller(model, 11), model.impl().starts, options);
  DreamUpdateReport first, last;
  for (int u = 0; u < 40; ++u) {
    const DreamUpdateReport r = trainer.update();
    if (u == 0) first = r;
    last = r;
  }
  std::printf("dream return: first update %.3f%%, last %.3f%%\n", first.mean_return, last.mean_return);
  EXPECT_GT(last.mean_return, first.mean_return + 1.0);

  auto cost = testing::gpu_like_cost();
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1", "nasrnn"});
  GraphEnvOptions env_options;
  env_options.max_steps = 40;
  const std::vector<DreamEpisode> dreamed =
      dream_greedy_episodes(model, trainer.controller(), model.impl().starts, 1.0, 5);
  std::mt19937_64 rng(1);
  for (size_t g = 0; g < graphs.size(); ++g) {
    GraphEnv env(graphs[g].graph, default_matcher(), *cost, env_options);
    const RealEpisodeResult real =
        real_controller_episode(env, static_cast<int32_t>(g), model, trainer.controller(), true, 0.0, rng, 0);
    double random_mean = 0;
    for (const WorldEpisode& e : play_episodes(env, 0, 20, random_rule_chooser(0.03), 100)) {
      for (const WorldStep& s : e.steps) random_mean += s.reward / 20.0;
    }
    std::printf("%s: controller %.3f%% in the real env (dream said %.3f%%), random policy %.3f%%\n",
                graphs[g].name.c_str(), real.reduction_percent, dreamed[g].predicted_reduction, random_mean);
    EXPECT_GT(real.reduction_percent, random_mean + 1.0) << graphs[g].name;
  }
}

TEST(WorldModel, SavedModelLoadsBackIdenticalAndDamageIsRefused) {
  const WorldModel& model = trained().model;
  const std::string dir = testing::fresh_dir("world_model_file");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/model.gwworld";
  model.save(path);
  const WorldModel loaded = WorldModel::load(path);
  EXPECT_EQ(loaded.vocabulary().xfers(), model.vocabulary().xfers());
  EXPECT_EQ(loaded.info().max_steps, model.info().max_steps);
  const WorldModelAccuracy a = model.evaluate(trained().held_out), b = loaded.evaluate(trained().held_out);
  EXPECT_EQ(a.mask_f1, b.mask_f1);
  EXPECT_EQ(a.reward_mae, b.reward_mae);
  EXPECT_EQ(a.z_nll, b.z_nll);

  // One flipped byte in the middle: refused, naming the file.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  const std::string damaged = dir + "/damaged.gwworld";
  std::ofstream(damaged, std::ios::binary) << bytes;
  try {
    WorldModel::load(damaged);
    FAIL() << "a damaged world model loaded";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(damaged), std::string::npos) << e.what();
  }
  // Another kind of file (a controller) is not misread as a world model.
  DreamController controller = make_controller(model, 1);
  save_controller(dir + "/controller.gwctl", controller);
  EXPECT_THROW(WorldModel::load(dir + "/controller.gwctl"), FormatError);
  EXPECT_NO_THROW(load_controller(dir + "/controller.gwctl", model));
}

// A model-based run whose settings and environments disagree on where
// rules go would train a world model that says one thing and learned
// another: refused before any episode.
TEST(WorldModel, ModelBasedTrainingRefusesEnvironmentsThatPlaceRulesOtherwise) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1"});
  const auto cost = testing::gpu_like_cost();
  GraphEnv first(graphs[0].graph, default_matcher(), *cost, GraphEnvOptions{});
  ModelBasedOptions options;
  options.settings.best_locations = true;
  const auto rules = static_cast<int32_t>(default_matcher().num_rules());
  EXPECT_THROW(train_model_based({&first}, {"squeezenet1.1"}, rules, options, {}, ""), UsageError);
  GraphEnvOptions priced;
  priced.location_rewards = true;
  GraphEnv best(graphs[0].graph, default_matcher(), *cost, priced);
  options.settings.best_locations = false;
  EXPECT_THROW(train_model_based({&best}, {"squeezenet1.1"}, rules, options, {}, ""), UsageError);
  // The look-ahead compares what locations pay: it needs them priced.
  options.settings.look_ahead_locations = true;
  EXPECT_THROW(train_model_based({&first}, {"squeezenet1.1"}, rules, options, {}, ""), UsageError);
  TrainingOptions run = training_options_from(testing::small_training_config(
      {"model_based.enabled=true", "model_based.look_ahead_locations=true"}));
  EXPECT_THROW(check_model_based_config(run), ConfigError);
  run.model_based.best_locations = true;
  EXPECT_NO_THROW(check_model_based_config(run));
}

// Where its rules were applied travels with the model (an agent loaded from
// it must act the same way), and a file without the line reads as "first".
TEST(WorldModel, BestLocationsSurviveTheFile) {
  WorldModelConfig config;
  config.hidden = 16;
  for (const bool best : {false, true}) {
    WorldModelInfo info;
    info.max_steps = 10;
    info.feature_version = kObservationFeatureVersion;
    info.best_locations = best;
    const WorldModel model(config, XferVocabulary({2, 5}, 8), info, 1);
    const WorldModel loaded = WorldModel::from_bytes(model.to_bytes(), "test");
    EXPECT_EQ(loaded.info().best_locations, best);
    EXPECT_NE(describe_world_model(loaded).find(best ? "best-paying location" : "first location"), std::string::npos)
        << describe_world_model(loaded);
  }
  WorldModelInfo info;
  info.max_steps = 10;
  info.feature_version = kObservationFeatureVersion;
  info.best_locations = info.look_ahead_locations = true;
  const WorldModel ahead(config, XferVocabulary({2, 5}, 8), info, 1);
  const WorldModel loaded = WorldModel::from_bytes(ahead.to_bytes(), "test");
  EXPECT_TRUE(loaded.info().look_ahead_locations);
  EXPECT_NE(describe_world_model(loaded).find("pays most within two rewrites"), std::string::npos)
      << describe_world_model(loaded);
}

}  // namespace
}  // namespace graphworld
