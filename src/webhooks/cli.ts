import { Command, InvalidArgumentError } from 'commander';
import type { Clock } from '../clock.js';
import { listen } from './listen.js';

/** `petstore webhooks …`: what a learner needs on the receiving side. */
export function webhooksCommand(io: { out: (text: string) => void }, clock: Clock): Command {
  const command = new Command('webhooks').description('receive and check webhook deliveries');
  command
    .command('listen')
    .description(
      'a receiver that verifies each delivery (Standard Webhooks), prints it, and answers 401 to a bad signature',
    )
    .requiredOption('--port <port>', 'the port to listen on', port)
    .requiredOption(
      '--secret <whsec>',
      "the endpoint's signing secret (repeat it for both secrets during a rotation)",
      secret,
      [] as string[],
    )
    .option('--host <host>', 'the address to listen on', '127.0.0.1')
    .option('--fail <n>', 'answer the first n verified deliveries with 500, to watch them retried', count, 0)
    .action(async (o: { port: number; secret: string[]; host: string; fail: number }) => {
      await listen({ host: o.host, port: o.port, secrets: o.secret, fail: o.fail, out: io.out, clock });
      io.out(
        `listening on http://${o.host}:${o.port}/ — create an endpoint with this URL, then watch the deliveries here (Ctrl-C to stop)`,
      );
      // Until the process is stopped.
      await new Promise(() => {});
    });
  return command;
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65_535) throw new InvalidArgumentError('expected a port from 1 to 65535');
  return n;
}

function secret(value: string, previous: string[]): string[] {
  if (!/^whsec_[A-Za-z0-9+/]+=*$/.test(value)) throw new InvalidArgumentError('expected a secret of the form whsec_…');
  return [...previous, value];
}

function count(value: string): number {
  if (!/^\d{1,6}$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}
