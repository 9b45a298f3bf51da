/** Milliseconds since the Unix epoch. Injected everywhere time matters so tests never sleep. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
