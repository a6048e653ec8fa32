#!/usr/bin/env node
// A/B latency of two ONNX models with the same inputs in onnxruntime-node:
// both sessions live in one process and their runs interleave, so a drift
// in the machine's speed hits both alike. Each round is `iters` runs of
// each; the speedup is the median over rounds of (A's median / B's median):
// above 1 means B is faster.
//
//   node tests/tools/ort_ab.mjs --a A.onnx --b B.onnx [--rounds R] [--iters N]
//        [--min-round-ms M] [--warmup W] [--threads T]
//        [--opt disabled|basic|extended|all] [--seed S] [--json]
//
// graphworld optimize --verify-runtime onnxruntime runs this with --opt all.

import {
  ToolError, EXIT_RUNTIME, runMain, loadOrt, createSession, staticInputs, parseInputShapes, makeRng, randomInputs,
  parseArgs, intOption, optOption, checkModelFile,
} from './common.mjs';

const USAGE = `usage:
  node ort_ab.mjs --a A.onnx --b B.onnx [--rounds R] [--iters N] [--min-round-ms M] [--warmup W]
                  [--threads T] [--opt LEVEL] [--seed S] [--json]
  defaults: 5 rounds of 10 timed runs of each model (more if a round would last under M ms)
  after 3 warm-up runs, 1 thread, opt all`;

function median(values) {
  const s = [...values].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

async function timeRuns(session, feeds, iters) {
  const times = [];
  for (let i = 0; i < iters; i++) {
    const t0 = process.hrtime.bigint();
    try {
      await session.run(feeds);
    } catch (err) {
      throw new ToolError(`onnxruntime run failed: ${err.message ?? err}`, EXIT_RUNTIME);
    }
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(times);
}

function sameInputs(a, b, pathA, pathB) {
  const key = (m) => `${m.name}:${m.type}:[${m.shape.join(',')}]`;
  const ka = a.map(key).join(' ');
  const kb = b.map(key).join(' ');
  if (ka !== kb) throw new ToolError(`${pathA} and ${pathB} have different inputs: ${ka} against ${kb}`);
}

async function main() {
  const { opts, positional } = parseArgs(process.argv.slice(2), {
    values: ['a', 'b', 'rounds', 'iters', 'warmup', 'threads', 'opt', 'seed', 'min-round-ms', 'input-shapes'],
    flags: ['json', 'help'],
  });
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positional.length > 0) throw new ToolError(`unexpected argument '${positional[0]}'\n${USAGE}`);
  if (!opts.a || !opts.b) throw new ToolError(`--a and --b are required\n${USAGE}`);
  checkModelFile(opts.a);
  checkModelFile(opts.b);
  const rounds = intOption(opts, 'rounds', 5, 1);
  let iters = intOption(opts, 'iters', 10, 1);
  const minRoundMs = intOption(opts, 'min-round-ms', 0, 0);
  const warmup = intOption(opts, 'warmup', 3, 0);
  const threads = intOption(opts, 'threads', 1, 1);
  const seed = intOption(opts, 'seed', 0, 0);
  const opt = optOption({ opt: opts.opt ?? 'all' });

  const ort = loadOrt();
  const sessionA = await createSession(ort, opts.a, { threads, opt, spinning: false });
  const sessionB = await createSession(ort, opts.b, { threads, opt, spinning: false });
  const givenShapes = parseInputShapes(opts['input-shapes']);
  const inputsA = staticInputs(sessionA, opts.a, givenShapes);
  sameInputs(inputsA, staticInputs(sessionB, opts.b, givenShapes), opts.a, opts.b);
  const feeds = randomInputs(ort, inputsA, makeRng(seed), opts.a);

  await timeRuns(sessionA, feeds, warmup);
  await timeRuns(sessionB, feeds, warmup);
  // Small models get more runs per round, so that a round is long enough
  // for its medians to settle (a 2 ms model at 10 runs swings by percents).
  if (minRoundMs > 0) {
    const probe = Math.min(await timeRuns(sessionA, feeds, 1), await timeRuns(sessionB, feeds, 1));
    iters = Math.max(iters, Math.min(500, Math.ceil(minRoundMs / (2 * Math.max(probe, 1e-3)))));
  }
  // Runs interleave one by one (A B, then B A, ...): each run of one model
  // follows a run of the other, so whatever one session leaves behind (its
  // thread pool still spinning, caches full of its weights) hits both
  // alike. In blocks of runs it hit whichever model came second, and the
  // same pair of files measured anywhere from 0.96x to 1.34x.
  const aMs = [];
  const bMs = [];
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const a = [];
    const b = [];
    for (let i = 0; i < iters; i++) {
      if ((round + i) % 2 === 0) {
        a.push(await timeRuns(sessionA, feeds, 1));
        b.push(await timeRuns(sessionB, feeds, 1));
      } else {
        b.push(await timeRuns(sessionB, feeds, 1));
        a.push(await timeRuns(sessionA, feeds, 1));
      }
    }
    aMs.push(median(a));
    bMs.push(median(b));
    ratios.push(median(a) / median(b));
  }
  const result = {
    a_ms: median(aMs),
    b_ms: median(bMs),
    speedup: median(ratios),
    ratios,
    rounds,
    iters,
    threads,
    opt,
  };
  if (opts.json) {
    process.stdout.write(JSON.stringify(result) + '\n');
  } else {
    process.stdout.write(
      `A ${result.a_ms.toFixed(3)} ms, B ${result.b_ms.toFixed(3)} ms, speedup A/B ${result.speedup.toFixed(3)}x ` +
      `(median of ${rounds} alternating rounds of ${iters} runs; threads ${threads}, opt ${opt})\n`);
  }
  return 0;
}

await runMain('ort_ab', main);
