import { systemClock } from './clock.js';
import { runCommandLine } from './command-line.js';

/** `petstore`: the command line in a process of its own (bin/petstore.js runs the build of this file). */
const io = {
  stdout: (text: string) => void process.stdout.write(text),
  stderr: (text: string) => void process.stderr.write(text),
};
runCommandLine(process.argv.slice(2), { env: process.env, clock: systemClock, ...io }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`petstore: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
