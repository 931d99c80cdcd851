import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError, EXIT } from './exit-codes.ts';

/** What `stratus login` keeps, and the session the last `new` made (the default for `run`). */
export interface CliConfig {
  url?: string;
  token?: string;
  session?: string;
}

/** `$STRATUS_CONFIG_DIR`, else `$XDG_CONFIG_HOME/stratus`, else `~/.config/stratus`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.STRATUS_CONFIG_DIR) return env.STRATUS_CONFIG_DIR;
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'stratus');
}

export function createConfigStore(env: NodeJS.ProcessEnv) {
  const file = path.join(configDir(env), 'config.json');
  const read = (): CliConfig => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CliConfig) : {});
  return {
    file,
    read,
    /** Merges and writes; the file holds a token, so only its owner may read it (0600). */
    write(update: CliConfig): void {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, `${JSON.stringify({ ...read(), ...update }, null, 2)}\n`, { mode: 0o600 });
      chmodSync(file, 0o600);
    },
    /** The API URL and token: the environment (`STRATUS_URL`, `STRATUS_TOKEN`) wins over the file. */
    credentials(): { url: string; token: string } {
      const saved = read();
      const url = env.STRATUS_URL || saved.url;
      const token = env.STRATUS_TOKEN || saved.token;
      if (!url || !token) throw new CliError('Not logged in: run `stratus login --url <API URL> --token <token>` (npm start prints both).', EXIT.unauthorized);
      return { url: url.replace(/\/+$/, ''), token };
    },
  };
}

export type ConfigStore = ReturnType<typeof createConfigStore>;
