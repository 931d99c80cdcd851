import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface StackProcess {
  child: ChildProcess;
  apiUrl: string;
  token: string;
  modelUrl: string;
  /** Queues responses on the process's scripted model server (its `/_script` endpoint). */
  script(responses: unknown[]): Promise<void>;
  /** The model requests the scripted server has received, oldest first (its `/_requests` endpoint). */
  modelRequests<T = { messages: { role: string; content: unknown }[] }>(): Promise<T[]>;
  /** What the process printed so far, each stream apart. */
  printed(): { stdout: string; stderr: string };
  /** SIGKILL the whole process group: no cleanup, no graceful shutdown. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Runs `local/start.ts` (what `npm start` runs) as a separate process (on ephemeral ports unless `env` sets them), so a
 * test can kill it for real and start another on the same data folder.
 */
export async function startStackProcess(dataDir: string, env: Record<string, string> = {}): Promise<StackProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '0', STRATUS_LOG_LEVEL: 'warn', ...env, STRATUS_DATA_DIR: dataDir, ANTHROPIC_API_KEY: '' },
  });
  let out = '';
  const printed = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), (printed.stdout += d.toString())));
  child.stderr!.on('data', (d: Buffer) => ((out += d.toString()), (printed.stderr += d.toString())));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Generous: on a loaded 2-core machine the start (tsx transform + stand-ins) takes 20 s and more.
  const deadline = Date.now() + 90_000;
  // The banner is written in several lines that may arrive in separate chunks: wait for its last one.
  while (!/\nTry:/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      // Never leave a half-started stack behind: it holds ports and data folders.
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      throw new Error(`stack process did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const apiUrl = /Stratus is running at (\S+)/.exec(out)![1]!;
  const token = /API token:\s+(\S+)/.exec(out)![1]!;
  const modelUrl = /!!! at (http:\/\/[\d.]+:\d+)/.exec(out)![1]!;
  const signal = async (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
    await exited;
  };
  const script = async (responses: unknown[]) => {
    const res = await fetch(`${modelUrl}/_script`, { method: 'POST', body: JSON.stringify(responses) });
    if (res.status !== 200) throw new Error(`scripting the model failed: ${res.status} ${await res.text()}`);
  };
  const modelRequests = async <T>() => (await (await fetch(`${modelUrl}/_requests`)).json()) as T[];
  return {
    child,
    apiUrl,
    token,
    modelUrl,
    script,
    modelRequests,
    printed: () => ({ ...printed }),
    kill: () => signal('SIGKILL'),
    stop: () => signal('SIGTERM'),
  };
}
