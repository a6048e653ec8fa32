// Shared helpers for ort_run.mjs and ort_compare.mjs: loading onnxruntime-node,
// the tensor directory format, a seeded random generator and argument parsing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');

// Exit codes: USAGE for bad arguments or inputs the caller got wrong,
// RUNTIME for failures inside onnxruntime.
export const EXIT_USAGE = 2;
export const EXIT_RUNTIME = 1;

export class ToolError extends Error {
  constructor(message, code = EXIT_USAGE) {
    super(message);
    this.code = code;
  }
}

// Runs main(), turning ToolError (and anything else) into a message and an exit code.
export async function runMain(tool, main) {
  try {
    const code = await main();
    process.exitCode = code ?? 0;
  } catch (err) {
    if (err instanceof ToolError) {
      process.stderr.write(`${tool}: ${err.message}\n`);
      process.exitCode = err.code;
    } else {
      process.stderr.write(`${tool}: ${err && err.stack ? err.stack : err}\n`);
      process.exitCode = EXIT_RUNTIME;
    }
  }
}

// ---------------------------------------------------------------------------
// onnxruntime-node
// ---------------------------------------------------------------------------

export function nodeModulesDir() {
  const fromEnv = process.env.GRAPHWORLD_NODE_MODULES;
  if (fromEnv && fromEnv.length > 0) return path.resolve(fromEnv);
  return path.join(repoRoot, 'build', 'node', 'node_modules');
}

export function loadOrt() {
  const dir = nodeModulesDir();
  const pkg = path.join(dir, 'onnxruntime-node');
  if (!fs.existsSync(path.join(pkg, 'package.json'))) {
    throw new ToolError(
      `onnxruntime-node not found in ${dir}\n` +
      '  set GRAPHWORLD_NODE_MODULES to a node_modules directory that holds it, ' +
      'or run launch/install-deps to install it into build/node/node_modules',
      EXIT_RUNTIME);
  }
  const require = createRequire(path.join(dir, 'noop.js'));
  return require(pkg);
}

export const OPT_LEVELS = ['disabled', 'basic', 'extended', 'all'];

export function sessionOptions({ threads = 1, opt = 'disabled', saveOptimized, spinning = true } = {}) {
  const options = {
    graphOptimizationLevel: opt,
    intraOpNumThreads: threads,
    interOpNumThreads: threads,
    executionMode: 'sequential',
    logSeverityLevel: 3,
  };
  // Two sessions in one process (an A/B) must not spin: a session's idle
  // pool threads busy-wait after each run and take the cores from the other.
  if (!spinning) options.extra = { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } };
  // onnxruntime writes the graph it will run, after its own fusions: the
  // evidence for how it treats an exported spelling.
  if (saveOptimized) options.optimizedModelFilePath = saveOptimized;
  return options;
}

export async function createSession(ort, modelPath, opts) {
  checkModelFile(modelPath);
  try {
    return await ort.InferenceSession.create(modelPath, sessionOptions(opts));
  } catch (err) {
    throw new ToolError(`onnxruntime could not load ${modelPath}: ${err.message ?? err}`, EXIT_RUNTIME);
  }
}

export function checkModelFile(modelPath) {
  if (!modelPath) throw new ToolError('no model given');
  let st;
  try {
    st = fs.statSync(modelPath);
  } catch {
    throw new ToolError(`model file not found: ${modelPath}`);
  }
  if (!st.isFile()) throw new ToolError(`model path is not a file: ${modelPath}`);
}

// "NAME=1x3x64x64;IDS=1x16" (the --input-shapes option) as a Map of shapes.
export function parseInputShapes(text) {
  const shapes = new Map();
  if (!text) return shapes;
  for (const item of String(text).split(';')) {
    const eq = item.lastIndexOf('=');
    const dims = eq > 0 ? item.slice(eq + 1).split('x').map(Number) : [];
    if (eq <= 0 || dims.length === 0 || !dims.every((d) => Number.isInteger(d) && d > 0)) {
      throw new ToolError(`--input-shapes: '${item}' is not NAME=DIMS (e.g. images=1x3x640x640)`);
    }
    shapes.set(item.slice(0, eq), dims);
  }
  return shapes;
}

// Input metadata as [{name, type, shape}], failing when a shape is unknown or
// symbolic and `given` (a Map from parseInputShapes) does not fix it.
export function staticInputs(session, modelPath, given = new Map()) {
  const meta = session.inputMetadata;
  if (!meta) throw new ToolError('this onnxruntime-node has no inputMetadata; version 1.22 or newer is needed', EXIT_RUNTIME);
  return meta.map((m) => {
    if (!m.isTensor) throw new ToolError(`${modelPath}: input '${m.name}' is not a tensor`);
    if (given.has(m.name)) {
      const fixed = given.get(m.name);
      if (fixed.length !== m.shape.length) {
        throw new ToolError(`${modelPath}: input '${m.name}' has rank ${m.shape.length}, --input-shapes gives [${fixed.join(', ')}]`);
      }
      return { name: m.name, type: m.type, shape: fixed };
    }
    const shape = Array.from(m.shape);
    const symbolic = shape.filter((d) => typeof d !== 'number' || !Number.isInteger(d) || d < 0);
    // An empty shape is taken as a scalar (onnxruntime also reports an unknown rank
    // that way; such a model then fails in run() with onnxruntime's own message).
    if (symbolic.length > 0) {
      throw new ToolError(
        `${modelPath}: input '${m.name}' has a symbolic or unknown shape [${shape.join(', ')}]; ` +
        'random inputs need a fully static shape (give it with --input-shapes NAME=DIMS)');
    }
    return { name: m.name, type: m.type, shape };
  });
}

// ---------------------------------------------------------------------------
// Tensor directory format
//   DIR/manifest.json: {"tensors":[{"name":..,"dtype":"float32"|"int64","shape":[..],"file":"0.bin"},..]}
//   each file: raw little-endian elements, row-major.
// ---------------------------------------------------------------------------

const DTYPES = {
  float32: { bytes: 4, array: Float32Array },
  int64: { bytes: 8, array: BigInt64Array },
};

function checkEndianness() {
  if (os.endianness() !== 'LE') throw new ToolError('tensor files are little-endian; this host is big-endian', EXIT_RUNTIME);
}

function elementCount(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

export function readTensorDir(ort, dir) {
  checkEndianness();
  const manifestPath = path.join(dir, 'manifest.json');
  if (!fs.existsSync(dir)) throw new ToolError(`tensor directory not found: ${dir}`);
  if (!fs.existsSync(manifestPath)) throw new ToolError(`no manifest.json in ${dir}`);
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  } catch (err) {
    throw new ToolError(`bad manifest ${manifestPath}: ${err.message}`);
  }
  if (!manifest || !Array.isArray(manifest.tensors)) {
    throw new ToolError(`bad manifest ${manifestPath}: expected an object with a "tensors" array`);
  }
  const tensors = new Map();
  manifest.tensors.forEach((entry, i) => {
    const where = `${manifestPath}: tensors[${i}]`;
    if (!entry || typeof entry !== 'object') throw new ToolError(`${where} is not an object`);
    const { name, dtype, shape, file } = entry;
    if (typeof name !== 'string' || name.length === 0) throw new ToolError(`${where}: "name" must be a non-empty string`);
    if (!DTYPES[dtype]) throw new ToolError(`${where} ('${name}'): dtype '${dtype}' is not one of ${Object.keys(DTYPES).join(', ')}`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new ToolError(`${where} ('${name}'): "shape" must be an array of non-negative integers`);
    }
    if (typeof file !== 'string' || file.length === 0) throw new ToolError(`${where} ('${name}'): "file" must be a non-empty string`);
    if (tensors.has(name)) throw new ToolError(`${where}: tensor name '${name}' appears twice`);
    const filePath = path.join(dir, file);
    let buf;
    try {
      buf = fs.readFileSync(filePath);
    } catch {
      throw new ToolError(`${where} ('${name}'): data file not found: ${filePath}`);
    }
    const { bytes, array } = DTYPES[dtype];
    const count = elementCount(shape);
    if (buf.length !== count * bytes) {
      throw new ToolError(
        `${where} ('${name}'): ${filePath} holds ${buf.length} bytes, ` +
        `shape [${shape.join(', ')}] of ${dtype} needs ${count * bytes}`);
    }
    // Copy into a fresh, aligned buffer.
    const data = new array(count);
    new Uint8Array(data.buffer).set(buf);
    tensors.set(name, new ort.Tensor(dtype, data, shape));
  });
  return tensors;
}

// Writes [{name, tensor}] to dir, files 0.bin, 1.bin, ... in the given order.
export function writeTensorDir(dir, named) {
  checkEndianness();
  fs.mkdirSync(dir, { recursive: true });
  const entries = [];
  named.forEach(({ name, tensor }, i) => {
    if (!DTYPES[tensor.type]) {
      throw new ToolError(
        `output '${name}' has dtype '${tensor.type}'; the tensor directory format holds only ` +
        Object.keys(DTYPES).join(', '), EXIT_RUNTIME);
    }
    const file = `${i}.bin`;
    const data = tensor.data;
    fs.writeFileSync(path.join(dir, file), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    entries.push({ name, dtype: tensor.type, shape: Array.from(tensor.dims), file });
  });
  // The manifest goes last so a reader never sees it pointing at missing files.
  const body = entries.map((e) => '  ' + JSON.stringify(e)).join(',\n');
  fs.writeFileSync(path.join(dir, 'manifest.json'), `{"tensors": [\n${body}\n]}\n`);
}

// ---------------------------------------------------------------------------
// Random inputs
// ---------------------------------------------------------------------------

// mulberry32: small, fast, deterministic 32-bit generator.
export function makeRng(seed) {
  let a = (seed >>> 0) || 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296; // [0, 1)
  };
}

// Uniform [-1, 1) float32 tensors for static inputs, drawn in input order
// from one stream. int64 inputs (token ids, indices) are zero, as in
// graphworld's executor: always a valid index.
export function randomInputs(ort, inputs, rng, modelPath) {
  const feeds = {};
  for (const { name, type, shape } of inputs) {
    if (type === 'int64') {
      feeds[name] = new ort.Tensor('int64', new BigInt64Array(elementCount(shape)), shape);
      continue;
    }
    if (type !== 'float32') {
      throw new ToolError(`${modelPath}: input '${name}' has type ${type}; random inputs are made only for float32 and int64`);
    }
    const data = new Float32Array(elementCount(shape));
    for (let i = 0; i < data.length; i++) data[i] = rng() * 2 - 1;
    feeds[name] = new ort.Tensor('float32', data, shape);
  }
  return feeds;
}

// ---------------------------------------------------------------------------
// Arguments: --key value, --key=value and bare flags.
// ---------------------------------------------------------------------------

export function parseArgs(argv, { values = [], flags = [] }) {
  const opts = {};
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const key = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (flags.includes(key)) {
      if (eq >= 0) throw new ToolError(`option --${key} takes no value`);
      opts[key] = true;
    } else if (values.includes(key)) {
      let value;
      if (eq >= 0) value = arg.slice(eq + 1);
      else if (i + 1 < argv.length) value = argv[++i];
      else throw new ToolError(`option --${key} needs a value`);
      opts[key] = value;
    } else {
      throw new ToolError(`unknown option --${key}`);
    }
  }
  return { opts, positional };
}

export function intOption(opts, key, fallback, min) {
  if (opts[key] === undefined) return fallback;
  const s = String(opts[key]);
  const v = Number(s);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(v) || v < min) {
    throw new ToolError(`--${key} must be an integer >= ${min}, got '${opts[key]}'`);
  }
  return v;
}

export function optOption(opts) {
  const opt = opts.opt ?? 'disabled';
  if (!OPT_LEVELS.includes(opt)) throw new ToolError(`--opt must be one of ${OPT_LEVELS.join('|')}, got '${opt}'`);
  return opt;
}
