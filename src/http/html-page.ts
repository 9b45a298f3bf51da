/**
 * A small, self-contained HTML page (no external assets): the problem pages and the deprecation notes
 * (docs/), the versions' changelog (versions/), the report card's checks (report-card/). At the edge, like
 * the problem+json answers: a way of answering that routes of several components share.
 */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Petstore</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}a{color:#0a58ca}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
${body}
<p><a href="/docs">API reference</a> · <a href="/openapi.json">OpenAPI document</a></p>
</body></html>
`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The few Markdown marks the texts use: `code`. */
export function inlineCode(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}
