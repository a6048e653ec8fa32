#!/usr/bin/env node
// Runs two ONNX models on the same seeded random inputs in onnxruntime-node
// (graph optimisations disabled) and reports how far their outputs differ.
//
//   node tests/tools/ort_compare.mjs A.onnx B.onnx [B2.onnx ...] [--seed S] [--threads N] [--input-shapes NAME=DIMS;...] [--json]
//
// With several B models, A runs once and each B is compared with it; --json
// then prints {"comparisons": [{model, max_abs_err, max_rel_err, outputs}...]}.
// Outputs are compared pairwise in order. For each pair:
//   abs = max |a - b|,  rel = abs / max(max |a|, 1e-6)
// and the report gives the maximum of each over all outputs. A non-finite
// mismatch (NaN or infinity in one output where the other differs) counts as
// an error of Number.MAX_VALUE so the JSON stays numeric.
// Exit 0 when compared (whatever the error size), 2 for usage, missing files
// or differing inputs/outputs, 1 when onnxruntime fails.

import {
  ToolError, EXIT_USAGE, EXIT_RUNTIME, runMain, loadOrt, createSession, staticInputs, parseInputShapes, makeRng,
  randomInputs, parseArgs, intOption, checkModelFile,
} from './common.mjs';

const USAGE = 'usage: node ort_compare.mjs A.onnx B.onnx [B2.onnx ...] [--seed S] [--threads N] [--input-shapes NAME=DIMS;...] [--json]';

function sameShape(a, b) {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function fmtShape(s) {
  return `[${s.join(', ')}]`;
}

function checkSameInputs(a, b, pathA, pathB) {
  const namesA = a.map((x) => x.name);
  const namesB = b.map((x) => x.name);
  const onlyA = namesA.filter((n) => !namesB.includes(n));
  const onlyB = namesB.filter((n) => !namesA.includes(n));
  if (onlyA.length || onlyB.length) {
    throw new ToolError(
      `the models have different inputs: only in ${pathA}: [${onlyA.join(', ')}], ` +
      `only in ${pathB}: [${onlyB.join(', ')}]`, EXIT_USAGE);
  }
  const byName = new Map(b.map((x) => [x.name, x]));
  for (const x of a) {
    const y = byName.get(x.name);
    if (x.type !== y.type) {
      throw new ToolError(`input '${x.name}' is ${x.type} in ${pathA} but ${y.type} in ${pathB}`, EXIT_USAGE);
    }
    if (!sameShape(x.shape, y.shape)) {
      throw new ToolError(
        `input '${x.name}' has shape ${fmtShape(x.shape)} in ${pathA} but ${fmtShape(y.shape)} in ${pathB}`,
        EXIT_USAGE);
    }
  }
}

// Max abs error, max |a| and count of non-finite mismatches between two tensors.
function diff(ta, tb) {
  const a = ta.data;
  const b = tb.data;
  const big = typeof a[0] === 'bigint' || typeof b[0] === 'bigint';
  let maxAbs = 0;
  let maxRef = 0;
  let nonfinite = 0;
  for (let i = 0; i < a.length; i++) {
    const x = big ? Number(a[i]) : a[i];
    const y = big ? Number(b[i]) : b[i];
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      const same = (Number.isNaN(x) && Number.isNaN(y)) || x === y;
      if (!same) nonfinite++;
      continue;
    }
    const d = Math.abs(x - y);
    if (d > maxAbs) maxAbs = d;
    const r = Math.abs(x);
    if (r > maxRef) maxRef = r;
  }
  return { maxAbs, maxRef, nonfinite };
}

async function run(session, feeds, modelPath) {
  try {
    return await session.run(feeds);
  } catch (err) {
    throw new ToolError(`onnxruntime run of ${modelPath} failed: ${err.message ?? err}`, EXIT_RUNTIME);
  }
}

async function main() {
  const { opts, positional } = parseArgs(process.argv.slice(2), {
    values: ['seed', 'threads', 'input-shapes'],
    flags: ['json', 'help'],
  });
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (positional.length < 2) throw new ToolError(`expected two or more model files\n${USAGE}`);
  const [pathA, ...pathsB] = positional;
  const seed = intOption(opts, 'seed', 0, 0);
  const threads = intOption(opts, 'threads', 1, 1);
  for (const p of positional) checkModelFile(p);

  const ort = loadOrt();
  const sa = await createSession(ort, pathA, { threads, opt: 'disabled' });
  const givenShapes = parseInputShapes(opts['input-shapes']);
  const inputsA = staticInputs(sa, pathA, givenShapes);
  const feeds = randomInputs(ort, inputsA, makeRng(seed), pathA);
  const outA = await run(sa, feeds, pathA);

  const results = [];
  for (const pathB of pathsB) {
    const sb = await createSession(ort, pathB, { threads, opt: 'disabled' });
    checkSameInputs(inputsA, staticInputs(sb, pathB, givenShapes), pathA, pathB);
    if (sa.outputNames.length !== sb.outputNames.length) {
      throw new ToolError(
        `${pathA} has ${sa.outputNames.length} output(s), ${pathB} has ${sb.outputNames.length}`, EXIT_USAGE);
    }
    const outB = await run(sb, feeds, pathB);
    let maxAbs = 0;
    let maxRel = 0;
    const per = [];
    for (let i = 0; i < sa.outputNames.length; i++) {
      const na = sa.outputNames[i];
      const nb = sb.outputNames[i];
      const ta = outA[na];
      const tb = outB[nb];
      if (!sameShape(Array.from(ta.dims), Array.from(tb.dims))) {
        throw new ToolError(
          `output ${i} has shape ${fmtShape(ta.dims)} ('${na}' in ${pathA}) but ${fmtShape(tb.dims)} ('${nb}' in ${pathB})`,
          EXIT_USAGE);
      }
      const { maxAbs: abs0, maxRef, nonfinite } = diff(ta, tb);
      const abs = nonfinite > 0 ? Number.MAX_VALUE : abs0;
      const rel = nonfinite > 0 ? Number.MAX_VALUE : abs / Math.max(maxRef, 1e-6);
      per.push({ name: na, abs, rel, nonfinite });
      maxAbs = Math.max(maxAbs, abs);
      maxRel = Math.max(maxRel, rel);
    }
    results.push({ model: pathB, max_abs_err: maxAbs, max_rel_err: maxRel, outputs: per.length, per });
  }

  if (opts.json) {
    const strip = (r) => ({ model: r.model, max_abs_err: r.max_abs_err, max_rel_err: r.max_rel_err, outputs: r.outputs });
    const body = results.length === 1
      ? { max_abs_err: results[0].max_abs_err, max_rel_err: results[0].max_rel_err, outputs: results[0].outputs }
      : { comparisons: results.map(strip) };
    process.stdout.write(JSON.stringify(body) + '\n');
  } else {
    for (const r of results) {
      process.stdout.write(
        `${r.model}: max_abs_err ${r.max_abs_err.toExponential(3)} max_rel_err ${r.max_rel_err.toExponential(3)} ` +
        `outputs ${r.outputs} (seed ${seed})\n`);
      for (const p of r.per) {
        const nf = p.nonfinite > 0 ? ` non-finite mismatches ${p.nonfinite}` : '';
        process.stdout.write(`  ${p.name}: abs ${p.abs.toExponential(3)} rel ${p.rel.toExponential(3)}${nf}\n`);
      }
    }
  }
  return 0;
}

await runMain('ort_compare', main);
