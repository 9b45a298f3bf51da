/** A job that runs again and again until stopped. */
export interface Periodic {
  /** Resolves once the first run has ended (it starts at once). */
  first: Promise<void>;
  /** No run starts after this; resolves once the run in progress, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `task` now, then `everyMs` after each run ends (never two at once), until stopped. A run that
 * fails is handed to `failed`, and the next one runs as planned. The timer does not keep the process
 * alive.
 */
export function every(everyMs: number, task: () => Promise<unknown>, failed: (error: unknown) => void): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = (): void => {
    running = task().then(
      () => undefined,
      (error: unknown) => failed(error),
    );
    void running.then(() => {
      if (!stopped) timer = setTimeout(run, everyMs).unref();
    });
  };
  run();
  return {
    first: running,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
