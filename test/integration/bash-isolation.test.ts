import { beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { apiClient } from '../support/api-client.ts';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { useLocalStack } from '../support/stack-fixture.ts';

describe('Bash runs isolated (through the API)', () => {
  // The operator lets sessions list exactly these non-public addresses (STRATUS_PRIVATE_NETWORK_ALLOW).
  const fx = useLocalStack({
    settings: { model: {}, turn: {}, api: {}, observability: {}, outbound: { privateNetworkAllow: ['127.0.0.1', '::1', '[2001:db8::1]:443'] } },
  });
  let stack: LocalStack;
  let api: ReturnType<typeof apiClient>;
  beforeAll(() => {
    ({ stack } = fx);
    ({ api } = fx);
  });

  async function bash(sessionId: string, command: string): Promise<{ content: string; isError: boolean }> {
    stack.model!.enqueue({ content: [{ type: 'tool_use', name: 'Bash', input: { command } }] }, { content: [{ type: 'text', text: 'ok' }] });
    const res = await api.turn(sessionId, 'run it');
    return res.json.events.find((e: { type: string }) => e.type === 'tool_result');
  }

  it("cannot write outside the workspace, read /root or see the runner's environment", async () => {
    const sessionId = await api.createSession({ 'in.txt': 'inside' });
    const marker = `/tmp/stratus-escape-${Date.now()}`;
    const out = await bash(
      sessionId,
      [
        `echo pwned > ${marker} && echo WROTE-TMP`,
        'echo pwned > /etc/pwned && echo WROTE-ETC',
        'echo pwned > ../outside.txt && echo WROTE-PARENT',
        'ls /root && echo READ-ROOT',
        'cat /etc/shadow && echo READ-SHADOW',
        'env | grep -c -E "AWS|ANTHROPIC|S3RVER" || true',
        'cat in.txt',
      ].join('; '),
    );
    // The write to /tmp lands in the sandbox's private tmp, never the host's.
    expect(existsSync(marker)).toBe(false);
    expect(out.content).not.toMatch(/WROTE-ETC|WROTE-PARENT|READ-ROOT|READ-SHADOW/);
    expect(out.content).toMatch(/Read-only file system|Permission denied/);
    expect(out.content).toMatch(/ls: cannot access '\/root': No such file or directory/);
    expect(out.content.trim().endsWith('0\ninside')).toBe(true);
  });

  it('reaches the network only where the session allow-lists it', async () => {
    const server = createServer((req, res) => res.end(`hello ${req.url}\n`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      // The port is named (80/443 otherwise) and loopback addresses are listed (a name resolving to one is refused otherwise).
      const open = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: [`localhost:${port}`, '127.0.0.1', '::1'] } });
      expect(open.status).toBe(201);
      expect((await bash(open.json.id, `curl -sS http://localhost:${port}/ok`)).content).toBe(`hello /ok`);
      const unlisted = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: ['localhost'] } });
      expect((await bash(unlisted.json.id, `curl -sS http://localhost:${port}/ok`)).content).toContain(`port ${port} of localhost is not allowed`);
      const closed = await api.createSession();
      expect((await bash(closed, `curl -sS http://localhost:${port}/ok 2>&1 | head -c 9`)).content).toBe('curl: (7)');
      const bad = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: ['http://x'] } });
      expect(bad.status).toBe(400);
      expect(bad.json.error.message).toContain('allowedDomains');
      for (const entry of ['x:0', 'x:99999', '[nothost]:80', '1.2.3']) {
        const refused = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: [entry] } });
        expect([entry, refused.status]).toEqual([entry, 400]);
      }
      const withPort = await api.request('POST', '/v1/sessions', { settings: { allowedDomains: ['pypi.internal.example:8443', '[2001:db8::1]:443'] } });
      expect(withPort.status).toBe(201);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
