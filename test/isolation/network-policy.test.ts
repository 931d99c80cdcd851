import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHostAllowed } from '../../sandbox-runner/isolation/domain-proxy.ts';
import { bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../runner/runner-fixture.ts';

describe('network policy: allow-listed domains through the sandbox proxy', () => {
  let fx: RunnerFixture;
  let server: Server;
  let port: number;
  const seen: string[] = [];
  let id: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.headers.host} ${req.url}`);
      res.end(`hello ${req.url}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    fx = await startRunnerFixture();
    id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { 'a.txt': 'a' } }));
  });
  afterAll(async () => {
    await fx?.stop();
    await new Promise((resolve) => server?.close(resolve));
  });

  const run = async (command: string, allowedDomains: string[]) =>
    bashOutput(await fx.call(id, 1, { type: 'bash', command, timeoutMs: 10_000 }, { allowedDomains }));

  it('reaches an allow-listed host and nothing else', async () => {
    const policy = ['localhost', '*.allowed.test'];
    expect(await run(`curl -sS http://localhost:${port}/ok`, policy)).toBe('hello /ok\n');
    expect(await run(`curl -sS http://127.0.0.1:${port}/ip`, policy)).toBe(
      "Blocked by the sandbox: 127.0.0.1 is not in this session's allowed network domains.\n",
    );
    expect(await run('curl -sS https://example.com/', policy)).toBe('curl: (56) CONNECT tunnel failed, response 403\n');
    // Going around the proxy finds nothing: the sandbox's own loopback has no such port.
    expect(await run(`echo > /dev/tcp/127.0.0.1/${port}`, policy)).toBe(
      `bash: connect: Connection refused\nbash: line 4: /dev/tcp/127.0.0.1/${port}: Connection refused\n`,
    );
    expect(seen).toEqual([`localhost:${port} /ok`]);
  });

  it('has no proxy at all without a policy', async () => {
    expect(await run('env | grep -ci proxy; curl -sS http://localhost:1/ 2>&1 | head -c 9', [])).toBe('0\ncurl: (7)');
  });

  it('matches exact names and *.subdomains only', () => {
    expect(isHostAllowed('api.allowed.test', ['*.allowed.test'])).toBe(true);
    expect(isHostAllowed('allowed.test', ['*.allowed.test'])).toBe(false);
    expect(isHostAllowed('evilallowed.test', ['*.allowed.test'])).toBe(false);
    expect(isHostAllowed('LOCALHOST.', ['localhost'])).toBe(true);
    expect(isHostAllowed('localhost.evil', ['localhost'])).toBe(false);
  });
});
