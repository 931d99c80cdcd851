import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapSandbox } from '../../../sandbox-runner/isolation/bwrap-sandbox.ts';
import { bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

const MIB = 1024 * 1024;

/** Every one of these must fail: the sandbox holds, and the runner keeps serving afterwards. */
describe('escape attempts from a sandboxed command', () => {
  let fx: RunnerFixture;
  let id: string;
  let version = 1;
  beforeAll(async () => {
    fx = await startRunnerFixture({
      sandbox: createBwrapSandbox({
        runtimeDir: path.join('/tmp', `stratus-escape-${process.pid}`),
        processLimits: { maxProcesses: 64, maxMemoryBytes: 128 * MIB },
      }),
      maxWarmWorkspaces: 4,
    });
    id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a.txt': 'a\n' } }));
  });
  afterAll(async () => {
    await fx?.stop();
  });

  // background 'never': these tests are about the sandbox, so a slow command is killed at its
  // timeout instead of moving to the background (the Bash tool's default).
  async function run(command: string, opts: { timeoutMs?: number; env?: Record<string, string> } = {}) {
    const op = { type: 'bash' as const, command, timeoutMs: opts.timeoutMs ?? 10_000, background: 'never' as const };
    const response = expectOk(await fx.call(id, version, op, { env: opts.env }));
    version = response.version;
    if (response.result.type !== 'bash') throw new Error('not bash');
    return response.result;
  }
  const tree = () => path.join(fx.dir, 'a', 'workspaces', id, 'tree');

  it('cannot write outside the workspace through .., absolute paths, symlinks or hardlinks', async () => {
    expect((await run('echo x > ../escaped')).output).toBe('/bin/bash: line 1: ../escaped: Read-only file system\n');
    expect((await run('echo x > /escaped')).output).toBe('/bin/bash: line 1: /escaped: Read-only file system\n');
    expect((await run('echo x > /usr/bin/escaped')).output).toBe('/bin/bash: line 1: /usr/bin/escaped: Read-only file system\n');
    expect((await run('ln -s /etc/passwd link && echo x >> link')).output).toBe('/bin/bash: line 1: link: Read-only file system\n');
    expect((await run('ln /etc/passwd hard')).output).toBe("ln: failed to create hard link 'hard' => '/etc/passwd': Invalid cross-device link\n");
    expect(existsSync(path.join(tree(), '..', 'escaped'))).toBe(false);
    expect(existsSync('/escaped')).toBe(false);
    expect(readFileSync('/etc/passwd', 'utf8')).not.toContain('\nx\n');
  });

  it('cannot read secrets, home directories, the runner environment or other workspaces', async () => {
    process.env.STRATUS_RUNNER_SECRET = 'runner-secret-value';
    const other = fx.newWorkspaceId();
    expectOk(await fx.call(other, 0, { type: 'create_workspace', files: { 'secret.txt': 'other tenant\n' } }));
    const otherTree = path.join(fx.dir, 'a', 'workspaces', other, 'tree');
    expect(readFileSync(path.join(otherTree, 'secret.txt'), 'utf8')).toBe('other tenant\n');

    expect((await run('cat /etc/shadow')).output).toBe('cat: /etc/shadow: No such file or directory\n');
    expect((await run('ls /root /home')).output).toBe(
      "ls: cannot access '/root': No such file or directory\nls: cannot access '/home': No such file or directory\n",
    );
    expect((await run(`cat ${otherTree}/secret.txt`)).output).toBe(`cat: ${otherTree}/secret.txt: No such file or directory\n`);
    expect((await run(`ls ${process.cwd()}`)).output).toBe(`ls: cannot access '${process.cwd()}': No such file or directory\n`);
    // /tmp is the workspace's own scratch: HOME, and the output files of its commands.
    expect((await run('ls /; ls -a /tmp')).output).toBe('bin\ndev\netc\nlib\nlib64\nproc\nsbin\ntmp\nusr\nworkspace\n.\n..\nhome\ntasks\n');
    expect((await run(`tr "\\0" "\\n" < /proc/1/environ; cat /proc/${process.pid}/environ 2>&1 | head -c 4`)).output).toBe('PWD=/\ncat:');
    expect((await run('env | sort', { env: { SESSION_VAR: 'mine' } })).output).toBe(
      'HOME=/tmp/home\nLANG=C.UTF-8\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nPWD=/workspace\n' +
        'SESSION_VAR=mine\nSHELL=/bin/bash\nSHLVL=1\nTERM=dumb\nTMPDIR=/tmp\nUSER=agent\n_=/usr/bin/env\n',
    );
  });

  it('cannot mount, unmount or create namespaces', async () => {
    expect((await run('mount -t tmpfs none /tmp')).output).toBe(
      'mount: /tmp: must be superuser to use mount.\n       dmesg(1) may have more information after failed mount system call.\n',
    );
    expect((await run('umount /workspace')).output).toBe('umount: /workspace: umount failed: No such file or directory.\n');
    expect((await run('unshare -r true')).output).toBe('unshare: unshare failed: No space left on device\n');
    expect((await run('unshare -m true')).output).toBe('unshare: unshare failed: Operation not permitted\n');
    expect((await run('id')).output).toBe('uid=1000(agent) gid=1000(agent) groups=1000(agent)\n');
  });

  it('cannot reach a loopback port of the host', async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      expect((await run(`echo hi > /dev/tcp/127.0.0.1/${port}`)).output).toBe(
        `/bin/bash: connect: Connection refused\n/bin/bash: line 1: /dev/tcp/127.0.0.1/${port}: Connection refused\n`,
      );
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('stops a fork bomb at the process limit and a memory hog at the memory limit, and keeps serving', async () => {
    const bomb = await run('bomb(){ bomb | bomb & }; bomb; sleep 1; echo survived', { timeoutMs: 3_000 });
    expect(bomb.resourceLimit).toBe('processes');
    expect(bomb.output.endsWith('The command hit the sandbox limit of 64 processes; new processes could not be started.\n')).toBe(true);

    const hog = await run('x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo ${#x}');
    expect(hog).toMatchObject({
      exitCode: 137,
      resourceLimit: 'memory',
      output: 'The command was killed: it used more than 128 MiB of memory, the sandbox limit.\n',
    });

    expect((await run('echo still serving')).output).toBe('still serving\n');
  });

  it('kills a background process when its call ends', async () => {
    expect((await run('sleep 4242 & echo started')).output).toBe('started\n');
    const survivors = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8') === 'sleep\u00004242\u0000';
        } catch {
          return false;
        }
      });
    expect(survivors).toEqual([]);
  });

  it('reports a timeout and output cut at the cap as such', async () => {
    const slow = await run('echo before; sleep 30', { timeoutMs: 1_500 });
    expect(slow).toMatchObject({ output: 'before\n', timedOut: true, exitCode: null });
    expect(bashOutput(await fx.call(id, version, { type: 'bash', command: 'pwd', timeoutMs: 5_000 }))).toBe('/workspace\n');
  });
});
