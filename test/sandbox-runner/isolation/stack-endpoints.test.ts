import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { decide, STACK_ENDPOINT_BODY } from '../../../sandbox-runner/isolation/domain-proxy.ts';
import { parseAllowList } from '../../../sandbox-runner/common/network-allow-list.ts';
import { stackEndpoints } from '../../../sandbox-runner/isolation/stack-endpoints.ts';

/** The proxy's decision for host:port with these entries, against these endpoints (nothing is connected to). */
const verdict = (host: string, port: number, entries: string[], endpoints: string[]) =>
  decide(host, port, { entries: parseAllowList(entries), honourListedAddresses: true, stackEndpoints: stackEndpoints(endpoints) });

describe("the stack's own endpoints, refused by address and port whatever the allow-list says", () => {
  const local = ['http://127.0.0.1:4569'];

  it("refuses every spelling of this host on an endpoint's port, and names the address it resolved", async () => {
    const spellings: [host: string, entry: string, address: string][] = [
      ['127.0.0.1', '127.0.0.1:4569', '127.0.0.1'],
      ['127.0.0.2', '127.0.0.2:4569', '127.0.0.2'],
      ['0.0.0.0', '0.0.0.0:4569', '0.0.0.0'],
      ['::1', '[::1]:4569', '::1'],
      ['::', '[::]:4569', '::'],
      ['::ffff:127.0.0.1', '[::ffff:127.0.0.1]:4569', '127.0.0.1'],
    ];
    for (const [host, entry, address] of spellings) {
      expect([host, await verdict(host, 4569, [entry], local)]).toEqual([
        host,
        { ok: false, status: 403, body: STACK_ENDPOINT_BODY(host, address, 4569), reason: `stack endpoint ${address}:4569` },
      ]);
    }
    const byName = await verdict('localhost', 4569, ['localhost:4569', '127.0.0.1', '::1'], local);
    expect(byName.ok).toBe(false);
    expect(!byName.ok && byName.body).toMatch(
      /^Blocked by the sandbox: localhost:4569 \((127\.0\.0\.1|::1)\) is one of this Stratus deployment's own services/,
    );
  });

  it("refuses this machine's own interface addresses too, and an endpoint named by a host name", async () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4')?.address;
    if (own) expect((await verdict(own, 4569, [`${own}:4569`], local)).ok).toBe(false);
    expect((await verdict('127.0.0.1', 8080, ['127.0.0.1:8080'], ['http://localhost:8080'])).ok).toBe(false);
  });

  it('leaves other ports of this host, and other hosts on the same port, to the allow-list', async () => {
    expect(await verdict('127.0.0.1', 4570, ['127.0.0.1:4570'], local)).toEqual({ ok: true, address: '127.0.0.1' });
    expect(await verdict('203.0.113.7', 4569, ['203.0.113.7:4569'], local)).toEqual({ ok: true, address: '203.0.113.7' });
  });

  it('refuses a remote endpoint (a runner pointed at an S3 server elsewhere) at its address only', async () => {
    const remote = ['http://10.0.0.5:9000'];
    expect((await verdict('10.0.0.5', 9000, ['10.0.0.5:9000'], remote)).ok).toBe(false);
    expect(await verdict('127.0.0.1', 9000, ['127.0.0.1:9000'], remote)).toEqual({ ok: true, address: '127.0.0.1' });
    expect(await verdict('10.0.0.6', 9000, ['10.0.0.6:9000'], remote)).toEqual({ ok: true, address: '10.0.0.6' });
  });
});
