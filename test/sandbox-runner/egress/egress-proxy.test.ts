import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEgressProxy, type EgressProxy } from '../../../sandbox-runner/egress/egress-proxy.ts';
import { signEgressToken, verifyEgressToken } from '../../../sandbox-runner/common/egress-token.ts';
import { proxyUrlWithToken } from '../../../sandbox-runner/common/egress-mode.ts';

const exec = promisify(execFile);
const KEY = 'test-egress-key-0123456789abcdef';

describe('egress tokens', () => {
  const grant = { allowedDomains: ['registry.npmjs.org', '*.github.com:8443'], sessionId: 'ses_1', expiresAt: 2_000_000 };

  it('verify what was signed with the same key, until it expires', () => {
    const token = signEgressToken(KEY, grant);
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(verifyEgressToken(KEY, token, 1_999_999)).toEqual({ ok: true, grant });
    expect(verifyEgressToken(KEY, token, 2_000_000)).toEqual({ ok: false, reason: 'expired' });
    expect(verifyEgressToken('another-key', token, 0)).toEqual({ ok: false, reason: 'bad signature' });
  });

  it('cannot be widened without the key', () => {
    const [, , signature] = signEgressToken(KEY, grant).split('.');
    const wider = Buffer.from(JSON.stringify({ d: ['*.com'], s: 'ses_1', e: 2_000_000 })).toString('base64url');
    expect(verifyEgressToken(KEY, `v1.${wider}.${signature}`, 0)).toEqual({ ok: false, reason: 'bad signature' });
    expect(verifyEgressToken(KEY, 'v1.x', 0)).toEqual({ ok: false, reason: 'malformed token' });
  });

  it('rides in the proxy URL as its password', () => {
    expect(proxyUrlWithToken('http://egress.stratus-dev.internal:3128', 'v1.abc.def')).toBe('http://stratus:v1.abc.def@egress.stratus-dev.internal:3128');
  });
});

describe('the AWS egress proxy (loopback only here)', () => {
  let target: Server;
  let targetPort: number;
  let proxy: EgressProxy;
  const seen: string[] = [];
  const decisions: unknown[] = [];
  const now = 1_000_000;
  beforeAll(async () => {
    target = createServer((req, res) => {
      seen.push(`${req.headers.host} ${req.url}`);
      res.end('reached\n');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetPort = (target.address() as { port: number }).port;
    proxy = await startEgressProxy({ key: KEY, port: 0, host: '127.0.0.1', clock: () => now, log: (d) => decisions.push(d) });
  });
  afterAll(async () => {
    await proxy?.close();
    await new Promise((resolve) => target?.close(resolve));
  });

  const curl = async (args: string[]) => {
    const out = await exec('curl', ['-sS', '--max-time', '5', ...args], { env: {} }).catch((err: { stdout: string; stderr: string }) => err);
    return `${out.stdout}${out.stderr}`;
  };
  const proxied = (token?: string) => {
    const url = `http://127.0.0.1:${proxy.port}`;
    return token ? proxyUrlWithToken(url, token) : url;
  };
  const token = (allowedDomains: string[], expiresAt = now + 60_000) => signEgressToken(KEY, { allowedDomains, sessionId: 'ses_egress', expiresAt });

  it('asks for the token, and refuses a forged or expired one', async () => {
    expect(await curl(['-x', proxied(), `http://localhost:${targetPort}/`])).toBe(
      "The Stratus egress proxy needs the session's egress token as the proxy password.\n",
    );
    const forged = signEgressToken('not-the-key', { allowedDomains: ['*.com'], sessionId: 'x', expiresAt: now + 60_000 });
    expect(await curl(['-x', proxied(forged), `http://localhost:${targetPort}/`])).toBe('The Stratus egress proxy refused the token: bad signature.\n');
    expect(await curl(['-x', proxied(token(['localhost'], now - 1)), 'http://localhost/'])).toBe('The Stratus egress proxy refused the token: expired.\n');
    expect(await curl(['-p', '-x', proxied(), `http://localhost:${targetPort}/`])).toBe('curl: (56) CONNECT tunnel failed, response 407\n');
    expect(seen).toEqual([]);
  });

  it("enforces the token's list: hosts and ports", async () => {
    const t = token(['example.test', 'api.example.test:8443']);
    expect(await curl(['-x', proxied(t), `http://localhost:${targetPort}/`])).toBe(
      "Blocked by the sandbox: localhost is not in this session's allowed network domains.\n",
    );
    expect(await curl(['-x', proxied(t), 'http://example.test:22/'])).toContain('port 22 of example.test is not allowed');
    expect(await curl(['-p', '-x', proxied(t), 'http://api.example.test:443/'])).toBe('curl: (56) CONNECT tunnel failed, response 403\n');
    expect(seen).toEqual([]);
  });

  it('never reaches a non-public address, even one the list names', async () => {
    const t = token([`localhost:${targetPort}`, '127.0.0.1', '::1', `127.0.0.1:${targetPort}`, '169.254.169.254']);
    expect(await curl(['-x', proxied(t), `http://localhost:${targetPort}/`])).toMatch(
      /^Blocked by the sandbox: localhost resolves to (127\.0\.0\.1|::1), a loopback address\.\n$/,
    );
    expect(await curl(['-x', proxied(t), `http://127.0.0.1:${targetPort}/`])).toBe(
      'Blocked by the sandbox: 127.0.0.1 resolves to 127.0.0.1, a loopback address.\n',
    );
    expect(await curl(['-p', '-x', proxied(t), `http://127.0.0.1:${targetPort}/`])).toBe('curl: (56) CONNECT tunnel failed, response 403\n');
    expect(await curl(['-x', proxied(t), 'http://169.254.169.254/latest/meta-data/'])).toBe(
      'Blocked by the sandbox: 169.254.169.254 resolves to 169.254.169.254, a link-local address.\n',
    );
    expect(seen).toEqual([]);
    expect(decisions).toContainEqual({
      label: 'ses_egress',
      method: 'GET',
      host: '169.254.169.254',
      port: 80,
      allowed: false,
      reason: 'address 169.254.169.254',
    });
  });
});
