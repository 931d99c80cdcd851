import { trustVariables } from './command-mailbox.ts';

export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The file (in the command's /tmp) where the shell's EXIT trap records its final directory. */
export const CWD_FILE = '.stratus-cwd';

/**
 * A command's environment, built from scratch around the session's own variables: nothing of
 * the runner's environment reaches a command. With a proxy URL, both spellings of the proxy
 * variables (curl reads only the lower-case http_proxy, other tools the upper-case ones); with a
 * CA bundle (the mailbox proxy's, which terminates TLS), the variables that make clients trust it.
 */
export function sandboxEnv(own: Record<string, string>, where: { home: string; tmpDir: string; proxy?: string; caBundle?: string }): Record<string, string> {
  const { home, tmpDir, proxy, caBundle } = where;
  return {
    ...own,
    PATH: SANDBOX_PATH,
    HOME: home,
    TMPDIR: tmpDir,
    LANG: 'C.UTF-8',
    USER: 'agent',
    SHELL: '/bin/bash',
    TERM: 'dumb',
    ...(proxy ? { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy } : {}),
    ...(caBundle ? trustVariables(caBundle) : {}),
  };
}
