import { type Pace, paced } from './paced.js';
import { every, type Periodic } from './periodic.js';

export interface JobLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface SlicedJobOptions {
  /** How the job is named in the log. */
  name: string;
  /** The time from the end of one pass to the start of the next. */
  everyMs: number;
  pace: Pace;
  log: JobLog;
}

/**
 * Work off the request path, done in paced slices (./paced.ts): a pass now, then one `everyMs` after
 * each ends (./periodic.ts), until stopped. A pass that fails (a store out of reach) is said once, and
 * once more when a pass works again; the next pass runs as planned either way.
 */
export class SlicedJob {
  #job: Periodic | undefined;
  #stopping = false;
  #failing = false;

  constructor(private readonly options: SlicedJobOptions) {}

  /** One pass: `slice(size)` until it says nothing is left, paced; it ends early once the job stops. */
  pass(slice: (size: number) => Promise<boolean>): Promise<void> {
    return paced(slice, this.options.pace, () => this.#stopping);
  }

  /** Runs `pass` now and again every `everyMs`; resolves once the first has ended. */
  start(pass: () => Promise<unknown>): Promise<void> {
    this.#job ??= every(
      this.options.everyMs,
      () => this.#run(pass),
      () => {},
    );
    return this.#job.first;
  }

  /** No pass starts after this; resolves once the one in progress has ended (at the end of its slice). */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#job?.stop();
  }

  async #run(pass: () => Promise<unknown>): Promise<void> {
    const { name, everyMs, log } = this.options;
    try {
      await pass();
      if (this.#failing) log.info({}, `${name}: working again`);
      this.#failing = false;
    } catch (error) {
      if (!this.#failing)
        log.warn({ err: error }, `${name}: a pass failed; trying again every ${everyMs} ms until one works`);
      this.#failing = true;
    }
  }
}
