import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../../sandbox-runner/isolation/bwrap-sandbox.ts';
import type { Sandbox, SandboxCommand, SandboxSpec } from '../../../sandbox-runner/isolation/sandbox.ts';
import { makeTempDir } from '../../support/temp-dir.ts';
import { bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

const MIB = 1024 * 1024;
/**
 * Prints `warm` in a sandbox that was started ahead (its bwrap's arguments hold the stub), `cold`
 * otherwise (they hold the command itself, hence the pattern that does not match its own text).
 */
const SERVED_WARM = `tr '\\0' ' ' </proc/1/cmdline | grep -q 'read -r -[N]' && echo warm || echo cold`;

/**
 * The pre-started sandbox (warm-bwrap.ts) against the real bwrap: a command served by one sees
 * exactly what a cold one sees, and nothing any earlier command left.
 */
describe('a sandbox started ahead', () => {
  const temp = makeTempDir('stratus-warm-');
  let sandbox: Sandbox;
  const workspaces: Record<string, SandboxSpec> = {};
  let outputs = 0;

  const workspace = (name: string, env: Record<string, string> = {}): SandboxSpec => {
    const spec = { workspaceDir: path.join(temp.dir, name, 'tree'), tmpDir: path.join(temp.dir, name, 'tmp'), env };
    mkdirSync(spec.workspaceDir, { recursive: true });
    mkdirSync(spec.tmpDir, { recursive: true });
    workspaces[name] = spec;
    return spec;
  };

  async function run(spec: SandboxSpec, command: string, opts: Partial<SandboxCommand> = {}) {
    const outputFile = opts.outputFile ?? path.join(temp.dir, `out-${++outputs}`);
    const outcome = await sandbox.run({ ...spec, command, cwd: '/workspace', timeoutMs: 10_000, outputFile, maxOutputBytes: MIB, warmAhead: true, ...opts });
    return { ...outcome, output: readFileSync(outputFile, 'utf8') };
  }

  beforeAll(() => {
    sandbox = createBwrapSandbox({ runtimeDir: path.join(temp.dir, 'runtime'), processLimits: { maxProcesses: 64, maxMemoryBytes: 128 * MIB } });
    workspace('a');
    workspace('b');
  });
  afterAll(async () => {
    await sandbox.discardWarm?.(temp.dir);
    temp.cleanup();
  });

  it('serves the next command from a sandbox that was waiting for it, used once', async () => {
    const a = workspaces.a!;
    await run(a, 'true');
    const waiting = await waitingSandbox(a.workspaceDir);
    // The sandbox's init still carries the stub on its command line: the command ran in that sandbox.
    expect((await run(a, SERVED_WARM)).output).toBe('warm\n');
    // That sandbox is gone with its command, and another one waits for the next.
    const next = await waitingSandbox(a.workspaceDir);
    expect(next).not.toBe(waiting);
    expect(processExists(waiting)).toBe(false);
  });

  it('gives a command the same shell, environment, identity and limits as a cold start', async () => {
    const a = workspaces.a!;
    const probe = [
      'echo "$0 $$ $PPID $SHLVL $- $BASH_SUBSHELL"',
      'env | sort',
      'pwd; cd sub && pwd -P',
      'ps -eo pid,ppid,comm --no-headers',
      'ls -l /proc/self/fd | tail -n +2 | cut -d" " -f 9-',
      'umask; id; ulimit -a',
      'grep -E "^(Cap|NoNewPrivs|Seccomp)" /proc/self/status',
      'ls -A /dev/shm /run; trap -p; shopt -p | md5sum; set -o | md5sum',
      'echo "line $LINENO"; nonexistent-command',
    ].join('\n');
    mkdirSync(path.join(a.workspaceDir, 'real'), { recursive: true });
    await run(a, 'ln -sfn real sub');
    const outputFile = path.join(temp.dir, 'probe-out');
    const cold = await run(a, probe, { warmAhead: false, outputFile, cwd: '/workspace' });
    await run(a, 'true');
    await waitingSandbox(a.workspaceDir);
    const warm = await run(a, probe, { outputFile, cwd: '/workspace' });
    // Pipes the probe itself makes have new inode numbers each run; nothing else may differ.
    const pipes = (s: string) => s.replace(/pipe:\[\d+\]/g, 'pipe:[]');
    expect(pipes(warm.output)).toBe(pipes(cold.output));
    expect(warm.output).toContain('/bin/bash 2 1 1 hBc 0\n');
    expect(warm.output).toContain('line 9\n/bin/bash: line 9: nonexistent-command: command not found\n');
    expect(warm.finalCwd).toBe('/workspace/real');
  });

  it('sees nothing of what the command before it left: processes, variables, cwd, /dev/shm, traps', async () => {
    const a = workspaces.a!;
    const first = await run(
      a,
      [
        'export LEFT=1; LEFT_SHELL=1; trap "echo trapped" USR1; cd /workspace/real',
        'echo x > /dev/shm/left; echo kept > /tmp/left; mkfifo /tmp/fifo-left',
        '(sleep 4343 &); setsid sleep 4344 & nohup sleep 4345 >/dev/null 2>&1 &',
        'echo done',
      ].join('\n'),
    );
    expect(first.output).toBe('done\n');
    expect(first.finalCwd).toBe('/workspace/real');
    expect(leftoverSleeps()).toEqual([]);
    await waitingSandbox(a.workspaceDir);
    const second = await run(a, 'echo "${LEFT-unset} ${LEFT_SHELL-unset}"; pwd; trap -p; ls -A /dev/shm; ps -eo comm --no-headers; cat /tmp/left');
    // /tmp is the workspace's own scratch directory, kept between commands by design (sandbox.ts):
    // its file is there as it would be for a cold command; nothing else is.
    expect(second.output).toBe(`unset unset\n/workspace\ntrap -- 'pwd -P >| /tmp/.stratus-cwd 2>/dev/null' EXIT\nbwrap\nbash\nps\nkept\n`);
  });

  it('never serves another workspace, and a changed variable or allow-list gets a fresh one', async () => {
    const a = workspaces.a!;
    const b = workspaces.b!;
    await run(a, 'true');
    const aWaiting = await waitingSandbox(a.workspaceDir);
    expect((await run(b, 'echo b > /workspace/whose; cat /workspace/whose; ls /workspace')).output).toBe('b\nwhose\n');
    expect(processExists(aWaiting)).toBe(true);
    // A's sandbox still waits for A, untouched by B's command.
    expect((await run(a, `ls /workspace; ${SERVED_WARM}`)).output).toBe('real\nsub\nwarm\n');
    expect(processExists(aWaiting)).toBe(false);

    const withVar = { ...a, env: { STAGE: 'one' } };
    await run(withVar, 'true');
    const oneWaiting = await waitingSandbox(a.workspaceDir);
    expect((await run({ ...a, env: { STAGE: 'two' } }, `echo $STAGE; ${SERVED_WARM}`)).output).toBe('two\ncold\n');
    expect(processExists(oneWaiting)).toBe(false);
    const twoWaiting = await waitingSandbox(a.workspaceDir);
    const listed = await run({ ...a, env: { STAGE: 'two' }, allowedDomains: ['example.com'] }, 'echo $HTTPS_PROXY');
    expect(listed.output).toBe('http://127.0.0.1:3128\n');
    expect(processExists(twoWaiting)).toBe(false);
  });

  it('keeps the timeout, the output cap, the stop signal, detaching and the process limit', async () => {
    const a = workspaces.a!;
    await run(a, 'true');
    await waitingSandbox(a.workspaceDir);
    const slow = await run(a, 'echo before; sleep 30', { timeoutMs: 700 });
    expect(slow).toMatchObject({ output: 'before\n', timedOut: true, exitCode: null });
    expect(slow.durationMs).toBeLessThan(5_000);

    await waitingSandbox(a.workspaceDir);
    const loud = await run(a, 'yes', { maxOutputBytes: 64 * 1024 });
    expect(loud.outputLimitHit).toBe(true);

    await waitingSandbox(a.workspaceDir);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    expect(await run(a, 'sleep 30', { stop: stop.signal })).toMatchObject({ interrupted: true, exitCode: null });

    await waitingSandbox(a.workspaceDir);
    const bg = await run(a, 'echo started; sleep 0.5; echo ended', { detachAfterMs: 100 });
    expect(bg.detached).toBeDefined();
    expect((await bg.detached!.done).exitCode).toBe(0);

    await waitingSandbox(a.workspaceDir);
    const bomb = await run(a, 'for i in $(seq 100); do sleep 5 & done 2>/dev/null; echo spawned', { timeoutMs: 3_000 });
    expect(bomb.limitHit).toEqual({ kind: 'processes', limit: 64 });
  });

  it('keeps at most one per workspace and a few in all, and kills those of a removed copy', async () => {
    for (const name of ['c', 'd', 'e', 'f', 'g']) await run(workspace(name), 'true');
    await waitingSandbox(workspaces.g!.workspaceDir);
    // Started one after another: the oldest (a's, b's, c's) made room for the newest.
    await new Promise((r) => setTimeout(r, 200));
    expect(allWaiting(temp.dir)).toHaveLength(4);
    expect(allWaiting(workspaces.g!.workspaceDir)).toHaveLength(1);

    expect(await sandbox.warm!(workspaces.g!)).toBe(true);
    expect(allWaiting(workspaces.g!.workspaceDir)).toHaveLength(1);
    await sandbox.discardWarm!(path.dirname(workspaces.g!.workspaceDir));
    expect(allWaiting(workspaces.g!.workspaceDir)).toEqual([]);
  });
});

describe('the runner and its sandboxes started ahead', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture({ maxWarmWorkspaces: 1 });
  });
  afterAll(async () => {
    await fx?.stop();
  });
  const tree = (id: string) => path.join(fx.dir, 'a', 'workspaces', id, 'tree');

  it('warm brings the copy up and starts one, which the first Bash takes; discarding the copy kills it', async () => {
    const id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a.txt': 'a\n' } }));
    const warmed = expectOk(await fx.call(id, 1, { type: 'warm' }));
    expect(warmed.result).toEqual({ type: 'warm', sandbox: true });
    expect(warmed.version).toBe(1);
    const waiting = await waitingSandbox(tree(id));
    expect(bashOutput(await fx.call(id, 1, { type: 'bash', command: `cat a.txt; ${SERVED_WARM}`, timeoutMs: 10_000 }))).toBe('a\nwarm\n');
    expect(processExists(waiting)).toBe(false);

    await waitingSandbox(tree(id));
    expectOk(await fx.call(id, 1, { type: 'discard_copy' }));
    expect(allWaiting(tree(id))).toEqual([]);
  });

  it('kills the sandbox of a copy evicted for another workspace', async () => {
    const first = fx.newWorkspaceId();
    const second = fx.newWorkspaceId();
    expectOk(await fx.call(first, 0, { type: 'create_workspace', files: { 'a.txt': 'a\n' } }));
    expectOk(await fx.call(first, 1, { type: 'warm' }));
    await waitingSandbox(tree(first));
    // One warm copy per runner: the second workspace's call evicts the first's copy, and its sandbox with it.
    expectOk(await fx.call(second, 0, { type: 'create_workspace', files: { 'b.txt': 'b\n' } }));
    for (let i = 0; i < 100 && allWaiting(tree(first)).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(allWaiting(tree(first))).toEqual([]);
  });
});

/** The bwrap processes (outer ones) of sandboxes that wait, started ahead, for a command in `dir`. */
function allWaiting(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = readArgv(Number(entry));
    if (!argv?.[0]?.endsWith('bwrap') || !argv.some((a) => a.includes('read -r -N'))) continue;
    const bound = argv.findIndex((a, i) => argv[i - 1] === '--bind' && argv[i + 1] === '/workspace' && a.startsWith(dir));
    if (bound < 0) continue;
    const parent = readArgv(parentOf(Number(entry)));
    if (!parent?.[0]?.endsWith('bwrap')) pids.push(Number(entry));
  }
  return pids;
}

async function waitingSandbox(dir: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const pids = allWaiting(dir);
    if (pids.length > 1) throw new Error(`more than one sandbox waits for ${dir}: ${pids.join(', ')}`);
    if (pids.length === 1) return pids[0]!;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no sandbox waits for ${dir}`);
}

function readArgv(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  } catch {
    return 0;
  }
}

function processExists(pid: number): boolean {
  return readArgv(pid) !== undefined && readArgv(pid)!.length > 1;
}

function leftoverSleeps(): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map((p) => readArgv(Number(p))?.join(' ') ?? '')
    .filter((cmd) => /^sleep 434[345]/.test(cmd));
}
