#!/usr/bin/env node
// Runs an ONNX model in onnxruntime-node, the independent runtime graphworld's
// tests check their results against.
//
//   node tests/tools/ort_run.mjs --model M.onnx --inputs IN_DIR --outputs OUT_DIR
//        [--threads N] [--opt disabled|basic|extended|all] [--save-optimized OUT.onnx]
//   node tests/tools/ort_run.mjs --model M.onnx --bench [--iters N] [--warmup W]
//        [--threads N] [--opt ...] [--inputs IN_DIR] [--seed S] [--json]
//
// Tensor directories: see tests/tools/README.md. onnxruntime-node is loaded from
// $GRAPHWORLD_NODE_MODULES, else <repo>/build/node/node_modules.

import {
  ToolError, EXIT_RUNTIME, runMain, loadOrt, createSession, staticInputs, parseInputShapes, readTensorDir,
  writeTensorDir, makeRng, randomInputs, parseArgs, intOption, optOption, checkModelFile,
} from './common.mjs';

const USAGE = `usage:
  node ort_run.mjs --model M.onnx --inputs IN_DIR --outputs OUT_DIR [--threads N] [--opt LEVEL]
  node ort_run.mjs --model M.onnx --save-optimized OUT.onnx [--opt LEVEL] [--threads N]
  node ort_run.mjs --model M.onnx --bench [--iters N] [--warmup W] [--threads N] [--opt LEVEL]
                   [--inputs IN_DIR] [--seed S] [--json]
  LEVEL: disabled (default) | basic | extended | all; threads default 1`;

// Feeds for the model's inputs, taken by name from a tensor directory.
function feedsFromDir(ort, session, dir, modelPath) {
  const tensors = readTensorDir(ort, dir);
  const feeds = {};
  const meta = new Map((session.inputMetadata ?? []).map((m) => [m.name, m]));
  for (const name of session.inputNames) {
    const t = tensors.get(name);
    if (!t) {
      throw new ToolError(
        `${dir} has no tensor named '${name}' (model ${modelPath} inputs: ${session.inputNames.join(', ')}; ` +
        `directory holds: ${[...tensors.keys()].join(', ') || 'nothing'})`);
    }
    const m = meta.get(name);
    if (m && m.isTensor) {
      if (m.type !== t.type) {
        throw new ToolError(`input '${name}': model wants ${m.type}, ${dir} holds ${t.type}`);
      }
      const want = Array.from(m.shape);
      const got = Array.from(t.dims);
      const fits = want.length === 0 ||
        (want.length === got.length && want.every((d, i) => typeof d !== 'number' || d < 0 || d === got[i]));
      if (!fits) {
        throw new ToolError(`input '${name}': model wants shape [${want.join(', ')}], ${dir} holds [${got.join(', ')}]`);
      }
    }
    feeds[name] = t;
  }
  const extra = [...tensors.keys()].filter((n) => !session.inputNames.includes(n));
  if (extra.length > 0) {
    process.stderr.write(`ort_run: ignoring tensors that are not model inputs: ${extra.join(', ')}\n`);
  }
  return feeds;
}

async function runSession(session, feeds) {
  try {
    return await session.run(feeds);
  } catch (err) {
    throw new ToolError(`onnxruntime run failed: ${err.message ?? err}`, EXIT_RUNTIME);
  }
}

function percentile(sorted, q) {
  if (sorted.length === 1) return sorted[0];
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

async function main() {
  const { opts, positional } = parseArgs(process.argv.slice(2), {
    values: ['model', 'inputs', 'outputs', 'threads', 'opt', 'iters', 'warmup', 'seed', 'save-optimized', 'input-shapes'],
    flags: ['bench', 'json', 'help'],
  });
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positional.length > 0) throw new ToolError(`unexpected argument '${positional[0]}'\n${USAGE}`);
  if (!opts.model) throw new ToolError(`--model is required\n${USAGE}`);
  const threads = intOption(opts, 'threads', 1, 1);
  const opt = optOption(opts);
  const bench = Boolean(opts.bench);
  const saveOptimized = opts['save-optimized'];
  if (saveOptimized && !bench && !opts.inputs) {
    // Only the optimised graph is wanted: load the model, let onnxruntime write it, stop.
    checkModelFile(opts.model);
    await createSession(loadOrt(), opts.model, { threads, opt, saveOptimized });
    process.stdout.write(`ort_run: wrote onnxruntime's optimised graph (opt ${opt}) to ${saveOptimized}\n`);
    return 0;
  }
  if (!bench) {
    if (!opts.inputs || !opts.outputs) throw new ToolError(`--inputs and --outputs are required without --bench\n${USAGE}`);
    for (const k of ['iters', 'warmup', 'seed', 'json']) {
      if (opts[k] !== undefined) throw new ToolError(`--${k} is only for --bench`);
    }
  } else if (opts.outputs) {
    throw new ToolError('--outputs is not used with --bench');
  }
  const iters = intOption(opts, 'iters', 30, 1);
  const warmup = intOption(opts, 'warmup', 5, 0);
  const seed = intOption(opts, 'seed', 0, 0);
  checkModelFile(opts.model);

  const ort = loadOrt();
  const session = await createSession(ort, opts.model, { threads, opt, saveOptimized });

  if (!bench) {
    const feeds = feedsFromDir(ort, session, opts.inputs, opts.model);
    const results = await runSession(session, feeds);
    const named = session.outputNames.map((name) => ({ name, tensor: results[name] }));
    writeTensorDir(opts.outputs, named);
    process.stdout.write(`ort_run: wrote ${named.length} output(s) to ${opts.outputs}\n`);
    return 0;
  }

  const feeds = opts.inputs
    ? feedsFromDir(ort, session, opts.inputs, opts.model)
    : randomInputs(ort, staticInputs(session, opts.model, parseInputShapes(opts['input-shapes'])), makeRng(seed), opts.model);
  for (let i = 0; i < warmup; i++) await runSession(session, feeds);
  const times = [];
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    await runSession(session, feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const stats = {
    median_ms: percentile(times, 0.5),
    p10_ms: percentile(times, 0.1),
    p90_ms: percentile(times, 0.9),
    threads,
    opt,
  };
  if (opts.json) {
    process.stdout.write(JSON.stringify(stats) + '\n');
  } else {
    const f = (x) => x.toFixed(3);
    process.stdout.write(
      `median_ms ${f(stats.median_ms)} p10_ms ${f(stats.p10_ms)} p90_ms ${f(stats.p90_ms)} ` +
      `(threads ${threads}, opt ${opt}, iters ${iters}, warmup ${warmup})\n`);
  }
  return 0;
}

await runMain('ort_run', main);
