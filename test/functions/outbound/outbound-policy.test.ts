import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundFetch } from '../../../functions/outbound/outbound-fetch.ts';
import { createOutboundPolicy, type OutboundPolicyOptions } from '../../../functions/outbound/outbound-policy.ts';
import { startCountingServer, type CountingServer } from '../../support/counting-server.ts';

const refusal = (policy: ReturnType<typeof policyWith>, ...entries: string[]) => policy.allowedDomainsRefusals(entries)[0];
const policyWith = (opts: Partial<OutboundPolicyOptions>) => createOutboundPolicy({ privateNetworkAllow: [], ownEndpoints: [], ...opts });
const fetchWith = (opts: Partial<OutboundPolicyOptions>, maxResponseBytes = 1024 * 1024) => createOutboundFetch(policyWith(opts), { maxResponseBytes });

/** Every spelling of this machine that a WHATWG URL, a resolver or the kernel turns into a loopback or unspecified address. */
const LOOPBACK_SPELLINGS = [
  '127.0.0.1',
  '127.1',
  '2130706433',
  '0x7f000001',
  '017700000001',
  '127.0.0.2',
  '[::1]',
  '0.0.0.0',
  '[::]',
  '[::ffff:127.0.0.1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  'localhost',
  'LOCALHOST.',
];

describe('the outbound policy', () => {
  let victim: CountingServer;
  beforeAll(async () => {
    victim = await startCountingServer();
  });
  afterAll(async () => {
    await victim.close();
  });

  it('refuses loopback in every spelling, over https and http, without opening a connection', async () => {
    const fetch = fetchWith({});
    for (const host of LOOPBACK_SPELLINGS) {
      for (const scheme of ['https', 'http']) {
        await expect(fetch(`${scheme}://${host}:${victim.port}/steal`, { method: 'POST', body: 'secret' }), `${scheme}://${host}`).rejects.toThrow(
          /^Refused to call /,
        );
      }
    }
    expect(victim.seen.connections).toBe(0);
    await expect(fetch(`https://127.1:${victim.port}/`)).rejects.toThrow(
      `Refused to call https://127.0.0.1:${victim.port}: 127.0.0.1 is a loopback address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it.`,
    );
    await expect(fetch(`https://localhost:${victim.port}/`)).rejects.toThrow(
      `Refused to call https://localhost:${victim.port}: localhost resolves to 127.0.0.1, which is a loopback address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it.`,
    );
  });

  it('names the range of every other non-public address, IPv6 forms that embed IPv4 included', () => {
    const policy = policyWith({});
    const cases: [string, string][] = [
      ['https://10.1.2.3/', '10.1.2.3 is a private address'],
      ['https://192.168.0.1/', '192.168.0.1 is a private address'],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
      ['https://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe (169.254.169.254) is a link-local address'],
      ['https://100.64.0.1/', '100.64.0.1 is a carrier-grade NAT address'],
      ['https://224.0.0.1/', '224.0.0.1 is a multicast address'],
      ['https://255.255.255.255/', '255.255.255.255 is a broadcast address'],
      ['https://[fd00::1]/', 'fd00::1 is a private (unique local) address'],
      ['https://[fe80::1]/', 'fe80::1 is a link-local address'],
      ['https://[64:ff9b::a9fe:a9fe]/', '64:ff9b::a9fe:a9fe is a NAT64 address'],
      ['https://[2002:a9fe:a9fe::1]/', '2002:a9fe:a9fe::1 is a 6to4 address'],
      ['https://203.0.113.7/', '203.0.113.7 is a reserved (reserved) address'],
    ];
    for (const [url, reason] of cases) expect(policy.refusalOf(url), url).toBe(`${reason}, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it`);
    expect(policy.refusalOf('https://example.com/hook')).toBeUndefined();
    expect(policy.refusalOf('https://93.184.215.14:8443/hook')).toBeUndefined();
    expect(policy.refusalOf('http://example.com/hook')).toMatch(/^plain http:\/\/ is used only for a host STRATUS_PRIVATE_NETWORK_ALLOW names/);
    expect(policy.refusalOf('file:///etc/passwd')).toBe('only https:// URLs are called');
  });

  it('reaches what the operator allows, at that port only, keeping the name as the Host header', async () => {
    const byName = fetchWith({ privateNetworkAllow: [`localhost:${victim.port}`] });
    const res = await byName(`http://localhost:${victim.port}/named`, { method: 'POST', body: 'hello', headers: { 'x-test': '1' } });
    expect([res.status, await res.text()]).toEqual([200, 'reached']);
    expect(victim.seen.requests.at(-1)).toMatchObject({ path: '/named', body: 'hello', headers: { host: `localhost:${victim.port}`, 'x-test': '1' } });
    // An IP entry covers the address however the URL spells it; a CIDR covers every port of its range.
    const byAddress = fetchWith({ privateNetworkAllow: [`127.0.0.1:${victim.port}`] });
    expect((await byAddress(`http://2130706433:${victim.port}/`)).status).toBe(200);
    await expect(byAddress(`http://127.0.0.1:${victim.port + 1}/`)).rejects.toThrow(/^Refused to call http:\/\/127\.0\.0\.1:\d+: plain http:\/\//);
    await expect(byAddress(`https://127.0.0.1:${victim.port + 1}/`)).rejects.toThrow(
      '127.0.0.1 is a loopback address, and STRATUS_PRIVATE_NETWORK_ALLOW does not allow it',
    );
    expect((await fetchWith({ privateNetworkAllow: ['127.0.0.0/8'] })(`http://127.0.0.1:${victim.port}/`)).status).toBe(200);
    expect((await fetchWith({ privateNetworkAllow: ['::1/128'] })(`http://[::1]:${victim.port}/`)).status).toBe(200);
  });

  it("never reaches the stack's own endpoints, whatever the operator allows", async () => {
    const before = victim.seen.connections;
    const everything = {
      privateNetworkAllow: ['127.0.0.0/8', '0.0.0.0/8', '::/0', 'localhost', '*.localhost'],
      ownEndpoints: [`http://127.0.0.1:${victim.port}`],
    };
    const fetch = fetchWith(everything);
    for (const host of LOOPBACK_SPELLINGS) {
      await expect(fetch(`http://${host}:${victim.port}/`), host).rejects.toThrow(
        "it is one of this Stratus deployment's own endpoints, which nothing a session configures may call",
      );
    }
    expect(victim.seen.connections).toBe(before);
  });

  it('lets a session list a non-public IP literal in allowedDomains only where the operator allows it', () => {
    const policy = policyWith({ privateNetworkAllow: ['10.0.0.0/8', '127.0.0.1:9000', '[fd00::5]'] });
    expect(refusal(policy, '127.0.0.1:9000')).toBeUndefined();
    expect(refusal(policy, '10.9.8.7:5432')).toBeUndefined();
    expect(refusal(policy, '[fd00::5]')).toBeUndefined();
    expect(refusal(policy, '127.0.0.1')).toBe(
      '"127.0.0.1" is a loopback address; a session may list one only when STRATUS_PRIVATE_NETWORK_ALLOW allows it (at port 80)',
    );
    expect(refusal(policy, '127.0.0.1:9001')).toMatch(/loopback address; .* \(at port 9001\)$/);
    expect(refusal(policy, '[::ffff:169.254.169.254]')).toMatch(/^"\[::ffff:169\.254\.169\.254\]" is a link-local address/);
    // Names and public addresses are the sandbox proxy's to judge when resolved.
    expect(refusal(policy, 'registry.npmjs.org')).toBeUndefined();
    expect(refusal(policy, '8.8.8.8')).toBeUndefined();
  });

  it('returns a redirect as it is, never following it to the next host', async () => {
    const next = await startCountingServer();
    const redirecting = await startCountingServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${next.port}/collect` });
      res.end();
    });
    try {
      const fetch = fetchWith({ privateNetworkAllow: [`127.0.0.1:${redirecting.port}`, `127.0.0.1:${next.port}`] });
      const res = await fetch(`http://127.0.0.1:${redirecting.port}/hook`, { method: 'POST', body: 'signed body', redirect: 'follow' });
      expect(res.status).toBe(307);
      expect(next.seen.connections).toBe(0);
    } finally {
      await next.close();
      await redirecting.close();
    }
  });

  it('fails an answer past the size limit, naming the limit, and drops no reason phrase of the remote into the response', async () => {
    const big = await startCountingServer((_req, res) => {
      res.writeHead(200, 'SECRET-REASON');
      res.end('x'.repeat(64 * 1024));
    });
    try {
      const res = await fetchWith({ privateNetworkAllow: [`127.0.0.1:${big.port}`] }, 16 * 1024)(`http://127.0.0.1:${big.port}/`);
      expect(res.statusText).toBe('');
      await expect(res.text()).rejects.toThrow(`http://127.0.0.1:${big.port} answered more than 16384 bytes, the limit of an answer`);
    } finally {
      await big.close();
    }
  });

  it('names the origin and the address when the connection fails', async () => {
    const fetch = fetchWith({ privateNetworkAllow: ['127.0.0.1:9'] });
    await expect(fetch('http://127.0.0.1:9/')).rejects.toThrow('Could not reach http://127.0.0.1:9 (127.0.0.1): ECONNREFUSED');
  });
});
