// graphworld report, run as a user runs it: the report of real runs (a
// model-free run, a model-based run through the launcher, and their
// evaluations) rendered in headless Chromium with every figure loaded, and
// bad inputs refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/tensorboard/event_file.h"
#include "tests/launch/trained_run_support.h"

namespace graphworld::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Counts what headless Chromium saw after the page's load event.
struct RenderedPage {
  int figures = -1, loaded = -1;
  std::string dom;
};

RenderedPage render_in_chromium(const std::string& html_file) {
  RenderedPage page;
  std::string out;
  const int status = run_command("chromium --headless --no-sandbox --disable-gpu --dump-dom 'file://" + html_file +
                                     "' 2>/dev/null",
                                 &out);
  EXPECT_EQ(status, 0) << "chromium failed (launch/install-deps installs it): " << out;
  page.dom = out;
  std::smatch m;
  if (std::regex_search(out, m, std::regex("data-figures=\"([0-9]+)\""))) page.figures = std::stoi(m[1]);
  if (std::regex_search(out, m, std::regex("data-figures-loaded=\"([0-9]+)\""))) page.loaded = std::stoi(m[1]);
  return page;
}

TEST(ReportCli, ARealRunsReportRendersInHeadlessChromiumWithEveryFigure) {
  const TrainedRun& mf = model_free_run();
  // A tiny model-based run through the launcher (learner, real and dream
  // actors as processes), for the world-model figures.
  const std::string mb = scratch_dir() + "/report-mb-run";
  fs::remove_all(mb);
  std::string out;
  ASSERT_EQ(gw("train " + source_dir() + "/configs/model_based.yaml --run " + mb +
                   " train.graphs=[squeezenet1.1] model_based.rounds=2 model_based.random_episodes=3"
                   " model_based.dream_updates=3 model_based.epochs=4 model_based.later_epochs=2"
                   " model_based.encoder_epochs=4 model_based.dream_rows=16 model_based.hidden=32 env.max_steps=20"
                   " model_based.holdout=0.34 env.rates=" + gpu_rates() + " --quiet",
               &out),
            0)
      << out;
  const std::string evaluation = scratch_dir() + "/report-evaluation.json";
  ASSERT_EQ(run_command(graphworld_binary() + " evaluate " + mf.policy + " squeezenet1.1 --rates " + gpu_rates() +
                            " --budget 20 --greedy-budget 20 --latency-rounds 1 --finish greedy --json --quiet > " +
                            evaluation +
                            " 2>/dev/null",
                        &out),
            0)
      << out;
  // Both trainers (in-process, and the distributed learner) write one
  // TensorBoard event per metrics row, at step env_steps.
  for (const std::string& run : {mf.run, mb}) {
    const EventFileContents events = read_event_file(event_file_path(run));
    std::vector<int64_t> steps;
    std::ifstream metrics(run + "/metrics.jsonl");
    for (std::string line; std::getline(metrics, line);) steps.push_back(json::parse(line)["env_steps"].get<int64_t>());
    ASSERT_EQ(events.scalars.size(), steps.size()) << run;
    for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(events.scalars[i].step, steps[i]) << run << " row " << i;
  }
  // The model-based run's agent (world model and controller) evaluated the same way.
  const std::string mb_evaluation = scratch_dir() + "/report-evaluation-mb.json";
  ASSERT_EQ(run_command(graphworld_binary() + " evaluate " + mb + " squeezenet1.1 --rates " + gpu_rates() +
                            " --budget 20 --greedy-budget 20 --latency-rounds 1 --json --quiet > " + mb_evaluation +
                            " 2>/dev/null",
                        &out),
            0)
      << out;
  const json mb_result = json::parse(read_text(mb_evaluation));
  EXPECT_EQ(mb_result["agent"], "model-based");
  EXPECT_TRUE(mb_result["models"][0]["methods"]["policy"]["equivalent"].get<bool>());
  // Asked to, evaluate finishes the agent's result greedily and keeps what
  // it reached alone; by default it judges the agent alone.
  EXPECT_EQ(mb_result["agent_finish"], "none");
  EXPECT_TRUE(mb_result["models"][0]["methods"]["policy"]["finish"].is_null());
  const json mf_result = json::parse(read_text(evaluation));
  EXPECT_EQ(mf_result["agent_finish"], "greedy");
  const json& policy_row = mf_result["models"][0]["methods"]["policy"];
  ASSERT_TRUE(policy_row["finish"].is_object()) << policy_row;
  EXPECT_LE(policy_row["finish"]["agent_reduction_pct"].get<double>(), policy_row["reduction_pct"].get<double>() + 1e-9);
  EXPECT_TRUE(mf_result["models"][0]["methods"]["taso"]["finish"].is_null());
  const std::string report = scratch_dir() + "/report-out";
  fs::remove_all(report);
  ASSERT_EQ(gw("report " + mf.run + " " + mb + " -o " + report + " --evaluation model-free=" + evaluation +
                   " --evaluation model-based=" + mb_evaluation,
               &out),
            0)
      << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("\\(([0-9]+) figures"))) << out;
  const int written = std::stoi(m[1]);
  // Per graph two reduction plots; per model-based run two; the heatmap and
  // three bar charts (cost, latency with onnxruntime's optimisations on, off).
  EXPECT_EQ(written, 2 + 2 + 4) << out;

  const std::string html = read_text(report + "/index.html");
  for (const char* section : {"Runs", "Real reduction during training", "World model", "Final policies against the searches",
                              "Temperature sweep", "report-mb-run", "policy model-free", "policy model-based",
                              "then greedy)"})
    EXPECT_NE(html.find(section), std::string::npos) << section << " missing from the page";
  // Self-contained: nothing fetched from anywhere.
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_FALSE(fs::exists(report + "/figures")) << "the work folder was left behind";

  const RenderedPage page = render_in_chromium(fs::absolute(report + "/index.html").string());
  EXPECT_EQ(page.figures, written) << page.dom.substr(0, 400);
  EXPECT_EQ(page.loaded, written) << "a figure did not load in Chromium";
}

TEST(ReportCli, BadInputsAreClearErrors) {
  std::string out;
  EXPECT_EQ(gw("report " + model_free_run().run, &out), 2);
  EXPECT_NE(out.find("-o DIR"), std::string::npos) << out;
  const std::string empty = scratch_dir() + "/report-not-a-run";
  fs::create_directories(empty);
  EXPECT_EQ(gw("report " + empty + " -o " + scratch_dir() + "/report-bad", &out), 2);
  EXPECT_NE(out.find(empty + ": not a training run"), std::string::npos) << out;
  const std::string not_json = scratch_dir() + "/report-not-json.json";
  std::ofstream(not_json) << "{ this is not json";
  EXPECT_EQ(gw("report --evaluation " + not_json + " -o " + scratch_dir() + "/report-bad", &out), 2);
  EXPECT_NE(out.find(not_json + ": not JSON"), std::string::npos) << out;
  const std::string wrong_json = scratch_dir() + "/report-wrong.json";
  std::ofstream(wrong_json) << "{\"policy\": \"x\", \"cost_model\": \"analytic\", \"models\": [{\"model\": \"m\"}]}";
  EXPECT_EQ(gw("report --evaluation " + wrong_json + " -o " + scratch_dir() + "/report-bad", &out), 2);
  EXPECT_NE(out.find("no 'original_cost_ms'"), std::string::npos) << out;
  // A metrics row damaged in the middle is named by file and line.
  const std::string damaged = scratch_dir() + "/report-damaged-run";
  fs::remove_all(damaged);
  fs::copy(model_free_run().run, damaged, fs::copy_options::recursive);
  std::string metrics = read_text(damaged + "/metrics.jsonl");
  metrics.insert(metrics.find('\n') + 1, "{oops\n");
  std::ofstream(damaged + "/metrics.jsonl") << metrics;
  EXPECT_EQ(gw("report " + damaged + " -o " + scratch_dir() + "/report-bad", &out), 2);
  EXPECT_NE(out.find("metrics.jsonl:2"), std::string::npos) << out;
}

// Names in a report come from run folders, configs and evaluation files:
// gnuplot must see them as text, never run them (backquotes in a
// double-quoted gnuplot string are a shell command).
TEST(ReportCli, NamesAreTextNotCommands) {
  const std::string marker = scratch_dir() + "/gnuplot-ran-a-command";
  fs::remove(marker);
  const std::string evaluation = scratch_dir() + "/report-hostile.json";
  std::ofstream(evaluation) << "{\"policy\": \"p\", \"cost_model\": \"analytic\", \"models\": [{\"model\": "
                               "\"zoo:a`touch " << marker << "`'b\\\"c\", \"original_cost_ms\": 2, \"methods\": "
                               "{\"policy\": {\"optimized_cost_ms\": 1, \"reduction_pct\": 50, \"applied\": "
                               "{\"rule`touch " << marker << "`\": 1}}}}]}";
  std::string out;
  ASSERT_EQ(gw("report --evaluation 'label`touch " + marker + "`=" + evaluation + "' -o " + scratch_dir() +
                   "/report-hostile",
               &out),
            0)
      << out;
  EXPECT_FALSE(fs::exists(marker)) << "gnuplot ran a command from a name";
}

}  // namespace
}  // namespace graphworld::testing
