import { performance } from 'node:perf_hooks';
import { loadSessionContext } from '../functions/context/session-context.ts';
import type { Deps } from '../functions/deps/deps.ts';
import type { StoredMessage } from '../functions/stores/message-store.ts';
import { startLocalStack } from '../local/stack.ts';
import { apiClient } from '../test/support/api-client.ts';
import { makeTempDir } from '../test/support/temp-dir.ts';

const SIZES = [100, 1_000, 5_000];
const RUNS = 5;
/** Messages from the compaction on in the "with boundary" variant: a summary, its boundary and a short tail. */
const TAIL = 20;

/**
 * Turn start-up: from `POST /turns` to the first byte of the request reaching the model (lease,
 * reload from the last boundary, replacement state, the budget pass, write-ahead of the prompt).
 * Sessions of 100 / 1,000 / 5,000 logged messages, with no boundary and with one near the end.
 * Runs against the local stack (dynalite + s3rver on loopback), so absolute figures are local ones.
 */
export async function run(): Promise<void> {
  const tmp = makeTempDir('stratus-bench-');
  let modelSawRequestAt = 0;
  const stack = await startLocalStack({
    dataDir: tmp.dir,
    brain: () => {
      modelSawRequestAt = performance.now();
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  });
  try {
    const api = apiClient(stack.apiUrl, stack.token);
    console.log('| messages | boundary | items reloaded | reload (ms, median) | start-up to model (ms, median) | p90 |');
    console.log('|---:|:---:|---:|---:|---:|---:|');
    for (const size of SIZES) {
      for (const boundary of [false, true]) {
        const sessionId = await api.createSession();
        await seed(stack.deps, sessionId, size, boundary);
        const reloads: number[] = [];
        const startups: number[] = [];
        let items = 0;
        for (let i = 0; i < RUNS; i++) {
          const session = (await stack.deps.sessions.get(sessionId))!;
          const t0 = performance.now();
          items = (await loadSessionContext(stack.deps, session)).itemsRead;
          reloads.push(performance.now() - t0);
          const t1 = performance.now();
          const res = await api.turn(sessionId, `bench turn ${i}`);
          if (res.status !== 200 || res.json.stopReason !== 'end_turn') throw new Error(`bench turn failed: ${res.text}`);
          startups.push(modelSawRequestAt - t1);
        }
        console.log(
          `| ${size} | ${boundary ? 'yes' : 'no'} | ${items} | ${median(reloads).toFixed(1)} | ${median(startups).toFixed(1)} | ${p90(startups).toFixed(1)} |`,
        );
      }
    }
  } finally {
    await stack.stop();
    tmp.cleanup();
  }
}

/** A log shaped like real work: prompt, tool call, ~1 KB result, answer; optionally a boundary near the end. */
async function seed(deps: Deps, sessionId: string, size: number, withBoundary: boolean): Promise<void> {
  const base = { sessionId, turnId: 'turn_seed', createdAt: new Date().toISOString() };
  const items: StoredMessage[] = [];
  const boundaryAt = withBoundary ? size - TAIL : -1;
  // biome-ignore format: one seeded record a line, as a table of what the log holds
  for (let seq = 0; seq < size; seq++) {
    const uuid = `msg_seed_${seq}`;
    // A compaction as the harness writes one: the summary, then its boundary (commit record).
    if (seq === boundaryAt) {
      items.push({ ...base, seq, uuid, kind: 'compact_summary', role: 'user', compactionId: 'cmp_seed', content: [{ type: 'text', text: `Summary of the first ${boundaryAt} messages. ${'s'.repeat(2000)}` }] });
      continue;
    }
    if (seq === boundaryAt + 1) {
      items.push({
        ...base, seq, uuid, kind: 'compact_boundary', role: 'user', content: [], compactionId: 'cmp_seed',
        compact: { trigger: 'auto', preTokens: size * 300, messagesSummarized: boundaryAt, startSeq: boundaryAt, previousStartSeq: null },
      });
      continue;
    }
    const id = `toolu_seed_${Math.floor(seq / 4)}`;
    switch (seq % 4) {
      case 0:
        items.push({ ...base, seq, uuid, kind: 'prompt', role: 'user', content: [{ type: 'text', text: `Step ${seq}: look at the next file.` }] });
        break;
      case 1:
        items.push({ ...base, seq, uuid, kind: 'assistant', role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command: `cat src/file${seq}.ts` } }], model: 'm', stopReason: 'tool_use', usage: { inputTokens: 100, outputTokens: 20 } });
        break;
      case 2:
        items.push({ ...base, seq, uuid, kind: 'tool_result', role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: `line of output ${seq}\n`.repeat(50) }] });
        break;
      default:
        items.push({ ...base, seq, uuid, kind: 'assistant', role: 'assistant', content: [{ type: 'text', text: `Read file ${seq}; it looks fine.` }], model: 'm', stopReason: 'end_turn', usage: { inputTokens: 100, outputTokens: 20 } });
    }
  }
  // The log ends after an answer so the next prompt follows an assistant message.
  const last = items[items.length - 1]!;
  if (last.role !== 'assistant')
    items.push({
      ...base,
      seq: items.length,
      uuid: 'msg_seed_end',
      kind: 'assistant',
      role: 'assistant',
      content: [{ type: 'text', text: 'Done.' }],
      model: 'm',
      stopReason: 'end_turn',
    });
  for (let i = 0; i < items.length; i += 16) await Promise.all(items.slice(i, i + 16).map((m) => deps.messages.append(m)));
  await leaveIdle(deps, sessionId, items.length, withBoundary ? boundaryAt : undefined);
}

/** Ends the seeding as a turn would: the session idle, its message count and reload point set. */
async function leaveIdle(deps: Deps, sessionId: string, messageCount: number, reloadFromSeq: number | undefined): Promise<void> {
  const owner = `bench/${sessionId}`;
  const now = deps.clock();
  await deps.sessions.acquireLease(sessionId, { owner, turnId: 'turn_seed', expiresAt: now + 60_000 }, now);
  await deps.sessions.releaseLease(sessionId, owner, { status: 'idle', messageCount, ...(reloadFromSeq !== undefined ? { reloadFromSeq } : {}) });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function p90(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.9) - 1)]!;
}
