// The logging seam of the engine: the subset of pino's API it calls, so the app can hand
// it a pino logger (with redaction) and tests can hand it a recorder.
export interface EngineLogger {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: EngineLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
