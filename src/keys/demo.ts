import type { KeysRepository } from './repository.js';

const DEMO_PLANS = ['free', 'pro', 'business'] as const;

/**
 * On the first start of an empty embedded store: one key per plan and a free test key (faults/),
 * printed once with ready-to-paste curl lines (a call, an access token, a fault). The store keeps only their hashes, so they are never
 * shown again.
 */
export async function createDemoKeys(keys: KeysRepository, publicUrl: string): Promise<string> {
  const lines = ['', 'Demo API keys (shown once, never again):'];
  for (const plan of DEMO_PLANS) {
    const { key, record } = await keys.create({ plan, name: `demo ${plan}` });
    lines.push(`  ${plan.padEnd(9)} ${key}`);
    if (plan !== 'free') continue;
    lines.push(`  try it:   curl -i -H 'X-API-Key: ${key}' ${publicUrl}/pets`);
    // The key as an OAuth client: its id is the client id (docs/tokens.md).
    lines.push(
      `  a token:  curl -s -u '${record.id}:${key}' -d grant_type=client_credentials ${publicUrl}/oauth/token`,
    );
  }
  const { key } = await keys.create({ plan: 'free', test: true, name: 'demo test' });
  lines.push(`  ${'test'.padEnd(9)} ${key}`);
  lines.push(`  faults:   curl -i -H 'X-API-Key: ${key}' -H 'Prefer: fault=503' ${publicUrl}/pets`);
  lines.push('Create more with: npx petstore keys create --plan pro (add --test for a test key)', '');
  return lines.join('\n');
}
