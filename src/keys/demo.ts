import type { KeysRepository } from './repository.js';

const DEMO_PLANS = ['free', 'pro', 'business'] as const;

/**
 * On the first start of an empty embedded store: one key per plan, printed once with a ready-to-paste
 * curl line. The store keeps only their hashes, so they are never shown again.
 */
export async function createDemoKeys(keys: KeysRepository, publicUrl: string): Promise<string> {
  const lines = ['', 'Demo API keys (shown once, never again):'];
  for (const plan of DEMO_PLANS) {
    const { key } = await keys.create({ plan, name: `demo ${plan}` });
    lines.push(`  ${plan.padEnd(9)} ${key}`);
    if (plan === 'free') lines.push(`  try it:   curl -i -H 'X-API-Key: ${key}' ${publicUrl}/pets`);
  }
  lines.push('Create more with: npx petstore keys create --plan pro', '');
  return lines.join('\n');
}
