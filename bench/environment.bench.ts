import { environmentLayerKey } from '../sandbox-runner/common/environment-layer-key.ts';
import { LOCAL_S3_CREDENTIALS, type startS3Server } from '../local/s3-server.ts';
import { BENCH_BUCKET, startBenchRunners } from './bench-runners.ts';
import type { RunnerOp, RunnerSuccess } from '../sandbox-runner/protocol.ts';
import type { Runner } from '../sandbox-runner/runner.ts';

const BUCKET = BENCH_BUCKET;
const PACKAGES = 400;
const FILES_PER_PACKAGE = 50;
const FILE_BYTES = 1_024;
const RESTORES = 3;

/**
 * The set-up's "install", generated offline: 400 packages of 50 files of 1 KiB under
 * node_modules (20,000 files, 20 MB), written by node inside the sandbox as `npm ci` would
 * unpack them from its registry.
 */
const INSTALL = `node -e '
const fs = require("fs");
const body = "x".repeat(${FILE_BYTES - 1}) + "\\n";
for (let p = 0; p < ${PACKAGES}; p++) {
  const dir = "node_modules/pkg" + p + "/lib";
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync("node_modules/pkg" + p + "/package.json", JSON.stringify({ name: "pkg" + p, main: "lib/f0.js" }));
  for (let f = 0; f < ${FILES_PER_PACKAGE - 1}; f++) fs.writeFileSync(dir + "/f" + f + ".js", f === 0 ? "module.exports = " + p + ";\\n" : body);
}'`;
/** The first command after the set-up: what a test run does first, loading a dependency. */
const FIRST_COMMAND = `node -e 'console.log(require("pkg399"))'`;

/**
 * `npm run bench -- environment`: a cold set-up (the install, the publish that leaves the
 * dependencies out of the workspace, the save of the layer), a cached restore in a fresh runner
 * (the workspace from its snapshot plus the layer in one GET), and the first command after each,
 * for 20,000 files of dependencies, through the real local S3 server and hardened bwrap. For
 * comparison, the same install as workspace content (a session without an environment).
 */
export async function run(): Promise<void> {
  const runners = await startBenchRunners('stratus-bench-env-');
  const { dir, s3, runner } = runners;
  const key = environmentLayerKey('bench', { owner: 'bench', name: 'app' }, 'e'.repeat(64));
  const call = async (r: Runner, id: string, version: number, op: RunnerOp, withLayer = true): Promise<RunnerSuccess> => {
    const res = await r({
      sessionId: 'bench',
      workspace: { bucket: BUCKET, id, version, credentials: { ...LOCAL_S3_CREDENTIALS } },
      ...(withLayer ? { environment: { key, credentials: { ...LOCAL_S3_CREDENTIALS }, maxBytes: 2 * 1024 ** 3 } } : {}),
      op,
    });
    if (!res.ok) throw new Error(`${res.error.kind}: ${res.error.message}`);
    return res;
  };
  const bash = (command: string): RunnerOp => ({ type: 'bash', command, timeoutMs: 600_000 });
  const seed: RunnerOp = {
    type: 'create_workspace',
    files: { 'package.json': '{"name":"app"}', 'package-lock.json': '{"lockfileVersion":3}', 'index.js': 'require("pkg0");\n' },
  };
  try {
    const bench: EnvBench = { dir, s3, runner, call, bash, seed };
    const first = await coldSetup(bench);
    await cachedRestores(bench, first);
    await withoutLayer(bench);
  } finally {
    await runners.close();
  }
}

interface EnvBench {
  dir: string;
  s3: Awaited<ReturnType<typeof startS3Server>>;
  runner(name: string): Runner;
  call(r: Runner, id: string, version: number, op: RunnerOp, withLayer?: boolean): Promise<RunnerSuccess>;
  bash(command: string): RunnerOp;
  seed: RunnerOp;
}

async function coldSetup({ runner, call, bash, seed, s3 }: EnvBench): Promise<{ id: string; version: number }> {
  const r = runner('setup');
  const id = 'bench-env';
  const created = await call(r, id, 0, seed);
  await call(r, id, created.version, { type: 'environment_restore' });
  const [installMs, installed] = await timed(() => call(r, id, created.version, bash(INSTALL)));
  const bytesBefore = s3.traffic().bytesReceived;
  const [saveMs, saved] = await timed(() => call(r, id, installed.version, { type: 'environment_save' }));
  const result = saved.result as { saved: boolean; files?: number; bytes?: number; compressedBytes?: number };
  const [firstMs, first] = await timed(() => call(r, id, installed.version, bash(FIRST_COMMAND)));
  console.log(
    `  cold set-up: install ${installMs.toFixed(0)} ms (run ${installed.timings!.opMs.toFixed(0)} ms + publish ${installed.timings!.publishMs.toFixed(0)} ms; ${installed.changedFiles} workspace files changed) ` +
      `+ save ${saveMs.toFixed(0)} ms (${result.files} files, ${result.bytes} bytes → ${result.compressedBytes} bytes tar.gz, ${s3.traffic().bytesReceived - bytesBefore} bytes sent) = ${(installMs + saveMs).toFixed(0)} ms\n` +
      `  first command after the cold set-up: ${firstMs.toFixed(0)} ms (${(first.result as { output: string }).output.trim()})`,
  );
  return { id, version: installed.version };
}

async function cachedRestores({ runner, call, bash, s3 }: EnvBench, at: { id: string; version: number }): Promise<void> {
  const restores: number[] = [];
  const firsts: number[] = [];
  let requests = 0;
  for (let k = 0; k < RESTORES; k++) {
    const fresh = runner(`restore-${k}`);
    const before = s3.traffic().requests;
    const [ms, res] = await timed(() => call(fresh, at.id, at.version, { type: 'environment_restore' }));
    if ((res.result as { layer: { status: string } }).layer.status !== 'restored') throw new Error('the layer was not restored');
    requests = s3.traffic().requests - before;
    restores.push(ms);
    firsts.push((await timed(() => call(fresh, at.id, at.version, bash(FIRST_COMMAND))))[0]);
  }
  console.log(
    `  cached restore in a fresh runner (workspace cold from its snapshot + the layer in one GET): ${median(restores).toFixed(0)} ms (median of ${RESTORES}; ${requests} S3 requests)\n` +
      `  first command after the restore: ${median(firsts).toFixed(0)} ms (median of ${RESTORES})`,
  );
}

async function withoutLayer({ runner, call, bash, seed }: EnvBench): Promise<void> {
  const r = runner('plain');
  const id = 'bench-plain';
  const created = await call(r, id, 0, seed, false);
  const [installMs, installed] = await timed(() => call(r, id, created.version, bash(INSTALL), false));
  const [coldMs] = await timed(() => call(runner('plain-cold'), id, installed.version, { type: 'list_files' }, false));
  console.log(
    `  for comparison, the same install as workspace content: ${installMs.toFixed(0)} ms (publish ${installed.timings!.publishMs.toFixed(0)} ms, ${installed.changedFiles} files, ${installed.bytesUploaded} bytes uploaded); ` +
      `a fresh runner's cold start of that workspace: ${coldMs.toFixed(0)} ms`,
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const value = await fn();
  return [performance.now() - t, value];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
