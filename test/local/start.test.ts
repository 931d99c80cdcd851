import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { SCRIPTED_MODEL_NAME } from '../../functions/model/model-names.ts';
import { apiClient } from '../support/api-client.ts';
import { startStackProcess, type StackProcess } from '../support/stack-process.ts';
import { makeTempDir } from '../support/temp-dir.ts';

/** A port nothing listens on right now (the system's pick, released again). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `npm start` (local/start.ts) as a new user runs it: its ports, its banner, the scripted model's price. */
describe('npm start', () => {
  const tmp = makeTempDir();
  let running: StackProcess | undefined;
  afterAll(async () => {
    await running?.stop();
    tmp.cleanup();
  });

  it('puts every part on the port its setting names, prints each port, prices the scripted model at 0 and keeps metrics off stdout', {
    timeout: 120_000,
  }, async () => {
    const [api, dynamodb, s3, lambda, model] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    running = await startStackProcess(tmp.dir, {
      PORT: String(api),
      STRATUS_DYNAMODB_PORT: String(dynamodb),
      STRATUS_S3_PORT: String(s3),
      STRATUS_LAMBDA_PORT: String(lambda),
      STRATUS_MODEL_PORT: String(model),
      // The level at which logs go to stdout: metrics still must not.
      STRATUS_LOG_LEVEL: 'info',
    });
    expect(running.apiUrl).toBe(`http://127.0.0.1:${api}`);
    expect(running.modelUrl).toBe(`http://127.0.0.1:${model}`);
    const { stdout } = running.printed();
    for (const [port, variable] of [
      [api, 'PORT'],
      [dynamodb, 'STRATUS_DYNAMODB_PORT'],
      [s3, 'STRATUS_S3_PORT'],
      [lambda, 'STRATUS_LAMBDA_PORT'],
      [model, 'STRATUS_MODEL_PORT'],
    ] as const) {
      expect(stdout).toMatch(new RegExp(`http://127\\.0\\.0\\.1:${port}\\s+\\(${variable}\\)`));
    }

    const client = apiClient(running.apiUrl, running.token);
    const sessionId = await client.createSession();
    const turn = await client.turn(sessionId, 'please run `echo hi`');
    expect(turn.json.stopReason).toBe('end_turn');
    expect(turn.json.usage.costUsd).toBe(0);
    const assistants = (await client.messages(sessionId)).filter((m) => m.kind === 'assistant');
    expect(assistants.map((m) => m.usage.costUsd)).toEqual(assistants.map(() => 0));
    expect(new Set((await running.modelRequests<{ model: string }>()).map((r) => r.model))).toEqual(new Set([SCRIPTED_MODEL_NAME]));
    expect((await client.request('GET', `/v1/sessions/${sessionId}`)).json.usage.costUsd).toBe(0);

    // The turn's metric documents went to the data folder, none to stdout.
    const deadline = Date.now() + 10_000;
    const metricLines = () =>
      readFileSync(`${tmp.dir}/metrics.jsonl`, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"Turns"'));
    while (metricLines().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(metricLines()).toHaveLength(1);
    expect(running.printed().stdout).toContain('"message":"turn ended"');
    expect(running.printed().stdout).not.toContain('"_aws"');
  });

  it('refuses a port that is not one, or one port for two parts, naming the variables', { timeout: 60_000 }, () => {
    const start = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: '', STRATUS_DATA_DIR: tmp.dir, ...env },
      });
    const notAPort = start({ STRATUS_S3_PORT: '70000' });
    expect(notAPort.status).toBe(2);
    expect(notAPort.stderr).toContain('STRATUS_S3_PORT: expected a port number from 0 to 65535 (0 = any free port), got "70000".');
    const twice = start({ PORT: '9999', STRATUS_MODEL_PORT: '9999' });
    expect(twice.status).toBe(2);
    expect(twice.stderr).toContain('PORT and STRATUS_MODEL_PORT: both ask for port 9999; give each part its own port (or 0 for any free one).');
  });
});
