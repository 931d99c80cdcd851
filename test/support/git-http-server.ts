import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';

/**
 * A real git smart-HTTP server on loopback: each request runs `git http-backend` (git's own CGI
 * program) over `projectRoot`. When `token` is set, requests must carry it (or, for a function,
 * a token it accepts) as basic auth (`x-access-token:<token>`), as GitHub expects; pushes are
 * then allowed (the authenticated user is the CGI's REMOTE_USER), and the repositories' own
 * hooks run, so a `pre-receive` hook can refuse a push. `authorizations` records the
 * Authorization header of every request.
 */
export async function startGitHttpServer(opts: {
  projectRoot: string;
  token?: string | ((token: string) => boolean);
}): Promise<{ url: string; requests: string[]; authorizations: (string | undefined)[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    requests.push(`${req.method} ${url.pathname}`);
    authorizations.push(req.headers.authorization);
    if (opts.token) {
      const check = opts.token;
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const [user, token] = basic ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':') : [];
      const ok = user === 'x-access-token' && token !== undefined && (typeof check === 'string' ? token === check : check(token));
      if (!ok) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
        res.end('unauthorized');
        return;
      }
    }
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: opts.projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
        REMOTE_ADDR: '127.0.0.1',
        ...(opts.token ? { REMOTE_USER: 'x-access-token' } : {}),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('utf8').split('\r\n')) {
        const i = line.indexOf(':');
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else res.setHeader(name, value);
      }
      res.statusCode = status;
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
