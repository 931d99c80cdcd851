import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { LOCAL_S3_CREDENTIALS, type startS3Server } from '../local/s3-server.ts';
import { BENCH_BUCKET, startBenchRunners } from './bench-runners.ts';
import type { RunnerOp, RunnerSuccess } from '../sandbox-runner/protocol.ts';
import type { Runner } from '../sandbox-runner/runner.ts';

const BUCKET = BENCH_BUCKET;
const SIZES = [1_000, 10_000];
const FILE_BYTES = 1_024;

/**
 * Workspace sync figures for 1,000 and 10,000 files of 1 KiB (100 per directory), through the
 * real local S3 server: cold materialisation in a fresh "container", warm no-change Bash versus
 * plain `bash -c true`, and the bytes sent to S3 after editing one file.
 */
export async function run(): Promise<void> {
  const runners = await startBenchRunners('stratus-bench-ws-');
  const { dir, s3, runner } = runners;
  const call = async (r: Runner, id: string, version: number, op: RunnerOp): Promise<RunnerSuccess> => {
    const res = await r({ sessionId: 'bench', workspace: { bucket: BUCKET, id, version, credentials: { ...LOCAL_S3_CREDENTIALS } }, op });
    if (!res.ok) throw new Error(`${res.error.kind}: ${res.error.message}`);
    return res;
  };

  const plain = median(Array.from({ length: 15 }, () => time(() => spawnSync('bash', ['-c', 'true']))));
  console.log(`plain \`bash -c true\`: ${plain.toFixed(1)} ms (median of 15)`);
  try {
    for (const n of SIZES) await measureSize(n, { dir, s3, runner, call, plain });
  } finally {
    await runners.close();
  }
}

interface Bench {
  dir: string;
  s3: Awaited<ReturnType<typeof startS3Server>>;
  runner(name: string): Runner;
  call(r: Runner, id: string, version: number, op: RunnerOp): Promise<RunnerSuccess>;
  /** Plain `bash -c true`, ms. */
  plain: number;
}

async function measureSize(n: number, { dir, s3, runner, call, plain }: Bench): Promise<void> {
  const id = `bench-${n}`;
  const warm = runner(`warm-${n}`);
  const created = await call(warm, id, 0, { type: 'create_workspace', files: { 'README.md': 'bench\n' } });
  // Seeded by a command rather than in create_workspace's request: 10,000 files of 1 KiB are over
  // an invoke's 6 MB payload, and a command's files reach S3 the way an agent's would.
  const seeded = await call(warm, id, created.version, { type: 'bash', command: seedCommand(n), timeoutMs: 120_000 });
  const { version } = seeded;

  const colds: number[] = [];
  for (let k = 0; k < 3; k++) {
    const fresh = runner(`cold-${n}-${k}`);
    const before = s3.traffic().requests;
    const t = await timeAsync(() => call(fresh, id, version, { type: 'read', path: '/workspace/d0/f0.txt' }));
    colds.push(t);
    if (k === 0) console.log(`  [${n} files] cold materialisation: ${s3.traffic().requests - before} S3 requests`);
    rmSync(path.join(dir, `cold-${n}-${k}`), { recursive: true, force: true });
  }

  await call(warm, id, version, { type: 'bash', command: 'true', timeoutMs: 30_000 });
  const warmTimes: number[] = [];
  const before = s3.traffic();
  for (let k = 0; k < 10; k++) warmTimes.push(await timeAsync(() => call(warm, id, version, { type: 'bash', command: 'true', timeoutMs: 30_000 })));
  const after = s3.traffic();
  const warmMs = median(warmTimes);

  const bytesBefore = s3.traffic().bytesReceived;
  const edit = await call(warm, id, version, { type: 'bash', command: 'echo edited >> d3/f345.txt', timeoutMs: 30_000 });
  const sent = s3.traffic().bytesReceived - bytesBefore;

  console.log(
    `  [${n} files] cold materialisation: ${median(colds).toFixed(0)} ms (median of 3, fresh disk each)\n` +
      `  [${n} files] warm no-change Bash: ${warmMs.toFixed(1)} ms vs plain bash ${plain.toFixed(1)} ms → overhead ${(warmMs - plain).toFixed(1)} ms; ` +
      `S3 requests during 10 warm calls: ${after.requests - before.requests}\n` +
      `  [${n} files] edit one file (${FILE_BYTES + 7} bytes after edit): ${sent} bytes sent to S3 (runner reports ${edit.bytesUploaded}), version ${edit.version}`,
  );
}

/** Shell builtins only: `n` files of FILE_BYTES bytes, 100 per directory, each starting with its number. */
function seedCommand(n: number): string {
  return (
    `printf -v pad '%*s' ${FILE_BYTES - 1} ''; pad=\${pad// /.}; ` +
    `for ((i = 0; i < ${n}; i++)); do d=d$((i / 100)); [ -d $d ] || mkdir $d; printf '%s%s\\n' "$i" "\${pad:\${#i}}" > $d/f$i.txt; done`
  );
}

function time(fn: () => unknown): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
