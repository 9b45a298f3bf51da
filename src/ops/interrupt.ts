/**
 * Aborted by the process's `SIGINT` or `SIGTERM` (once: a second Ctrl-C ends the process as it would), until disposed:
 * how a command that runs until stopped (`petstore conformance`, `petstore events tail`) hears Ctrl-C.
 */
export function processInterrupt(): AbortController & { dispose: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  return Object.assign(controller, {
    dispose: () => {
      process.off('SIGINT', abort);
      process.off('SIGTERM', abort);
    },
  });
}
