import { Logger as PowertoolsLogger, type LogItem } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

/**
 * Structured JSON logs through Powertools for AWS Lambda: one object per line with `level`,
 * `message`, `timestamp`, `service`, the X-Ray trace id, the keys bound with `child` (session,
 * turn, tenant ids) and, in Lambda, the invocation's context (`cold_start`, `function_name`,
 * `function_request_id`) and correlation id. Locally the same code prints the same lines.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose every line carries `fields` (persistent keys). */
  child(fields: Record<string, unknown>): Logger;
}

/** The logger a composition root holds: it is also told when a Lambda invocation starts. */
export interface RootLogger extends Logger {
  /**
   * Per invocation: the Lambda context (cold start, function, request id) and the request's
   * correlation id go on every line logged from now on, and log sampling decides afresh whether
   * this invocation logs at debug. Returns whether this is the environment's cold start.
   */
  startInvocation(invocation: { context?: Context; correlationId?: string }): { coldStart: boolean };
}

export interface LoggerOptions {
  level?: LogLevel;
  /** The `service` key of every line (Powertools' service name). */
  service?: string;
  /** Share of invocations (0–1) logged at debug whatever the level: Powertools log sampling. */
  sampleRate?: number;
  /** Keys on every line. */
  context?: Record<string, unknown>;
  /** Where lines go (default: stdout, warn and error on stderr, as Powertools writes them). */
  write?: (line: string) => void;
}

export function createLogger(opts: LoggerOptions = {}): RootLogger {
  const shared: Shared = { write: opts.write, coldStart: false };
  const logger = new LineLogger(
    {
      logLevel: (opts.level ?? 'info').toUpperCase() as 'INFO',
      serviceName: opts.service ?? 'stratus',
      ...(opts.sampleRate ? { sampleRateValue: opts.sampleRate } : {}),
      ...(opts.context ? { persistentKeys: opts.context } : {}),
    },
    shared,
  );
  return {
    ...adapt(logger),
    startInvocation({ context, correlationId }) {
      shared.coldStart = logger.decideColdStart();
      if (context) logger.addContext(context);
      if (correlationId) logger.setCorrelationId(correlationId);
      logger.refreshSampleRateCalculation();
      return { coldStart: shared.coldStart };
    },
  };
}

function adapt(logger: PowertoolsLogger): Logger {
  const at = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => (fields ? logger[level](msg, fields) : logger[level](msg));
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => {
      const child = logger.createChild();
      child.appendPersistentKeys(fields);
      return adapt(child);
    },
  };
}

interface Shared {
  write: ((line: string) => void) | undefined;
  /** The root's cold-start decision for the current invocation. */
  coldStart: boolean;
}

/**
 * Powertools' logger with the output line handed to `write` when one is given, and one
 * cold-start answer for a root and all its children: Powertools asks each logger instance, and a
 * child made in a later invocation would otherwise report a cold start of its own.
 */
class LineLogger extends PowertoolsLogger {
  private readonly shared: Shared;

  constructor(options: ConstructorParameters<typeof PowertoolsLogger>[0], shared: Shared) {
    super(options);
    this.shared = shared;
  }

  /** Powertools' own rule (on-demand environments, first invocation only), asked once per invocation by the root. */
  decideColdStart(): boolean {
    return super.getColdStart();
  }

  override getColdStart(): boolean {
    return this.shared?.coldStart ?? false;
  }

  protected override createLogger(options?: ConstructorParameters<typeof PowertoolsLogger>[0]): PowertoolsLogger {
    return new LineLogger(options, this.shared);
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (!this.shared?.write) return void super.printLog(logLevel, log);
    log.prepareForPrint();
    this.shared.write(JSON.stringify(log.getAttributes(), this.getJsonReplacer()));
  }
}
