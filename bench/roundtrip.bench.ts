import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalStack, type LocalStack } from '../local/stack.ts';
import type { ScriptedBlock, ScriptedResponse } from '../local/scripted-model/script.ts';
import { tableNames } from '../functions/stores/tables.ts';
import { createParitySession } from '../scripts/parity-case.ts';
import { createPhaseRecorder, PHASES, type Phase } from './roundtrip-phases.ts';
import { measureFloor, type RoundTripFloor } from './roundtrip-floor.ts';
import { modelThinkMs } from './model-think.ts';
import { runClaudeCode } from '../scripts/reference-claude.ts';
import { startModelProcess, type Exchange, type ModelProcess } from './model-process-client.ts';

/** Tool calls per tool case (each in its own model response). Below the local per-turn model-call cap. */
const CALLS_PER_TOOL = 20;
/** The long session: Reads spread over turns of LONG_TURN_CALLS each (the reference runs them in one). */
const LONG_SESSION_CALLS = 300;
const LONG_TURN_CALLS = 25;
/** Fresh sessions whose first tool call is a Bash command (what every new API session and GitHub run pays once). */
const FIRST_BASH_SESSIONS = 8;

type Step = ScriptedBlock[];
interface ToolCase {
  name: string;
  /** Steps not measured (e.g. the Read an Edit needs first). */
  warmup: Step[];
  steps: Step[];
  /** Sessions the case runs in, each a fresh one running warmup and steps (default 1). */
  sessions?: number;
}

/**
 * `npm run bench -- roundtrip [--reference /path/to/claude]`: the harness's overhead per tool
 * round trip as the model server sees it — from the end of a streamed response that asks for
 * one tool call to the arrival of the next request carrying its result — through the full local
 * path (HTTP API → turn engine → Lambda Invoke → runner → isolation) with the real SDK against
 * the scripted model server, which runs in a process of its own for both harnesses
 * (model-process.ts). Prints median and p90 per tool and for a long session of Reads.
 * With a Claude Code binary (`--reference PATH` or `STRATUS_REFERENCE_CLAUDE`), the same cases
 * run through it in the same run (docs/tools.md, "Observing the reference") and the ratio is
 * printed per tool.
 */
export async function run(): Promise<void> {
  const reference = referenceBinary();
  const files = seedFiles();
  const cases = toolCases();
  const long = longSession();
  const { overheads: stratus, phases, floor } = await measureStratus(files, cases, long);
  const claude = reference ? await measureReference(reference, files, cases, long) : undefined;
  printTable(stratus, claude);
  printPhases(phases, stratus);
  printFloor(floor, claude);
  if (!reference) console.log('\n(No Claude Code binary given: pass `--reference PATH` or set STRATUS_REFERENCE_CLAUDE to print ratios.)');
}

function referenceBinary(): string | undefined {
  const flag = process.argv.indexOf('--reference');
  const candidate = flag >= 0 ? process.argv[flag + 1] : process.env.STRATUS_REFERENCE_CLAUDE;
  if (!candidate) return undefined;
  if (!existsSync(candidate)) throw new Error(`No Claude Code binary at ${candidate}.`);
  return candidate;
}

function seedFiles(): Record<string, string> {
  const files: Record<string, string> = { 'src/target.ts': 'export const counter = 0;\n' };
  for (let i = 0; i < 100; i++) files[`src/mod${i}.ts`] = `export function f${i}() {\n  return ${i};\n}\n`.repeat(20);
  return files;
}

let toolUseCounter = 0;
const call = (name: string, input: Record<string, unknown>): Step => [
  { type: 'tool_use', id: `toolu_rt${(toolUseCounter++).toString().padStart(6, '0')}`, name, input },
];
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

function toolCases(): ToolCase[] {
  return [
    { name: 'Read', warmup: [], steps: range(CALLS_PER_TOOL).map((i) => call('Read', { file_path: `/workspace/src/mod${i}.ts` })) },
    { name: 'Write', warmup: [], steps: range(CALLS_PER_TOOL).map((i) => call('Write', { file_path: `/workspace/out/w${i}.txt`, content: `line ${i}\n` })) },
    {
      name: 'Edit',
      warmup: [call('Read', { file_path: '/workspace/src/target.ts' })],
      steps: range(CALLS_PER_TOOL).map((i) =>
        call('Edit', { file_path: '/workspace/src/target.ts', old_string: `counter = ${i};`, new_string: `counter = ${i + 1};` }),
      ),
    },
    { name: 'Glob', warmup: [], steps: range(CALLS_PER_TOOL).map((i) => call('Glob', { pattern: `src/mod${i}*.ts` })) },
    { name: 'Grep', warmup: [], steps: range(CALLS_PER_TOOL).map((i) => call('Grep', { pattern: `return ${i};`, path: '/workspace/src' })) },
    { name: 'Bash', warmup: [], steps: range(CALLS_PER_TOOL).map((i) => call('Bash', { command: `echo round ${i}`, description: 'Echo a line' })) },
    { name: 'first Bash', warmup: [], steps: [call('Bash', { command: 'echo first', description: 'Echo a line' })], sessions: FIRST_BASH_SESSIONS },
  ];
}

function longSession(): Step[] {
  return range(LONG_SESSION_CALLS).map((i) => call('Read', { file_path: `/workspace/src/mod${i % 100}.ts`, offset: 1 + (i % 50), limit: 10 }));
}

/** Overheads in ms, per case name ("long" for the long session), in call order. */
type Overheads = Record<string, number[]>;

/**
 * Watches the scripted model server's main-loop exchanges (requests that carry the tools; side
 * requests such as titles do not): the overhead of step k is the arrival of main request k+1
 * minus the end of response k.
 */
function exchangeRecorder() {
  let lastEnd: number | undefined;
  let gaps: number[] = [];
  let windows: [number, number][] = [];
  return {
    onExchange({ main, receivedAt, respondedAt }: Exchange) {
      if (!main) return;
      if (lastEnd !== undefined) {
        gaps.push(receivedAt - lastEnd);
        windows.push([lastEnd, receivedAt]);
      }
      lastEnd = respondedAt;
    },
    /** The gaps since the last take, and a fresh start (the next request begins a new turn). */
    take(): number[] {
      const out = gaps;
      gaps = [];
      lastEnd = undefined;
      return out;
    },
    /** The windows (start, end) of the gaps since the last take. */
    takeWindows(): [number, number][] {
      const out = windows;
      windows = [];
      return out;
    },
  };
}

/** Per case, one breakdown per measured round trip. */
type Breakdowns = Record<string, Record<Phase, number>[]>;

const done: ScriptedResponse = { content: [{ type: 'text', text: 'Done.' }] };

async function measureStratus(
  files: Record<string, string>,
  cases: ToolCase[],
  long: Step[],
): Promise<{ overheads: Overheads; phases: Breakdowns; floor: RoundTripFloor }> {
  const recorder = exchangeRecorder();
  const phases = createPhaseRecorder(tableNames('stratus'));
  const breakdowns: Breakdowns = {};
  const model = await startModelProcess(recorder.onExchange);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'stratus-bench-roundtrip-'));
  const stack = await startLocalStack({
    dataDir,
    anthropic: { apiKey: 'roundtrip-bench', baseURL: model.url },
    logLevel: 'error',
    tracing: phases.tracing,
    writeMetrics: phases.writeMetrics,
  });
  const turn = turnRunner(model, stack, recorder, phases);
  try {
    const out: Overheads = {};
    for (const kase of cases) {
      out[kase.name] = [];
      breakdowns[kase.name] = [];
      for (let s = 0; s < (kase.sessions ?? 1); s++) {
        const sessionId = await createParitySession(stack, files);
        // The measured steps follow the warm-up steps in the same turn; their gaps come last.
        const { gaps, split } = await turn(sessionId, [...kase.warmup, ...kase.steps]);
        out[kase.name]!.push(...gaps.slice(kase.warmup.length, kase.warmup.length + kase.steps.length));
        breakdowns[kase.name]!.push(...split.slice(kase.warmup.length, kase.warmup.length + kase.steps.length));
      }
    }
    const sessionId = await createParitySession(stack, files);
    out.long = [];
    breakdowns.long = [];
    for (let i = 0; i < long.length; i += LONG_TURN_CALLS) {
      const { gaps, split } = await turn(sessionId, long.slice(i, i + LONG_TURN_CALLS));
      out.long.push(...gaps);
      breakdowns.long.push(...split);
    }
    return { overheads: out, phases: breakdowns, floor: await measureFloor(stack, await model.lastMainRequest()) };
  } finally {
    await stack.stop();
    await model.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One measured turn: the model scripted with the steps, the turn run, its gaps and their phases taken. */
function turnRunner(model: ModelProcess, stack: LocalStack, recorder: ReturnType<typeof exchangeRecorder>, phases: ReturnType<typeof createPhaseRecorder>) {
  return async (sessionId: string, steps: Step[]) => {
    await model.enqueue([...steps.map((content): ScriptedResponse => ({ content })), done]);
    const res = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Run the round-trip case.' }),
    });
    if (res.status !== 200) throw new Error(`The turn failed: ${res.status} ${await res.text()}`);
    await res.text();
    // Every exchange of the turn has reached the recorder once this answers.
    await model.lastMainRequest();
    const windows = recorder.takeWindows();
    const split = windows.map(([start, end]) => phases.breakdown(start, end));
    phases.clear();
    return { gaps: recorder.take(), split };
  };
}

async function measureReference(claude: string, files: Record<string, string>, cases: ToolCase[], long: Step[]): Promise<Overheads> {
  const out: Overheads = {};
  for (const kase of cases) {
    out[kase.name] = [];
    for (let s = 0; s < (kase.sessions ?? 1); s++) {
      const gaps = await runReference(claude, files, [...kase.warmup, ...kase.steps]);
      out[kase.name]!.push(...gaps.slice(kase.warmup.length, kase.warmup.length + kase.steps.length));
    }
  }
  out.long = await runReference(claude, files, long);
  return out;
}

/** One `claude -p` run in a temp dir standing in for /workspace, answered by the steps in order. */
async function runReference(claude: string, files: Record<string, string>, steps: Step[]): Promise<number[]> {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'roundtrip-ref-ws-')));
  const home = mkdtempSync(path.join(tmpdir(), 'roundtrip-ref-home-'));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  const swapped = JSON.parse(JSON.stringify(steps).split('/workspace').join(dir)) as Step[];
  const recorder = exchangeRecorder();
  const model = await startModelProcess(recorder.onExchange);
  try {
    await model.enqueue(swapped.map((content) => ({ content })));
    await runClaudeCode(claude, { cwd: dir, home, modelUrl: model.url, prompt: 'Run the round-trip case.' });
    await model.lastMainRequest();
    return recorder.take();
  } finally {
    await model.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function printTable(stratus: Overheads, reference: Overheads | undefined): void {
  const ms = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));
  console.log(
    `overhead per tool round trip (ms; end of a response → next request), ${CALLS_PER_TOOL} calls per tool, first Bash: one call in each of ${FIRST_BASH_SESSIONS} fresh sessions, long session ${LONG_SESSION_CALLS} Reads, the model's time to first token ${modelThinkMs()} ms (STRATUS_BENCH_MODEL_THINK_MS)`,
  );
  console.log('| case | calls | Stratus median | Stratus p90 | Claude Code median | Claude Code p90 | ratio (median) |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  const rows: [string, number[]][] = Object.entries(stratus);
  const long = stratus.long ?? [];
  rows.push(['long: first 50', long.slice(0, 50)], ['long: last 50', long.slice(-50)]);
  const referenceFor = (name: string): number[] => {
    const refLong = reference?.long ?? [];
    if (name === 'long: first 50') return refLong.slice(0, 50);
    if (name === 'long: last 50') return refLong.slice(-50);
    return reference?.[name] ?? [];
  };
  for (const [name, values] of rows) {
    const ref = referenceFor(name);
    const ratio = ref.length ? quantile(values, 0.5) / quantile(ref, 0.5) : Number.NaN;
    console.log(
      `| ${name} | ${values.length} | ${ms(quantile(values, 0.5))} | ${ms(quantile(values, 0.9))} | ${ms(quantile(ref, 0.5))} | ${ms(quantile(ref, 0.9))} | ${Number.isNaN(ratio) ? '-' : ratio.toFixed(2)} |`,
    );
  }
}

/** Median ms of each phase per case (phases overlap, so medians need not add up to the round trip). */
function printPhases(phases: Breakdowns, overheads: Overheads): void {
  const names = Object.keys(phases);
  console.log('\nStratus round trip by phase (median ms of the window each phase covered; they overlap, e.g. event writes beside the tool)');
  console.log(`| phase | ${names.join(' | ')} |`);
  console.log(`|---|${names.map(() => '---:').join('|')}|`);
  const row = (label: string, values: (name: string) => number[]) =>
    console.log(`| ${label} | ${names.map((n) => quantile(values(n), 0.5).toFixed(1)).join(' | ')} |`);
  row('round trip', (n) => overheads[n] ?? []);
  for (const phase of PHASES) row(phase, (n) => phases[n]!.map((b) => b[phase]));
}

/** The floor of each case next to half the reference's median (the target): below the floor, no harness work can reach it. */
function printFloor(floor: RoundTripFloor, reference: Overheads | undefined): void {
  const ms = (n: number) => n.toFixed(1);
  console.log(
    `\nThe floor (bench/roundtrip-floor.ts; medians, each part alone): message put ${ms(floor.messagePut)} + Lambda Invoke of a no-op ${ms(floor.invoke)} + ` +
      `model request to its arrival ${ms(floor.modelSend)} ms; for Write and Edit + a create-only S3 PUT ${ms(floor.versionPut)} ms; for Bash + the hardened sandbox running \`true\` ${ms(floor.sandboxHandover)} ms when started ahead (${ms(floor.sandboxStart)} ms started for it)`,
  );
  if (!reference) return;
  console.log('| case | floor | 0.5 × Claude Code median | floor within it |');
  console.log('|---|---:|---:|---|');
  const base = floor.messagePut + floor.invoke + floor.modelSend;
  for (const [name, values] of Object.entries(reference)) {
    const target = quantile(values, 0.5) / 2;
    const least = base + (name.endsWith('Bash') ? floor.sandboxHandover : name === 'Write' || name === 'Edit' ? floor.versionPut : 0);
    console.log(`| ${name} | ${ms(least)} | ${ms(target)} | ${least <= target ? 'yes' : 'no'} |`);
  }
}
