import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LOCAL_MODEL_REQUESTS_KEPT, startLocalStack } from '../local/stack.ts';
import { demoBrain } from '../local/scripted-model/demo-brain.ts';
import { apiClient } from '../test/support/api-client.ts';
import { createWriterSessions, runWriteRound, type WriteRoundReport } from '../test/support/concurrent-writers.ts';
import { makeTempDir } from '../test/support/temp-dir.ts';

const SESSIONS = 50;
const TURNS = 5;
const ROUNDS = 3;
/** RSS after the last round may exceed the first round's by at most this much. */
const RSS_TOLERANCE = 0.2;

/**
 * Soak: the local stack as `npm start` runs it (the scripted demo model runs each prompt's
 * command with Bash), 50 new sessions per round × 5 turns that each append a unique line to a
 * file, 3 rounds. After each round every file is read back through the workspace files API.
 * Prints runner errors, lost writes, wedged sessions and the process's memory after each round
 * (after a full GC, so it shows what is retained, not garbage not yet collected).
 * `npm run bench -- soak --heap-snapshots` also writes a heap snapshot after each round (to the working directory).
 */
export async function run(): Promise<void> {
  const heapSnapshots = process.argv.includes('--heap-snapshots');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const tmp = makeTempDir('stratus-soak-');
  // Configured as `npm start` runs it.
  const stack = await startLocalStack({ dataDir: tmp.dir, brain: demoBrain, keepModelRequests: LOCAL_MODEL_REQUESTS_KEPT });
  const api = apiClient(stack.apiUrl, stack.token);
  const rows: string[] = [];
  let firstRss = 0;
  let lastRoundRss = 0;
  let totals = { errors: 0, lost: 0, wedged: 0, failed: 0 };
  try {
    const idleRss = await settledMemory(gc);
    console.log(`RSS before the first round: ${mb(idleRss.rss)} MB (heap used ${mb(idleRss.heapUsed)} MB)`);
    console.log(
      '| round | turns | failed turns | error tool_results | lost writes | wedged sessions | seconds | RSS MB | heap used MB | external MB | array buffers MB | RSS vs round 1 |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (let round = 0; round < ROUNDS; round++) {
      const { report, seconds, memory } = await soakRound(api, round, gc, heapSnapshots);
      if (round === 0) firstRss = memory.rss;
      lastRoundRss = memory.rss;
      rows.push(...report.errorResults.slice(0, 5), ...report.lostWrites.slice(0, 5), ...report.failedTurns.slice(0, 5));
      totals = {
        errors: totals.errors + report.errorResults.length,
        lost: totals.lost + report.lostWrites.length,
        wedged: totals.wedged + report.wedged.length,
        failed: totals.failed + report.failedTurns.length,
      };
      console.log(roundRow(round, report, seconds, memory, firstRss));
    }
    for (const row of rows) console.log(`  ${row}`);
    const last = (await settledMemory(gc)).rss;
    const within = last <= firstRss * (1 + RSS_TOLERANCE) && lastRoundRss <= firstRss * (1 + RSS_TOLERANCE);
    console.log(
      `\nrunner/tool errors ${totals.errors}, failed turns ${totals.failed}, lost writes ${totals.lost}, wedged sessions ${totals.wedged}; ` +
        `RSS ${within ? 'within' : 'NOT within'} ${RSS_TOLERANCE * 100} % of round 1 (${mb(firstRss)} MB; after round ${ROUNDS} ${mb(lastRoundRss)} MB; at the end ${mb(last)} MB)`,
    );
  } finally {
    await stack.stop();
    tmp.cleanup();
  }
}

/** One round: new sessions, their write turns, then the memory once idle connections closed. */
async function soakRound(api: ReturnType<typeof apiClient>, round: number, gc: () => void, heapSnapshots: boolean) {
  const started = Date.now();
  const sessions = await createWriterSessions(api, SESSIONS);
  const report = await runWriteRound(api, sessions, { turns: TURNS, round });
  const seconds = (Date.now() - started) / 1000;
  // Longer than the servers' keep-alive timeout (5 s): idle pooled connections close and
  // their buffers go. (Otherwise, after the pause of a snapshot, a pooled connection the
  // server is closing would also be reused and reset.)
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  const memory = await settledMemory(gc);
  if (heapSnapshots) {
    console.log(`heap snapshot: ${writeHeapSnapshot(`soak-round-${round + 1}.heapsnapshot`)}`);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
  }
  return { report, seconds, memory };
}

const mb = (n: number) => Math.round(n / 1024 / 1024);

function roundRow(round: number, report: WriteRoundReport, seconds: number, memory: NodeJS.MemoryUsage, firstRss: number): string {
  const ratio = memory.rss / firstRss;
  const growth = round === 0 ? '-' : `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(0)} %`;
  return (
    `| ${round + 1} | ${report.turns} | ${report.failedTurns.length} | ${report.errorResults.length} | ${report.lostWrites.length} | ${report.wedged.length} | ` +
    `${seconds.toFixed(0)} | ${mb(memory.rss)} | ${mb(memory.heapUsed)} | ${mb(memory.external)} | ${mb(memory.arrayBuffers)} | ${growth} |`
  );
}

/** After full GCs, with time for V8 and the allocator to hand freed pages back (they do so lazily). */
async function settledMemory(gc: () => void): Promise<NodeJS.MemoryUsage> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return process.memoryUsage();
}
