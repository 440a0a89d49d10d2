#!/usr/bin/env node
// ONNX Runtime's own speed on an ONNX model (CPU execution provider), to quote next to
// camclass-bench's figures: the same summary lines (median, p90, p99, min, fps).
//
//   node tools/bench_ort.js MODEL.onnx [--threads 2] [--runs 50] [--warmup 3]
//
// Needs onnxruntime-node in tools/ort (tools/perf_compare.sh installs it). Sessions use
// graph optimization level "all", sequential execution and intraOpNumThreads = --threads
// with ONNX Runtime's default spinning thread pool.
'use strict';
const path = require('path');

function usage(msg) {
  process.stderr.write(`bench_ort: ${msg}\nusage: bench_ort.js MODEL.onnx [--threads N] [--runs N] [--warmup N]\n`);
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  const opt = {threads: 2, runs: 50, warmup: 3};
  let model = null;
  for (let i = 0; i < args.length; i++) {
    const key = args[i].replace(/^--/, '');
    if (args[i].startsWith('--') && key in opt) {
      const v = Number(args[++i]);
      if (!Number.isInteger(v) || v < (key === 'warmup' ? 0 : 1)) usage(`--${key} takes a whole number`);
      opt[key] = v;
    } else if (!model) {
      model = args[i];
    } else {
      usage(`unexpected argument ${args[i]}`);
    }
  }
  if (!model) usage('no model given');
  let ort;
  try {
    ort = require(path.join(__dirname, 'ort', 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    process.stderr.write('bench_ort: onnxruntime-node is not installed; run ' +
      '(cd tools/ort && ONNXRUNTIME_NODE_INSTALL=skip npm install)\n');
    process.exit(2);
  }
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: opt.threads,
    interOpNumThreads: 1,
  });
  const loadMs = performance.now() - t0;
  const dims = [1, 3, 224, 224];
  const data = new Float32Array(dims.reduce((a, b) => a * b));
  let seed = 1;
  for (let i = 0; i < data.length; i++) { // a fixed pseudo-random input in [-2, 2)
    seed = (seed * 1103515245 + 12345) >>> 0;
    data[i] = (seed / 4294967296) * 4 - 2;
  }
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, dims)};
  let t = performance.now();
  await session.run(feeds);
  const firstMs = performance.now() - t;
  for (let i = 0; i < opt.warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < opt.runs; i++) {
    t = performance.now();
    await session.run(feeds);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const pct = (p) => times[Math.max(1, Math.ceil(times.length * p / 100)) - 1];
  const median = times.length % 2 ? times[(times.length - 1) / 2]
    : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  const f = (x) => x.toFixed(2);
  console.log(`engine      ONNX Runtime ${ort.env.versions ? ort.env.versions.common : ''} (CPU, ${opt.threads} thread${opt.threads === 1 ? '' : 's'})`);
  console.log(`load        ${f(loadMs)} ms`);
  console.log(`first run   ${f(firstMs)} ms`);
  console.log(`runs        ${opt.runs}`);
  console.log(`median      ${f(median)} ms  (${(1000 / median).toFixed(1)} fps)`);
  console.log(`p90         ${f(pct(90))} ms`);
  console.log(`p99         ${f(pct(99))} ms`);
  console.log(`min         ${f(times[0])} ms`);
}

main().catch((e) => {
  process.stderr.write(`bench_ort: ${String(e.message || e).split('\n')[0]}\n`);
  process.exit(1);
});
