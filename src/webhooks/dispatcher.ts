import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { EventsRepository } from '../events/repository.js';
import { eventJson } from '../events/payload.js';
import type { StoredEvent } from '../events/schemas.js';
import { every, type Periodic } from '../jobs/periodic.js';
import type { JobLog } from '../jobs/sliced-job.js';
import type { Metrics } from '../ops/metrics.js';
import { type Claimed, DeliveriesRepository } from './deliveries.js';
import { EndpointsRepository } from './endpoints.js';
import { decide, outcomeOf } from './retries.js';
import { Sender } from './sender.js';
import { signatures } from './signature.js';

/** How often each instance looks for deliveries due: a first attempt leaves within this of its event's commit. */
export const DISPATCH_INTERVAL_MS = 500;
/**
 * A claim outlives the attempt's timeout by this much: no other instance attempts it while it may still be under way.
 */
const CLAIM_MARGIN_MS = 5_000;

/** How webhooks are delivered (WEBHOOK_*, read by config-webhooks.ts): docs/webhooks.md. */
export interface WebhookConfig {
  /** An answer must come within this, counted from the start of connecting. */
  timeoutMs: number;
  /** The waits before each attempt after the first, in ms; test keys' endpoints have their own. */
  retryScheduleMs: readonly number[];
  testRetryScheduleMs: readonly number[];
  /** An endpoint whose last this many deliveries all failed is disabled. */
  disableAfter: number;
  /** Private, loopback and link-local destinations: refused in production unless WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /**
   * Attempts one instance makes at once: in all, for one key (its
   * share), and for one of its endpoints (within the key's).
   */
  concurrency: { total: number; perKey: number; perEndpoint: number };
}

export interface DispatcherDeps {
  deliveries: DeliveriesRepository;
  endpoints: EndpointsRepository;
  events: EventsRepository;
  sender: Sender;
  config: WebhookConfig;
  clock: Clock;
  /** In [0, 1), for the retries' jitter. */
  random: () => number;
  metrics: Pick<Metrics, 'webhookAttempts' | 'webhookLatency' | 'registry'>;
  log: JobLog;
}

/**
 * Delivers webhooks off the request path (docs/webhooks.md): every half second it claims the deliveries
 * that fell due (./deliveries.ts) within the shares of `config.concurrency` (the instance's, each
 * key's, and each endpoint's within its key's: one customer's dead receivers hold only that
 * customer's share), sends each signed (Standard Webhooks), and writes what the attempt decided
 * (./retries.ts). Memory holds the attempts under way, nothing else: whatever is pending stays in the store.
 */
export class Dispatcher {
  readonly #inFlight = new Map<number, Promise<void>>();
  readonly #perKey = new Map<string, number>();
  readonly #perEndpoint = new Map<string, number>();
  readonly #stopped = new AbortController();
  #job: Periodic | undefined;

  /** The dispatcher of `db`, sending with a sender of its own. */
  static of(
    db: Db,
    config: WebhookConfig,
    {
      clock,
      metrics,
      log,
      random = Math.random,
    }: Pick<DispatcherDeps, 'clock' | 'metrics' | 'log'> & { random?: () => number },
  ): Dispatcher {
    const sender = new Sender({
      timeoutMs: config.timeoutMs,
      policy: { allowPrivate: config.allowPrivate },
      now: clock,
    });
    return new Dispatcher({
      deliveries: new DeliveriesRepository(db),
      endpoints: new EndpointsRepository(db),
      events: new EventsRepository(db),
      sender,
      config,
      clock,
      random,
      metrics,
      log,
    });
  }

  constructor(private readonly deps: DispatcherDeps) {
    new Gauge({
      name: 'petstore_webhook_deliveries_pending',
      help: 'Webhook deliveries waiting for an attempt or for their next one (all instances).',
      registers: [deps.metrics.registry as Registry],
      collect: async function (this: Gauge) {
        this.set(await deps.deliveries.pending());
      },
    });
  }

  /** Claims what is due now and starts its attempts; resolves with them once claimed (not once sent). */
  async pass(): Promise<Promise<void>[]> {
    const { concurrency, timeoutMs } = this.deps.config;
    const free = concurrency.total - this.#inFlight.size;
    if (free <= 0 || this.#stopped.signal.aborted) return [];
    const now = this.deps.clock();
    const inFlight = { keys: this.#perKey, endpoints: this.#perEndpoint };
    const until = now + timeoutMs + CLAIM_MARGIN_MS;
    const claimed = await this.deps.deliveries.claim(now, until, free, concurrency, inFlight);
    // Test keys whose clock a test moved: each due by its own now (test-mode/), within what is left.
    for (const clocked of await this.deps.deliveries.clockedKeys(now)) {
      const left = free - claimed.length;
      if (left <= 0) break;
      claimed.push(...(await this.deps.deliveries.claim(now, until, left, concurrency, inFlight, clocked)));
    }
    return claimed.map((delivery) => this.#start(delivery));
  }

  /**
   * Attempts every delivery due now and waits for them: what a test drives on its own clock. A pass
   * that claims nothing while deliveries are still due (another instance took the same ones a moment
   * before) looks again.
   */
  async runDue(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const started = await this.pass();
      attempted += started.length;
      if (started.length > 0) await Promise.race(started);
      else if (this.#inFlight.size > 0) await Promise.race(this.#inFlight.values());
      else if ((await this.#dueAnywhere()) === 0) return attempted;
    }
  }

  /** How many deliveries are due, by the real time and in each moved clock's time. */
  async #dueAnywhere(): Promise<number> {
    const { deliveries, clock } = this.deps;
    const now = clock();
    let due = await deliveries.due(now);
    for (const clocked of await deliveries.clockedKeys(now)) due += await deliveries.due(now, clocked);
    return due;
  }

  start(): void {
    this.#job ??= every(
      DISPATCH_INTERVAL_MS,
      () => this.pass(),
      (error) =>
        this.deps.log.warn({ err: error }, 'webhooks: could not claim deliveries; trying again every half second'),
    );
  }

  /**
   * Stops claiming and cuts the attempts under way: their claims
   * lapse, and they are attempted again (the same `webhook-id`).
   */
  async stop(): Promise<void> {
    this.#stopped.abort();
    await this.#job?.stop();
    await Promise.all(this.#inFlight.values());
    this.deps.sender.close();
  }

  #start(claimed: Claimed): Promise<void> {
    const { endpointId, keyId } = claimed;
    count(this.#perKey, keyId, +1);
    count(this.#perEndpoint, endpointId, +1);
    const attempt = this.#attempt(claimed)
      .catch((error: unknown) =>
        this.deps.log.warn(
          { err: error, delivery: claimed.seq },
          'webhooks: an attempt could not be recorded; it is made again once its claim lapses',
        ),
      )
      .finally(() => {
        this.#inFlight.delete(claimed.seq);
        count(this.#perKey, keyId, -1);
        count(this.#perEndpoint, endpointId, -1);
      });
    this.#inFlight.set(claimed.seq, attempt);
    return attempt;
  }

  async #attempt(claimed: Claimed): Promise<void> {
    const { deliveries, endpoints, events, config, clock, random, metrics } = this.deps;
    const realNow = clock();
    // A moved clock's attempt is made at the instant it fell due in its time (its log and its next
    // attempt follow from there); its `webhook-timestamp` stays the real time, so that signatures verify.
    const at = claimed.dueAt ?? realNow;
    const [destination, event] = await Promise.all([
      endpoints.destination(claimed.endpointId, realNow),
      events.bySeq(claimed.eventSeq),
    ]);
    if (!destination) return;
    const schedule = destination.livemode ? config.retryScheduleMs : config.testRetryScheduleMs;
    if (!event) {
      // Its event outlived the retention period: nothing is left to send, and the endpoint is not to blame.
      const attempt = {
        at: new Date(at).toISOString(),
        error: 'the event was deleted after the retention period',
        ms: 0,
      };
      await deliveries.record(
        claimed,
        { attempt, state: 'failed', nextAttemptAt: null, endpoint: 'unchanged' },
        config.disableAfter,
      );
      return;
    }
    const sent = await this.#send(
      destination.url,
      destination.secrets,
      deliveryBody(event, destination.apiVersion),
      event.id,
      realNow,
    );
    if (this.#stopped.signal.aborted) return;
    const recorded = decide(sent, at, claimed.attempts.length, schedule, random);
    const disabled = await deliveries.record(claimed, recorded, config.disableAfter);
    metrics.webhookAttempts.labels(outcomeOf(recorded)).inc();
    metrics.webhookLatency.observe(sent.ms / 1000);
    if (disabled)
      this.deps.log.info(
        { endpoint: claimed.endpointId, reason: recorded.endpoint === 'gone' ? 'gone' : 'failing' },
        'webhooks: endpoint disabled',
      );
  }

  #send(url: string, secrets: string[], body: string, id: string, at: number) {
    return this.deps.sender.post(
      url,
      body,
      deliveryHeaders(secrets, id, Math.floor(at / 1000), body),
      this.#stopped.signal,
    );
  }
}

/**
 * A delivery's body: the event as `GET /events/{eventId}` shows it in the version
 * the owner's key is pinned to now (as its `GET /events` answers without a header).
 */
export function deliveryBody(event: StoredEvent, apiVersion: string): string {
  return eventJson(event, apiVersion);
}

/** A delivery's headers (Standard Webhooks), `body` signed by every secret in force at `timestamp` (Unix seconds). */
export function deliveryHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures(secrets, id, timestamp, body),
  };
}

/** Adds to or takes from one of the counts of attempts under way; a count that reaches 0 goes. */
function count(counts: Map<string, number>, id: string, by: 1 | -1): void {
  const n = (counts.get(id) ?? 0) + by;
  if (n > 0) counts.set(id, n);
  else counts.delete(id);
}
