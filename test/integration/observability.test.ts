import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import type { ScriptedResponse } from '../../local/scripted-model/script.ts';
import { unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

type Line = Record<string, unknown> & { _aws?: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] } };

/** The JSON lines `npm start` printed (startup banners and other text skipped). */
function jsonLines(output: string): Line[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Line];
    } catch {
      return [];
    }
  });
}

const metricNames = (doc: Line) => doc._aws!.CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => x.Name));

describe('logs and metrics of the local stack (Powertools)', () => {
  const tmp = makeTempDir();
  let stack: LocalStack | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await stack?.stop();
    stack = undefined;
    tmp.cleanup();
  });

  it.each(['debug', 'info', 'warn', 'error'] as const)(
    'writes EMF metrics with the stage dimension to the data folder at log level %s, never to stdout, to stderr only at debug',
    { timeout: 30_000 },
    async (level) => {
      // What the process prints, stdout and stderr apart, line by line.
      const out = { stdout: '', stderr: '' };
      const capture = (into: keyof typeof out) => (chunk: unknown) => {
        out[into] += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
        return true;
      };
      vi.spyOn(process.stdout, 'write').mockImplementation(capture('stdout'));
      vi.spyOn(process.stderr, 'write').mockImplementation(capture('stderr'));
      const dataDir = `${tmp.dir}/${level}`;
      const metricsFile = () => (existsSync(`${dataDir}/metrics.jsonl`) ? readFileSync(`${dataDir}/metrics.jsonl`, 'utf8') : '');
      stack = await startLocalStack({ dataDir, brain: unscripted, logLevel: level, observability: { stage: 'itest' } });
      const api = apiClient(stack.apiUrl, stack.token);
      const sessionId = await api.createSession();
      const script: ScriptedResponse[] = [
        // A tool that does not exist: a failed tool call the model sees, with no runner involved.
        {
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'toolu_nope', name: 'Nope', input: {} },
          ],
        },
        { content: [{ type: 'text', text: 'No such tool.' }] },
      ];
      stack.model!.enqueue(...script);
      expect((await api.turn(sessionId, 'look around')).json).toMatchObject({ stopReason: 'end_turn' });

      // The turn's metrics are written once it has ended; wait for them.
      const deadline = Date.now() + 10_000;
      while (!jsonLines(metricsFile()).some((l) => l._aws && metricNames(l).includes('Turns')) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const documents = jsonLines(metricsFile()).filter((l) => l._aws);
      // Locally stdout is for what tools print: no metric line there, at any level.
      expect(out.stdout).not.toContain('"_aws"');
      expect(jsonLines(out.stderr).filter((l) => l._aws).length).toBe(level === 'debug' ? documents.length : 0);
      const lines = jsonLines(out.stdout + out.stderr);
      const turn = documents.find((d) => metricNames(d).includes('Turns'));
      expect(turn).toMatchObject({ stage: 'itest', service: 'stratus-local', sessionId, Turns: 1, ModelCalls: 2 });
      expect(turn!._aws!.CloudWatchMetrics).toEqual([expect.objectContaining({ Namespace: 'Stratus', Dimensions: [['service', 'stage']] })]);
      const tool = documents.find((d) => metricNames(d).includes('ToolCalls'));
      expect(tool).toMatchObject({ stage: 'itest', tool: 'Nope', ToolCalls: 1, ToolFailures: 1 });
      expect(tool!._aws!.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'stage', 'tool']]);
      expect(documents.filter((d) => metricNames(d).includes('ModelCallDuration'))).toHaveLength(2);
      // Every document carries the stage, whatever the log level.
      expect(documents.every((d) => d.stage === 'itest' && d._aws!.CloudWatchMetrics.every((m) => m.Dimensions.every((dims) => dims.includes('stage'))))).toBe(
        true,
      );

      // Log lines follow the level; the turn's last line ("turn ended") is at info.
      const logs = lines.filter((l) => !l._aws && typeof l.level === 'string');
      const ended = logs.find((l) => l.message === 'turn ended');
      if (level === 'debug' || level === 'info') {
        expect(ended).toMatchObject({ level: 'INFO', service: 'stratus-local', stage: 'itest', sessionId, tenantId: 'local' });
        expect(typeof ended!.turnId).toBe('string');
        // The access log: one line per request, with its tenant once auth has run.
        const requests = logs.filter((l) => l.message === 'request');
        expect(requests).toContainEqual(
          expect.objectContaining({ method: 'POST', path: '/v1/sessions', status: 201, tenantId: 'local', ms: expect.any(Number) }),
        );
        expect(requests).toContainEqual(expect.objectContaining({ method: 'POST', path: `/v1/sessions/${sessionId}/turns`, status: 200, tenantId: 'local' }));
      } else {
        expect(ended).toBeUndefined();
        expect(logs.some((l) => l.message === 'request')).toBe(false);
      }
      const order = ['DEBUG', 'INFO', 'WARN', 'ERROR'];
      expect(logs.every((l) => order.indexOf(String(l.level)) >= order.indexOf(level.toUpperCase()))).toBe(true);
    },
  );
});
