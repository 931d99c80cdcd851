import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide } from '../../../sandbox-runner/isolation/domain-proxy.ts';
import { checkAddresses, checkHostPort, parseAllowList, parseAllowListEntry } from '../../../sandbox-runner/common/network-allow-list.ts';
import { bashOutput, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

describe('network policy: allow-listed domains through the sandbox proxy', () => {
  let fx: RunnerFixture;
  let server: Server;
  let port: number;
  let localhostFirst: string;
  const seen: string[] = [];
  let id: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.headers.host} ${req.url}`);
      res.end(`hello ${req.url}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    // What this machine's resolver answers for localhost (127.0.0.1, or ::1 first on some hosts).
    localhostFirst = (await lookup('localhost', { all: true, verbatim: true }))[0]!.address;
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
  /** A raw CONNECT to the sandbox's proxy, so the refusal's own text is visible (curl hides it). */
  const rawConnect = (authority: string) =>
    `exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT ${authority} HTTP/1.1\\r\\nHost: ${authority}\\r\\n\\r\\n' >&3; sed -n '1p;$p' <&3 | tr -d '\\r'`;

  it('reaches an allow-listed host:port at a listed address, and nothing else', async () => {
    const policy = [`localhost:${port}`, '127.0.0.1', '::1', '*.allowed.test'];
    seen.length = 0;
    expect(await run(`curl -sS http://localhost:${port}/ok`, policy)).toBe('hello /ok\n');
    // 127.0.0.1 is listed without a port: 80 and 443 only.
    expect(await run(`curl -sS http://127.0.0.1:${port}/ip`, policy)).toBe(
      `Blocked by the sandbox: port ${port} of 127.0.0.1 is not allowed; only 80 and 443 are, unless an allowed network domain names the port (127.0.0.1:${port}).\n`,
    );
    expect(await run('curl -sS https://example.com/', policy)).toBe('curl: (56) CONNECT tunnel failed, response 403\n');
    // Going around the proxy finds nothing: the sandbox's own loopback has no such port.
    expect(await run(`echo > /dev/tcp/127.0.0.1/${port}`, policy)).toBe(
      `/bin/bash: connect: Connection refused\n/bin/bash: line 1: /dev/tcp/127.0.0.1/${port}: Connection refused\n`,
    );
    expect(seen).toEqual([`localhost:${port} /ok`]);
  });

  it('opens CONNECT tunnels only to the ports an entry allows', async () => {
    seen.length = 0;
    // The host is allowed (and its address listed), but not on this port: 80 and 443 only.
    const noPort = ['localhost', '127.0.0.1', '::1'];
    expect(await run(`curl -sS -p http://localhost:${port}/tunnel`, noPort)).toBe('curl: (56) CONNECT tunnel failed, response 403\n');
    expect(await run(rawConnect(`localhost:${port}`), noPort)).toBe(
      `HTTP/1.1 403 Forbidden\nBlocked by the sandbox: port ${port} of localhost is not allowed; only 80 and 443 are, unless an allowed network domain names the port (localhost:${port}).\n`,
    );
    expect(await run(rawConnect('localhost:22'), noPort)).toContain('port 22 of localhost is not allowed');
    expect(seen).toEqual([]);
    // Naming the port opens it (curl -p tunnels plain HTTP through CONNECT).
    expect(await run(`curl -sS -p http://localhost:${port}/tunnel`, [`localhost:${port}`, '127.0.0.1', '::1'])).toBe('hello /tunnel\n');
    expect(seen).toEqual([`localhost:${port} /tunnel`]);
  });

  it('refuses an allowed name that resolves to loopback unless that address is listed', async () => {
    seen.length = 0;
    const refusal = `Blocked by the sandbox: localhost resolves to ${localhostFirst}, a loopback address; name ${localhostFirst} itself to reach it.\n`;
    expect(await run(`curl -sS http://localhost:${port}/plain`, [`localhost:${port}`])).toBe(refusal);
    expect(await run(rawConnect(`localhost:${port}`), [`localhost:${port}`])).toBe(`HTTP/1.1 403 Forbidden\n${refusal}`);
    // Listing another address does not help; listing this one (here in its IPv4-mapped form) does.
    expect(await run(`curl -sS http://localhost:${port}/other`, [`localhost:${port}`, '10.0.0.1'])).toBe(refusal);
    expect(seen).toEqual([]);
    expect(await run(`curl -sS -p http://localhost:${port}/listed`, [`localhost:${port}`, '[::ffff:127.0.0.1]', '::1'])).toBe('hello /listed\n');
    expect(seen).toEqual([`localhost:${port} /listed`]);
  });

  it('never reaches the instance metadata address unless it is listed itself', async () => {
    expect(await run('curl -sS http://169.254.169.254/latest/meta-data/', ['*.amazonaws.com'])).toBe(
      "Blocked by the sandbox: 169.254.169.254 is not in this session's allowed network domains.\n",
    );
    expect(await run(rawConnect('169.254.169.254:80'), ['metadata.google.internal'])).toBe(
      "HTTP/1.1 403 Forbidden\nBlocked by the sandbox: 169.254.169.254 is not in this session's allowed network domains.\n",
    );
  });

  it('has no proxy at all without a policy', async () => {
    expect(await run('env | grep -ci proxy; curl -sS http://localhost:1/ 2>&1 | head -c 9', [])).toBe('0\ncurl: (7)');
  });
});

describe('allow-list entries', () => {
  it('parses names, wildcards, IPs and ports, and rejects everything else', () => {
    expect(parseAllowListEntry('Registry.NPMjs.org')).toEqual({ host: 'registry.npmjs.org', kind: 'name' });
    expect(parseAllowListEntry('*.github.com:8443')).toEqual({ host: 'github.com', kind: 'wildcard', port: 8443 });
    expect(parseAllowListEntry('203.0.113.7:22')).toEqual({ host: '203.0.113.7', kind: 'ip', port: 22 });
    expect(parseAllowListEntry('[2001:db8::1]:443')).toEqual({ host: '2001:db8::1', kind: 'ip', port: 443 });
    expect(parseAllowListEntry('2001:DB8::1')).toEqual({ host: '2001:db8::1', kind: 'ip' });
    expect(parseAllowListEntry('[::ffff:169.254.169.254]')).toEqual({ host: '169.254.169.254', kind: 'ip' });
    for (const bad of ['http://x', 'a b', '*.', '*', 'x:0', 'x:65536', 'x:80:80', '1.2.3', '999.1.1.1', '[nothost]', 'a..b', '-a.com', '*.*.a.com', 'x:']) {
      expect([bad, parseAllowListEntry(bad)]).toEqual([bad, undefined]);
    }
  });

  it('matches exact names and *.subdomains only, on 80/443 unless a port is named', () => {
    const list = parseAllowList(['*.allowed.test', 'localhost', 'api.test:8443', '127.0.0.1']);
    expect(checkHostPort('api.allowed.test', 443, list)).toEqual({ allowed: true });
    expect(checkHostPort('api.allowed.test', 22, list)).toEqual({ allowed: false, reason: 'port' });
    expect(checkHostPort('allowed.test', 443, list)).toEqual({ allowed: false, reason: 'host' });
    expect(checkHostPort('evilallowed.test', 443, list)).toEqual({ allowed: false, reason: 'host' });
    expect(checkHostPort('LOCALHOST.', 80, list)).toEqual({ allowed: true });
    expect(checkHostPort('localhost.evil', 80, list)).toEqual({ allowed: false, reason: 'host' });
    expect(checkHostPort('api.test', 8443, list)).toEqual({ allowed: true });
    expect(checkHostPort('api.test', 443, list)).toEqual({ allowed: false, reason: 'port' });
    // IP literals match IP entries only, in any spelling of the same address.
    expect(checkHostPort('::ffff:7f00:1', 80, list)).toEqual({ allowed: true });
    expect(checkHostPort('127.0.0.2', 80, list)).toEqual({ allowed: false, reason: 'host' });
  });

  it('refuses non-public resolved addresses unless listed (and always, where listing is not honoured)', () => {
    const names = parseAllowList(['metadata.example']);
    const cases: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['fd00::1', 'private (unique local)'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['100.64.0.1', 'carrier-grade NAT'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['::ffff:169.254.169.254', 'link-local'],
      ['::ffff:10.0.0.1', 'private'],
      ['64:ff9b::a9fe:a9fe', 'NAT64'],
    ];
    for (const [address, range] of cases) {
      const canonical = address.startsWith('::ffff:') ? address.slice(7) : address;
      expect(checkAddresses([address], names, true)).toEqual({ allowed: false, address: canonical, range });
    }
    expect(checkAddresses(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'], names, true)).toEqual({
      allowed: true,
      addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    });
    // A name with both kinds of answer is reached only at the public one.
    expect(checkAddresses(['10.0.0.5', '93.184.215.14'], names, true)).toEqual({ allowed: true, addresses: ['93.184.215.14'] });
    const listed = parseAllowList(['metadata.example', '169.254.169.254']);
    expect(checkAddresses(['169.254.169.254'], listed, true)).toEqual({ allowed: true, addresses: ['169.254.169.254'] });
    expect(checkAddresses(['169.254.169.254'], listed, false)).toEqual({ allowed: false, address: '169.254.169.254', range: 'link-local' });
  });

  it('decides before connecting: a listed IP literal in a non-public range is refused where listing is not honoured', async () => {
    const policy = { entries: parseAllowList(['169.254.169.254']), honourListedAddresses: false };
    expect(await decide('169.254.169.254', 80, policy)).toEqual({
      ok: false,
      status: 403,
      reason: 'address 169.254.169.254',
      body: 'Blocked by the sandbox: 169.254.169.254 resolves to 169.254.169.254, a link-local address.\n',
    });
    expect(await decide('[::ffff:a9fe:a9fe]', 80, policy)).toMatchObject({ ok: false, reason: 'address 169.254.169.254' });
  });
});
