#!/usr/bin/env node
// Loads ONNX models in onnxruntime-node and runs each once on seeded random
// inputs: the check export_breadth_models.py makes of every file it writes.
//
//   node tests/data/ort_smoke.mjs MODEL.onnx INPUTS [--compare B.onnx] [--save DIR] [--seed S]
//   node tests/data/ort_smoke.mjs --jobs JOBS.json
//
// INPUTS is JSON (inline, or @FILE) listing every model input with a concrete shape:
//   [{"name": "input", "dtype": "float32", "shape": [1, 3, 64, 64]},
//    {"name": "ids", "dtype": "int64", "shape": [1, 16], "range": [0, 50]}]
// Inputs are drawn in list order from one mulberry32 stream seeded with S
// (default 0): float32 uniform in [-1, 1), int64 uniform in [range[0], range[1])
// (default [0, 10)).
//
// Prints one JSON line per model:
//   {"model": .., "ok": true, "outputs": [{"name", "dtype", "shape", "nonfinite"}],
//    "compare": {"model": B, "max_abs_err": .., "max_rel_err": ..}}   (with --compare)
// or {"model": .., "ok": false, "error": ".."}.
// --compare runs B on the same inputs and compares outputs pairwise in order
// (rel = max |a - b| / max(max |a|, 1e-6)). --save DIR writes the inputs and
// outputs as tensor directories DIR/inputs and DIR/outputs (format:
// tests/tools/README.md).
//
// JOBS.json is a list of {"model", "inputs", "compare"?, "save"?, "seed"?}
// objects, run one after the other in one process; one line is printed per job.
//
// Graph optimisation is disabled and one thread is used, so onnxruntime
// computes the graph as written. Exit 0 when every model ran, 1 when one did
// not, 2 for usage errors.

import fs from 'node:fs';
import path from 'node:path';
import {
  ToolError, EXIT_RUNTIME, runMain, loadOrt, createSession, makeRng, writeTensorDir,
  parseArgs, intOption,
} from '../tools/common.mjs';

const USAGE = `usage:
  node ort_smoke.mjs MODEL.onnx INPUTS_JSON|@FILE [--compare B.onnx] [--save DIR] [--seed S]
  node ort_smoke.mjs --jobs JOBS.json`;

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ToolError(`${what} is not valid JSON: ${err.message}`);
  }
}

function readJsonArg(arg, what) {
  if (arg.startsWith('@')) {
    let text;
    try {
      text = fs.readFileSync(arg.slice(1), 'utf8');
    } catch {
      throw new ToolError(`${what}: cannot read ${arg.slice(1)}`);
    }
    return parseJson(text, what);
  }
  return parseJson(arg, what);
}

function checkInputSpec(inputs, where) {
  if (!Array.isArray(inputs)) throw new ToolError(`${where}: inputs must be a list`);
  for (const [i, x] of inputs.entries()) {
    const at = `${where}: inputs[${i}]`;
    if (!x || typeof x.name !== 'string') throw new ToolError(`${at}: needs a "name"`);
    if (x.dtype !== 'float32' && x.dtype !== 'int64') {
      throw new ToolError(`${at} ('${x.name}'): dtype must be float32 or int64, got '${x.dtype}'`);
    }
    if (!Array.isArray(x.shape) || !x.shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new ToolError(`${at} ('${x.name}'): "shape" must be a list of non-negative integers`);
    }
    if (x.range !== undefined &&
        !(Array.isArray(x.range) && x.range.length === 2 && x.range.every(Number.isInteger) && x.range[0] < x.range[1])) {
      throw new ToolError(`${at} ('${x.name}'): "range" must be [low, high) with low < high`);
    }
  }
}

function makeFeeds(ort, inputs, seed) {
  const rng = makeRng(seed);
  const feeds = {};
  for (const { name, dtype, shape, range } of inputs) {
    const count = shape.reduce((a, b) => a * b, 1);
    if (dtype === 'float32') {
      const data = new Float32Array(count);
      for (let i = 0; i < count; i++) data[i] = rng() * 2 - 1;
      feeds[name] = new ort.Tensor('float32', data, shape);
    } else {
      const [lo, hi] = range ?? [0, 10];
      const data = new BigInt64Array(count);
      for (let i = 0; i < count; i++) data[i] = BigInt(lo + Math.floor(rng() * (hi - lo)));
      feeds[name] = new ort.Tensor('int64', data, shape);
    }
  }
  return feeds;
}

function checkFeedNames(session, feeds, modelPath) {
  const want = session.inputNames;
  const got = Object.keys(feeds);
  const missing = want.filter((n) => !got.includes(n));
  const extra = got.filter((n) => !want.includes(n));
  if (missing.length || extra.length) {
    throw new ToolError(
      `${modelPath}: inputs are [${want.join(', ')}]; missing from the input list: [${missing.join(', ')}], ` +
      `not model inputs: [${extra.join(', ')}]`);
  }
}

async function runOnce(session, feeds, modelPath) {
  try {
    return await session.run(feeds);
  } catch (err) {
    throw new ToolError(`onnxruntime run of ${modelPath} failed: ${err.message ?? err}`, EXIT_RUNTIME);
  }
}

function countNonfinite(tensor) {
  if (tensor.type !== 'float32' && tensor.type !== 'float64') return 0;
  let n = 0;
  for (const v of tensor.data) if (!Number.isFinite(v)) n++;
  return n;
}

function compareOutputs(outA, namesA, outB, namesB, pathA, pathB) {
  if (namesA.length !== namesB.length) {
    throw new ToolError(`${pathA} has ${namesA.length} output(s), ${pathB} has ${namesB.length}`);
  }
  let maxAbs = 0;
  let maxRel = 0;
  for (let i = 0; i < namesA.length; i++) {
    const a = outA[namesA[i]];
    const b = outB[namesB[i]];
    const da = Array.from(a.dims);
    const db = Array.from(b.dims);
    if (da.length !== db.length || da.some((d, k) => d !== db[k])) {
      throw new ToolError(`output ${i}: shape [${da.join(', ')}] in ${pathA} but [${db.join(', ')}] in ${pathB}`);
    }
    let abs = 0;
    let ref = 0;
    for (let k = 0; k < a.data.length; k++) {
      const x = Number(a.data[k]);
      const y = Number(b.data[k]);
      if (!Number.isFinite(x) || !Number.isFinite(y)) {
        if (!(Number.isNaN(x) && Number.isNaN(y)) && x !== y) abs = Number.MAX_VALUE;
        continue;
      }
      abs = Math.max(abs, Math.abs(x - y));
      ref = Math.max(ref, Math.abs(x));
    }
    maxAbs = Math.max(maxAbs, abs);
    maxRel = Math.max(maxRel, abs === Number.MAX_VALUE ? abs : abs / Math.max(ref, 1e-6));
  }
  return { model: pathB, max_abs_err: maxAbs, max_rel_err: maxRel };
}

async function runJob(ort, job) {
  const seed = job.seed ?? 0;
  const session = await createSession(ort, job.model, { threads: 1, opt: 'disabled' });
  const feeds = makeFeeds(ort, job.inputs, seed);
  checkFeedNames(session, feeds, job.model);
  const out = await runOnce(session, feeds, job.model);
  const result = {
    model: job.model,
    ok: true,
    outputs: session.outputNames.map((name) => ({
      name,
      dtype: out[name].type,
      shape: Array.from(out[name].dims),
      nonfinite: countNonfinite(out[name]),
    })),
  };
  if (job.compare) {
    const other = await createSession(ort, job.compare, { threads: 1, opt: 'disabled' });
    checkFeedNames(other, feeds, job.compare);
    const outB = await runOnce(other, feeds, job.compare);
    result.compare = compareOutputs(out, session.outputNames, outB, other.outputNames, job.model, job.compare);
  }
  if (job.save) {
    writeTensorDir(path.join(job.save, 'inputs'), job.inputs.map(({ name }) => ({ name, tensor: feeds[name] })));
    writeTensorDir(path.join(job.save, 'outputs'), session.outputNames.map((name) => ({ name, tensor: out[name] })));
  }
  return result;
}

async function main() {
  const { opts, positional } = parseArgs(process.argv.slice(2), {
    values: ['jobs', 'compare', 'save', 'seed'],
    flags: ['help'],
  });
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  let jobs;
  if (opts.jobs !== undefined) {
    if (positional.length || opts.compare || opts.save || opts.seed !== undefined) {
      throw new ToolError(`--jobs takes no other arguments\n${USAGE}`);
    }
    jobs = readJsonArg('@' + opts.jobs, `--jobs ${opts.jobs}`);
    if (!Array.isArray(jobs)) throw new ToolError(`--jobs ${opts.jobs}: expected a list of jobs`);
  } else {
    if (positional.length !== 2) throw new ToolError(`expected MODEL and INPUTS\n${USAGE}`);
    jobs = [{
      model: positional[0],
      inputs: readJsonArg(positional[1], 'INPUTS'),
      compare: opts.compare,
      save: opts.save,
      seed: intOption(opts, 'seed', 0, 0),
    }];
  }
  // Malformed jobs are usage errors; found before anything runs.
  jobs.forEach((job, i) => {
    const where = `job ${i}`;
    if (!job || typeof job.model !== 'string') throw new ToolError(`${where}: needs a "model"`);
    checkInputSpec(job.inputs, `${where} (${job.model})`);
  });

  const ort = loadOrt();
  let failed = 0;
  for (const job of jobs) {
    let line;
    try {
      line = await runJob(ort, job);
    } catch (err) {
      // The job list was checked above, so whatever fails here is this model's failure.
      failed++;
      line = { model: job.model, ok: false, error: String(err && err.message ? err.message : err) };
    }
    process.stdout.write(JSON.stringify(line) + '\n');
  }
  return failed ? EXIT_RUNTIME : 0;
}

await runMain('ort_smoke', main);
