/**
 * The events phase (embedded): what orders that move and the events that record them cost.
 *
 *   fulfilment  100,000 orders falling due at once: on an idle service, and on one under `GET /pets/{petId}`
 *               load (its throughput meanwhile against its own once they are all moved), the longest
 *               the event loop was held, and how far behind the fulfilment fell (its lag)
 *   growth      `GET /events` of a key with 1,000,000 events against a key of a small store, by turns
 *
 * The stores are written straight into SQLite (events-store.ts).
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { lastApprovalAfter, storeWith } from './events-store.js';
import { type ByTurns, byTurns, type LoadSettings, measure, type Requests, round } from './load.js';
import { startService } from './service.js';

export const EVENTS_BENCH = {
  dueOrders: 100_000,
  /** Deliveries waiting for a receiver that never answers. */
  stuckDeliveries: 10_000,
  events: 1_000_000,
  /** Keys the `GET /pets/{petId}` load is spread over, in both stores of the fulfilment run. */
  petKeys: 500,
  /** GET /events by turns. */
  rounds: 6,
  turnSeconds: 3,
};

export interface FulfilmentFigures {
  orders: number;
  /** The longest the fulfilling service held its event loop (EVENT_LOOP_RESOLUTION_MS=1), with no requests, in ms. */
  idleLoopMaxMs: number;
  /** When the last order was approved after they fell due, with no requests: how far behind the fulfilment fell. */
  idleSeconds: number;
  /** The same while it answered `GET /pets/{petId}` and fulfilled, and once it was done (requests alone). */
  loadedLoopMaxMs: number;
  afterLoopMaxMs: number;
  /**
   * `GET /pets/{petId}` req/s while the orders were fulfilled over the
   * same service's once they were all, and the CPU µs per request of each.
   */
  petsWhileFulfilling: number;
  cpuUsPerRequest: { during: number; after: number };
  /** Orders still due when the load ended: it measured a fulfilment under way throughout. */
  dueAfterLoad: number;
  /** The same under the turns' load. */
  loadedSeconds: number;
}

export interface RetentionFigures {
  events: number;
  /**
   * The longest block of the event loop while they were deleted
   * (EVENT_LOOP_RESOLUTION_MS=1), in ms, and how long it took from the start.
   */
  loopMaxMs: number;
  seconds: number;
}

export interface EventGrowthFigures {
  events: number;
  setupSeconds: number;
  /** `GET /events` (the first page) of the key with a million events over a small store's key, by turns. */
  firstPageByTurns: ByTurns;
}

const get = (path: string, keys: string[]): Requests =>
  keys.map((key) => ({ method: 'GET', path, headers: { 'x-api-key': key } }));

/**
 * A reading of the service's metrics: the event loop's longest
 * block since the last reading (prom-client resets it), approvals.
 */
async function metricsOf(adminUrl: string): Promise<{ loopMaxMs: number; approved: number }> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    loopMaxMs: value(/^petstore_nodejs_eventloop_lag_max_seconds ([\d.e+-]+)$/m) * 1000,
    approved: value(/^petstore_order_moves_total\{to="approved"\} (\d+)$/m),
  };
}

/**
 * Polls the service until `orders` are approved; the longest block of its event loop meanwhile, in ms.
 * The first reading is left out: it covers the service's start-up, before the jobs started.
 */
async function untilApproved(adminUrl: string, orders: number, dueAt: number): Promise<number> {
  let loopMaxMs = 0;
  await metricsOf(adminUrl);
  for (;;) {
    const reading = await metricsOf(adminUrl);
    loopMaxMs = Math.max(loopMaxMs, reading.loopMaxMs);
    if (reading.approved >= orders) return loopMaxMs;
    if (Date.now() - dueAt > 600_000)
      throw new Error(`fulfilment: ${reading.approved} of ${orders} approved after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Twice: on a service that answers nothing else (how fast it catches up, and its longest block), then
 * on one under `GET /pets/{petId}` load from the moment it is up: the load measured while the
 * fulfilment is under way (the orders still due after it say so), then, once it is done, the same load
 * on the same service. (By turns against a twin would leave the fulfilling service idle half the time,
 * when the fulfilment takes more of the loop and is soon done.)
 */
export async function measureFulfilment(
  mode: string,
  env: Record<string, string>,
  settings: LoadSettings,
): Promise<FulfilmentFigures> {
  const { dueOrders, petKeys } = EVENTS_BENCH;
  const resolution = { ...env, EVENT_LOOP_RESOLUTION_MS: '1' };
  const idle = await storeWith({ petKeys: 0, orders: dueOrders, due: true });
  const loaded = await storeWith({ petKeys, orders: dueOrders, due: true });
  try {
    const alone = await startService({ ...resolution, DATABASE_URL: idle.file });
    let idleLoopMaxMs: number;
    try {
      idleLoopMaxMs = await untilApproved(alone.adminUrl!, dueOrders, idle.dueAt);
    } finally {
      await alone.stop();
    }
    const service = await startService({ ...resolution, DATABASE_URL: loaded.file });
    try {
      const pets = get('/pets/1', loaded.keys);
      await metricsOf(service.adminUrl!);
      const during = await measure(service, pets, settings);
      const afterLoad = await metricsOf(service.adminUrl!);
      const dueAfterLoad = dueOrders - afterLoad.approved;
      await untilApproved(service.adminUrl!, dueOrders, loaded.dueAt);
      await metricsOf(service.adminUrl!);
      const after = await measure(service, pets, settings);
      const afterwards = await metricsOf(service.adminUrl!);
      await service.stop();
      const figures: FulfilmentFigures = {
        orders: dueOrders,
        idleLoopMaxMs: round(idleLoopMaxMs, 1),
        idleSeconds: lastApprovalAfter(idle.file, idle.dueAt),
        loadedLoopMaxMs: round(afterLoad.loopMaxMs, 1),
        afterLoopMaxMs: round(afterwards.loopMaxMs, 1),
        petsWhileFulfilling: round(during.rps / after.rps, 3),
        cpuUsPerRequest: { during: during.cpuUsPerRequest, after: after.cpuUsPerRequest },
        dueAfterLoad,
        loadedSeconds: lastApprovalAfter(loaded.file, loaded.dueAt),
      };
      process.stderr.write(`  ${mode}: ${fulfilmentLine(figures)}\n`);
      return figures;
    } finally {
      await service.stop();
    }
  } finally {
    for (const store of [idle, loaded]) rmSync(dirname(store.file), { recursive: true, force: true });
  }
}

/**
 * A store whose million events all passed the retention: the longest
 * block while the service deletes them, and how long it takes.
 */
export async function measureRetention(mode: string, env: Record<string, string>): Promise<RetentionFigures> {
  const store = await storeWith({ petKeys: 0, orders: EVENTS_BENCH.events, due: false, ageDays: 31 });
  const started = performance.now();
  const service = await startService({ ...env, EVENT_LOOP_RESOLUTION_MS: '1', DATABASE_URL: store.file });
  const sqlite = new DatabaseSync(store.file, { readOnly: true });
  try {
    const count = sqlite.prepare('select count(*) as n from events');
    let loopMaxMs = 0;
    // The first reading covers the service's start-up, before its jobs started.
    await metricsOf(service.adminUrl!);
    for (;;) {
      loopMaxMs = Math.max(loopMaxMs, (await metricsOf(service.adminUrl!)).loopMaxMs);
      if (count.get()!.n === 0) break;
      if (performance.now() - started > 600_000) throw new Error('retention: events left after 10 minutes');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const figures = {
      events: EVENTS_BENCH.events,
      loopMaxMs: round(loopMaxMs, 1),
      seconds: round((performance.now() - started) / 1000, 1),
    };
    process.stderr.write(`  ${mode}: ${retentionLine(figures)}\n`);
    return figures;
  } finally {
    sqlite.close();
    await service.stop();
    rmSync(dirname(store.file), { recursive: true, force: true });
  }
}

export interface StuckReceiverFigures {
  deliveries: number;
  /** `GET /pets/{petId}` on the service with the deliveries pending over a twin's with none, by turns. */
  petsByTurns: ByTurns;
  /** The service's RSS when it started and after the turns, in bytes; the deliveries still pending then. */
  rssBeforeBytes: number;
  rssAfterBytes: number;
  pendingAfter: number;
}

/**
 * A receiver that accepts every connection and never answers, with 10,000 deliveries due to it: the
 * service keeps a few attempts in flight to it (each waits for the timeout), the rest stay in the
 * store, and the API goes on as a twin's with no webhooks.
 */
export async function measureStuckReceiver(
  mode: string,
  env: Record<string, string>,
  settings: LoadSettings,
): Promise<StuckReceiverFigures> {
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hooks`;
  const deliveries = EVENTS_BENCH.stuckDeliveries;
  const [stuck, quiet] = [
    await storeWith({ petKeys: EVENTS_BENCH.petKeys, orders: deliveries, due: false, hook }),
    await storeWith({ petKeys: EVENTS_BENCH.petKeys, orders: 0, due: false }),
  ];
  const [service, twin] = [
    await startService({ ...env, DATABASE_URL: stuck.file }),
    await startService({ ...env, DATABASE_URL: quiet.file }),
  ];
  try {
    const rssBeforeBytes = service.rssBytes();
    const [a, b] = [get('/pets/1', quiet.keys), get('/pets/1', stuck.keys)];
    const petsByTurns = await byTurns(
      twin,
      service,
      { a, b },
      settings.connections,
      EVENTS_BENCH.rounds,
      EVENTS_BENCH.turnSeconds,
    );
    const rssAfterBytes = service.rssBytes();
    const text = await (await fetch(`${service.adminUrl!}/metrics`)).text();
    const pendingAfter = Number(/^petstore_webhook_deliveries_pending (\d+)$/m.exec(text)?.[1] ?? NaN);
    const figures = { deliveries, petsByTurns, rssBeforeBytes, rssAfterBytes, pendingAfter };
    process.stderr.write(`  ${mode}: ${stuckReceiverLine(figures)}\n`);
    return figures;
  } finally {
    await Promise.all([service.stop(), twin.stop()]);
    silent.closeAllConnections();
    silent.close();
    for (const store of [stuck, quiet]) rmSync(dirname(store.file), { recursive: true, force: true });
  }
}

export async function measureEventGrowth(
  mode: string,
  env: Record<string, string>,
  settings: LoadSettings,
): Promise<EventGrowthFigures> {
  const big = await storeWith({ petKeys: 0, orders: EVENTS_BENCH.events, due: false });
  const small = await storeWith({ petKeys: 0, orders: 20, due: false });
  const [bigService, smallService] = [
    await startService({ ...env, DATABASE_URL: big.file }),
    await startService({ ...env, DATABASE_URL: small.file }),
  ];
  try {
    for (const [service, key] of [
      [smallService, small.owner],
      [bigService, big.owner],
    ] as const) {
      const page = (await (await fetch(`${service.url}/events`, { headers: { 'x-api-key': key } })).json()) as {
        data?: unknown[];
      };
      if (page.data?.length !== 20)
        throw new Error(`GET /events did not answer a full page: ${JSON.stringify(page).slice(0, 300)}`);
    }
    const [a, b] = [get('/events', [small.owner]), get('/events', [big.owner])];
    const firstPageByTurns = await byTurns(
      smallService,
      bigService,
      { a, b },
      settings.connections,
      EVENTS_BENCH.rounds,
      EVENTS_BENCH.turnSeconds,
    );
    const figures = {
      events: EVENTS_BENCH.events,
      setupSeconds: Math.round(big.setupSeconds * 10) / 10,
      firstPageByTurns,
    };
    process.stderr.write(`  ${mode}: ${eventGrowthLine(figures)}\n`);
    return figures;
  } finally {
    await Promise.all([bigService.stop(), smallService.stop()]);
    for (const store of [big, small]) rmSync(dirname(store.file), { recursive: true, force: true });
  }
}

export function fulfilmentLine(f: FulfilmentFigures): string {
  return (
    `fulfilment: ${f.orders.toLocaleString('en')} orders due at once, the last approved ${f.idleSeconds} s after they fell due with no requests, ${f.loadedSeconds} s under load; ` +
    `event loop held at most ${f.idleLoopMaxMs} ms idle, ${f.loadedLoopMaxMs} ms under load (${f.afterLoopMaxMs} ms under the same load once done); ` +
    `GET /pets/{petId} meanwhile ${f.petsWhileFulfilling} of its req/s once done (CPU ${f.cpuUsPerRequest.during} against ${f.cpuUsPerRequest.after} µs), ${f.dueAfterLoad.toLocaleString('en')} orders still due when the load ended`
  );
}

export function eventGrowthLine(g: EventGrowthFigures): string {
  const { median, ratios, cpuUsPerRequest } = g.firstPageByTurns;
  return `events: GET /events with ${g.events.toLocaleString('en')} events ÷ a small store's, by turns: median ${median} (${ratios.join(', ')}), CPU ${cpuUsPerRequest.b} against ${cpuUsPerRequest.a} µs (store written in ${g.setupSeconds} s)`;
}

export function retentionLine(r: RetentionFigures): string {
  return `retention: ${r.events.toLocaleString('en')} expired events deleted within ${r.seconds} s of the start; event loop held at most ${r.loopMaxMs} ms`;
}

export function stuckReceiverLine(f: StuckReceiverFigures): string {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
  return `webhooks: ${f.deliveries.toLocaleString('en')} deliveries to a receiver that never answers (${f.pendingAfter.toLocaleString('en')} still pending after): GET /pets/{petId} ÷ a twin with none, by turns, median ${f.petsByTurns.median} (${f.petsByTurns.ratios.join(', ')}); RSS ${mb(f.rssBeforeBytes)} → ${mb(f.rssAfterBytes)}`;
}
