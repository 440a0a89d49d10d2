#!/usr/bin/env node
// ONNX Runtime's own speed on an ONNX model (CPU execution provider), to quote next to
// camclass-bench's figures: the same summary lines (median, p90, p99, min, fps, top-1).
//
//   node tools/bench_ort.js MODEL.onnx [--threads 2] [--runs 50] [--warmup 3]
//        [--input IN.f32] [--save-output OUT.f32] [--reference REF.f32] [--profile]
//        [--trace FILE]
//
// The input is camclass-bench's: the same fixed random values (its xorshift64* generator), or
// --input, a raw little-endian float32 NCHW tensor of the model's input size, so that
// `camclass-bench --save-output` and --reference compare the two engines on one input:
// "reference" prints both top-1 classes and the largest |difference| of the outputs.
// --profile runs ONNX Runtime's profiler over the timed runs and prints the time per op type
// and the 10 slowest nodes, as `camclass-bench --profile` does; --trace FILE keeps that
// profile (ONNX Runtime's Chrome trace of every run, the first and warm-up ones included).
//
// Sessions use graph optimization level "all", sequential execution, intraOpNumThreads =
// --threads and ONNX Runtime's default spinning thread pool. onnxruntime-node is looked up in
// $CAMCLASS_ORT_DIR, else ${XDG_CACHE_HOME:-~/.cache}/camclass/ort (`tools/setup.sh ort`).
// Exit status: 0 ok, 1 a failure (a run), 2 bad command line, model or input, ORT missing.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const USAGE = 'usage: bench_ort.js MODEL.onnx [--threads N] [--runs N] [--warmup N] ' +
  '[--input IN.f32] [--save-output OUT.f32] [--reference REF.f32] [--profile] [--trace FILE]';
const TOP_NODES = 10;

function fail(msg, status) {
  process.stderr.write(`bench_ort: ${msg}\n`);
  process.exit(status);
}

function parseArgs(args) {
  const opt = {threads: 2, runs: 50, warmup: 3, input: null, saveOutput: null,
    reference: null, profile: false, trace: null, model: null};
  const numbers = {'--threads': ['threads', 1], '--runs': ['runs', 1], '--warmup': ['warmup', 0]};
  const files = {'--input': 'input', '--save-output': 'saveOutput', '--reference': 'reference',
    '--trace': 'trace'};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (a === '--profile') {
      opt.profile = true;
    } else if (a in numbers) {
      const [key, lo] = numbers[a];
      const v = Number(args[++i]);
      if (!Number.isInteger(v) || v < lo) fail(`${a} takes a whole number >= ${lo}\n${USAGE}`, 2);
      opt[key] = v;
    } else if (a in files) {
      if (i + 1 >= args.length) fail(`${a} takes a file name\n${USAGE}`, 2);
      opt[files[a]] = args[++i];
    } else if (a.startsWith('-') || opt.model) {
      fail(`unexpected argument ${a}\n${USAGE}`, 2);
    } else {
      opt.model = a;
    }
  }
  if (!opt.model) fail(`no model given\n${USAGE}`, 2);
  if (opt.trace) opt.profile = true;
  return opt;
}

function loadOrt() {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dir = process.env.CAMCLASS_ORT_DIR || path.join(cache, 'camclass', 'ort');
  try {
    return require(path.join(dir, 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    return fail(`onnxruntime-node is not installed in ${dir}; install it with tools/setup.sh ort`, 2);
  }
}

// camclass-bench's fixed input (app/bench.c, fill_input): xorshift64* from a fixed seed,
// 24 bits of each output scaled to [-2, 2).
function fixedInput(n) {
  const mask = (1n << 64n) - 1n;
  let s = 0x9E3779B97F4A7C15n;
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s >> 12n;
    s = (s ^ (s << 25n)) & mask;
    s ^= s >> 27n;
    const r = Number(((s * 2685821657736338717n) & mask) >> 40n);
    x[i] = Math.fround(Math.fround(r / 16777216) * 4 - 2);
  }
  return x;
}

// A raw little-endian float32 file of exactly n values (what = what it is, for the message).
function readF32(file, n, what) {
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    return fail(`cannot read ${what} ${file}: ${e.code || e.message}`, 2);
  }
  if (buf.length !== n * 4) {
    fail(`${what} ${file} has ${buf.length} bytes; the model needs ${n} float32 (${n * 4} bytes)`, 2);
  }
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

function argmax(v) {
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
  return best;
}

// "reference" line: both top-1 classes, max |out - ref| and that relative to max |ref|.
function compare(out, refFile) {
  const ref = readF32(refFile, out.length, 'reference');
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < out.length; i++) {
    diff = Math.max(diff, Math.abs(out[i] - ref[i]));
    scale = Math.max(scale, Math.abs(ref[i]));
  }
  const same = argmax(out) === argmax(ref) ? 'same top-1' : 'TOP-1 DIFFERS';
  console.log(`reference   ${refFile}: top-1 ${argmax(ref)} vs ${argmax(out)} (${same}), ` +
    `max |diff| ${diff.toExponential(2)} (${(diff / (scale || 1)).toExponential(2)} x max|ref|)`);
}

function percentile(sorted, p) {
  return sorted[Math.max(1, Math.ceil(sorted.length * p / 100)) - 1];
}

function printTimes(loadMs, firstMs, times) {
  const s = [...times].sort((a, b) => a - b);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  const f = (x) => x.toFixed(2);
  console.log(`load        ${loadMs.toFixed(1)} ms`);
  console.log(`first run   ${f(firstMs)} ms`);
  console.log(`runs        ${n}`);
  console.log(`median      ${f(median)} ms  (${(1000 / median).toFixed(1)} fps)`);
  console.log(`p90         ${f(percentile(s, 90))} ms`);
  console.log(`p99         ${f(percentile(s, 99))} ms`);
  console.log(`min         ${f(s[0])} ms`);
}

// The profile ONNX Runtime wrote into dir (a Chrome trace of every run since the session was
// created: it profiles from creation on), copied to keep (a path or null); dir is removed.
function readProfile(dir, keep) {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  try {
    if (files.length !== 1) throw new Error(`${files.length} profile files in ${dir}`);
    const file = path.join(dir, files[0]);
    if (keep) {
      fs.copyFileSync(file, keep);
      console.log(`trace       ${keep}`);
    }
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, {recursive: true, force: true});
  }
}

// Node events ("cat": "Node", "<node>_kernel_time") of the last runs runs (the timed ones),
// summed per node and per op type, means per run.
function printProfile(events, runs, runMean) {
  const starts = events.filter((e) => e.cat === 'Session' && e.name === 'model_run')
    .map((e) => e.ts).sort((a, b) => a - b);
  const from = starts.length >= runs ? starts[starts.length - runs] : 0;
  const per = Math.min(runs, starts.length) || runs;
  const nodes = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < from) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    const row = nodes.get(name) || {name, op: (e.args && e.args.op_name) || '?', us: 0};
    row.us += e.dur;
    nodes.set(name, row);
  }
  const rows = [...nodes.values()].map((r) => ({...r, ms: r.us / 1000 / per}));
  const ops = new Map();
  let total = 0;
  for (const r of rows) {
    const o = ops.get(r.op) || {ms: 0, count: 0};
    o.ms += r.ms;
    o.count++;
    ops.set(r.op, o);
    total += r.ms;
  }
  const pct = (ms) => `${(100 * ms / runMean).toFixed(1)}%`.padStart(8);
  console.log(`\nper op (mean of ${per} runs; nodes sum to ${total.toFixed(2)} ms of a ` +
    `${runMean.toFixed(2)} ms run)`);
  console.log(`  ${'op'.padEnd(24)} ${'total ms'.padStart(10)} ${'% run'.padStart(8)} ${'count'.padStart(6)}`);
  for (const [op, o] of [...ops].sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(`  ${op.padEnd(24)} ${o.ms.toFixed(3).padStart(10)} ${pct(o.ms)} ${String(o.count).padStart(6)}`);
  }
  rows.sort((a, b) => b.ms - a.ms);
  console.log(`\nslowest ${Math.min(TOP_NODES, rows.length)} nodes`);
  console.log(`  ${'node'.padEnd(40)} ${'op'.padEnd(20)} ${'ms'.padStart(10)} ${'% run'.padStart(8)}`);
  for (const r of rows.slice(0, TOP_NODES)) {
    console.log(`  ${r.name.padEnd(40)} ${r.op.padEnd(20)} ${r.ms.toFixed(3).padStart(10)} ${pct(r.ms)}`);
  }
}

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const profileDir = opt.profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'bench_ort-')) : null;
  if (profileDir) process.on('exit', () => fs.rmSync(profileDir, {recursive: true, force: true}));
  const t0 = performance.now();
  // A model that does not load is a bad argument (exit 2), as camclass-bench says of a bundle.
  const session = await ort.InferenceSession.create(opt.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: opt.threads,
    interOpNumThreads: 1,
    enableProfiling: opt.profile,
    profileFilePrefix: profileDir ? path.join(profileDir, 'profile') : undefined,
  }).catch((e) => fail(`cannot load ${opt.model}: ${String(e.message || e).split('\n')[0]}`, 2));
  const loadMs = performance.now() - t0;
  const name = session.inputNames[0];
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  const dims = (meta && meta.shape ? meta.shape : [1, 3, 224, 224])
    .map((d) => (typeof d === 'number' && d > 0 ? d : 1));
  const n = dims.reduce((a, b) => a * b, 1);
  const data = opt.input ? readF32(opt.input, n, 'input') : fixedInput(n);
  const feeds = {[name]: new ort.Tensor('float32', data, dims)};
  const version = ort.env.versions ? ort.env.versions.common : '';
  console.log(`engine      ONNX Runtime ${version} (CPU, ${opt.threads} thread${opt.threads === 1 ? '' : 's'})`);
  console.log(`input       ${opt.input || '-'} (${opt.input ? 'raw float32' : 'fixed random values in [-2, 2)'}, ${dims.join('x')})`);

  let t = performance.now();
  const first = await session.run(feeds);
  const firstMs = performance.now() - t;
  const out = first[session.outputNames[0]].data;
  if (opt.saveOutput) {
    fs.writeFileSync(opt.saveOutput, Buffer.from(out.buffer, out.byteOffset, out.byteLength));
    console.log(`output      ${opt.saveOutput} (${out.length} float32, first run)`);
  }
  for (let i = 0; i < opt.warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < opt.runs; i++) {
    t = performance.now();
    await session.run(feeds);
    times.push(performance.now() - t);
  }
  printTimes(loadMs, firstMs, times);
  console.log(`top-1       ${argmax(out)} (${out[argmax(out)].toPrecision(4)})`);
  if (opt.reference) compare(out, opt.reference);
  if (opt.profile) {
    session.endProfiling();
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    printProfile(readProfile(profileDir, opt.trace), opt.runs, mean);
  }
}

main().catch((e) => fail(String(e.message || e).split('\n')[0], 1));
