import { z } from 'zod';
import type { LocalStack } from '../local/stack.ts';
import type { ScriptedBlock } from '../local/scripted-model/script.ts';
import { permissionModeSchema, ruleListsSchema } from '../functions/permissions/types.ts';

/**
 * A parity case: seed files, then one model response per step. Paths in inputs are under
 * /workspace. `filesAfter` names files (relative) whose exact bytes are printed after the turn.
 */
export const parityCaseSchema = z.object({
  files: z.record(z.string(), z.union([z.string(), z.object({ base64: z.string() })])).default({}),
  filesAfter: z.array(z.string()).default([]),
  /** Runs the demo MCP server (local/mcp-demo-server.ts) as the session's server "tracker". */
  mcpServer: z.boolean().default(false),
  /** Offers WebSearch on the Stratus side (the operator's `STRATUS_WEB_SEARCH=on`); the reference always offers it. */
  webSearch: z.boolean().default(false),
  /**
   * Permission rules the run starts with. Stratus gets them as the session's rules in an
   * unattended session (nobody can answer an ask, as in the reference's print mode); the
   * reference reads them from a settings file and runs without skipping permission checks.
   */
  permissions: ruleListsSchema.optional(),
  /** The permission mode for both (the reference's `--permission-mode`); `default` when absent. */
  permissionMode: permissionModeSchema.optional(),
  /** The reference offers SendMessage only with agent teams on (`CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS`); Stratus always has it. */
  agentTeams: z.boolean().default(false),
  /** Also prints the text blocks that follow the tool_results in a message (what a tool adds after its result: a loaded skill). */
  texts: z.boolean().default(false),
  steps: z.array(
    z.array(
      z.union([
        z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()) }),
        z.object({ type: z.literal('text'), text: z.string() }),
      ]),
    ),
  ),
});

export type ParityCase = z.input<typeof parityCaseSchema>;
export type ParityCaseOutput = z.output<typeof parityCaseSchema>;
export type ParityStep = ParityCase['steps'][number];

export interface ParityLine {
  id: string;
  is_error: boolean;
  content: unknown;
}

/** A text block that followed the tool_result `after` in the same user message. */
export interface ParityTextLine {
  after: string;
  text: string;
}

type RequestMessage = { role: string; content: string | ReadonlyArray<{ type: string; [key: string]: unknown }> };

/**
 * The lines a request's messages give: each tool_result (those `ids` names, when given) and,
 * with `texts`, each text block after a tool_result in the same message.
 */
export function resultLines(messages: readonly RequestMessage[], opts: { ids?: ReadonlySet<string>; texts: boolean }): Array<ParityLine | ParityTextLine> {
  const lines: Array<ParityLine | ParityTextLine> = [];
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    let after: string | undefined;
    for (const block of message.content) {
      if (block.type === 'tool_result') {
        const id = block.tool_use_id as string;
        if (opts.ids && !opts.ids.has(id)) continue;
        after = id;
        lines.push({ id, is_error: block.is_error === true, content: block.content });
      } else if (opts.texts && after !== undefined && block.type === 'text') lines.push({ after, text: block.text as string });
    }
  }
  return lines;
}

/** A file's bytes after the turn: text when they are UTF-8 (so diffs read well), else base64; null when absent. */
export interface ParityFileLine {
  file: string;
  content: string | { base64: string } | null;
}

export function parityFileLine(file: string, bytes: Buffer | undefined): ParityFileLine {
  if (!bytes) return { file, content: null };
  const text = bytes.toString('utf8');
  return { file, content: Buffer.from(text, 'utf8').equals(bytes) ? text : { base64: bytes.toString('base64') } };
}

/** A workspace file's exact bytes through the API's download route; undefined when it does not exist. */
export async function readParityFile(stack: LocalStack, sessionId: string, rel: string): Promise<Buffer | undefined> {
  const url = `${stack.apiUrl}/v1/sessions/${sessionId}/workspace/files/${rel.split('/').map(encodeURIComponent).join('/')}`;
  const res = await fetch(url, { headers: { authorization: `Bearer ${stack.token}` } });
  if (res.status === 404) return undefined;
  // The download route answers a missing file with 400 "No file … in the workspace.".
  if (
    res.status === 400 &&
    /^No file /.test(
      (
        (await res
          .clone()
          .json()
          .catch(() => ({}))) as { error?: { message?: string } }
      ).error?.message ?? '',
    )
  )
    return undefined;
  if (res.status !== 200) throw new Error(`Could not download ${rel}: ${res.status} ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

/** Creates a session seeded with the case's files; returns its id. */
export async function createParitySession(stack: LocalStack, files: ParityCase['files'] = {}, settings?: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${stack.apiUrl}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ files, ...(settings ? { settings } : {}) }),
  });
  if (res.status !== 201) throw new Error(`Could not create a session: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/**
 * Runs one turn whose model answers are the given steps (then a closing text), through the real
 * API, turn engine and runner; returns this turn's tool_results in the order the model was sent them.
 */
export async function runParityTurn(stack: LocalStack, sessionId: string, steps: ParityStep[]): Promise<ParityLine[]> {
  return (await parityTurnLines(stack, sessionId, steps, false)).filter((line): line is ParityLine => 'id' in line);
}

/** The same, with the text blocks that follow the results when `texts` is set (a case's `texts`). */
export async function parityTurnLines(stack: LocalStack, sessionId: string, steps: ParityStep[], texts: boolean): Promise<Array<ParityLine | ParityTextLine>> {
  const model = stack.model;
  if (!model) throw new Error('Parity runs need the scripted model server.');
  const before = model.requests.length;
  model.enqueue(...steps.map((content) => ({ content: content as ScriptedBlock[] })), { content: [{ type: 'text', text: 'Done.' }] });
  const res = await fetch(`${stack.apiUrl}/v1/sessions/${sessionId}/turns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Run the parity case.' }),
  });
  if (res.status !== 200) throw new Error(`The turn failed: ${res.status} ${await res.text()}`);
  const requests = model.requests.slice(before);
  const last = requests.at(-1);
  if (!last) return [];
  // Only this turn's results: the ones answering tool_use ids this turn's steps asked for.
  const ids = new Set(steps.flatMap((s) => s.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))));
  return resultLines(last.body.messages as RequestMessage[], { ids, texts });
}
