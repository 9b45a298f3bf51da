import { Command, InvalidArgumentError } from 'commander';
import { KeyInputError, type KeysRepository } from '../keys/repository.js';
import { ORDER_STATUSES, type OrderStatus } from './lifecycle.js';
import type { AdminOrder, OrdersRepository } from './repository.js';

export interface OrdersCliIo {
  out: (text: string) => void;
}

/** `petstore orders …`: the orders of a key as the admin sees them, on the same DATABASE_URL as the server. */
export function ordersCommand(
  stores: () => Promise<{ keys: KeysRepository; orders: OrdersRepository }>,
  io: OrdersCliIo,
): Command {
  const command = new Command('orders').description("look at a key's orders and where each is in its lifecycle");
  command
    .command('list')
    .description("a key's newest orders: state, when placed, when last moved, when each moves next by itself")
    .requiredOption('--key <id>', 'the key id (key_…), as `keys list` shows it')
    .option('--status <status>', `only orders in this state: ${ORDER_STATUSES.join(', ')}`, statusArg)
    .option('--limit <n>', 'how many, newest first (default 20, at most 1000)', limitArg, 20)
    .option('--json', 'print one JSON array')
    .action(async (o: { key: string; status?: OrderStatus; limit: number; json?: boolean }) => {
      const { keys, orders } = await stores();
      if (!(await keys.get(o.key))) throw new KeyInputError(`there is no key ${o.key}`, 'id');
      const found = await orders.recent(o.key, { status: o.status }, o.limit);
      io.out(
        o.json
          ? JSON.stringify(found)
          : found.map(describe).join('\n') || `no orders${o.status ? ` ${o.status}` : ''} for ${o.key}`,
      );
    });
  return command;
}

function describe(o: AdminOrder): string {
  const next = o.dueAt ? `  moves next at ${o.dueAt}` : '';
  return `${String(o.id).padStart(8)}  ${o.status.padEnd(9)}  pet ${o.petId} ×${o.quantity}  placed ${o.placedAt}  ${o.status} since ${o.movedAt}${next}`;
}

function statusArg(value: string): OrderStatus {
  if (!(ORDER_STATUSES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected one of ${ORDER_STATUSES.join(', ')}`);
  return value as OrderStatus;
}

function limitArg(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value) || Number(value) > 1000)
    throw new InvalidArgumentError('expected a whole number from 1 to 1000');
  return Number(value);
}
