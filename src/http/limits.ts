/**
 * The most a request's head (request line and headers) may take: Node's default, set explicitly on the
 * servers. A path parameter can be no longer, so Fastify's own cap on parameters is raised to it and
 * the routes' schemas judge (and name) a parameter that is too long.
 */
export const MAX_HEAD_BYTES = 16_384;
