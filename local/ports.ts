import { SettingError } from '../functions/deps/settings.ts';

/** The loopback ports of the local stack's parts; 0 = any free port (the system picks one). */
export interface LocalPorts {
  api: number;
  dynamodb: number;
  s3: number;
  lambda: number;
  model: number;
}

/** The variable that sets each port (also listed in functions/deps/settings.ts SETTINGS). */
export const PORT_VARIABLES: Record<keyof LocalPorts, string> = {
  api: 'PORT',
  dynamodb: 'STRATUS_DYNAMODB_PORT',
  s3: 'STRATUS_S3_PORT',
  lambda: 'STRATUS_LAMBDA_PORT',
  model: 'STRATUS_MODEL_PORT',
};

/**
 * Reads every port from the environment: unset or empty is `defaults` (the API) or 0. A value
 * that is not a port, or a fixed port given to two parts, stops start-up naming the variables,
 * before anything listens.
 */
export function localPortsFromEnv(env: NodeJS.ProcessEnv, defaults: Partial<LocalPorts> = {}): LocalPorts {
  const ports = {} as LocalPorts;
  for (const [part, name] of Object.entries(PORT_VARIABLES) as [keyof LocalPorts, string][]) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      ports[part] = defaults[part] ?? 0;
      continue;
    }
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65_535)
      throw new SettingError(`${name}: expected a port number from 0 to 65535 (0 = any free port), got ${JSON.stringify(raw)}.`);
    ports[part] = Number(raw);
  }
  const taken = new Map<number, string>();
  for (const [part, port] of Object.entries(ports) as [keyof LocalPorts, number][]) {
    const other = taken.get(port);
    if (port !== 0 && other)
      throw new SettingError(`${other} and ${PORT_VARIABLES[part]}: both ask for port ${port}; give each part its own port (or 0 for any free one).`);
    taken.set(port, PORT_VARIABLES[part]);
  }
  return ports;
}
