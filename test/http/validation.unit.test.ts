import { describe, expect, it } from 'vitest';
import { validatorCompiler } from '../../src/http/validation.js';

const Query = () => ({ type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } } });
const compile = (part: 'querystring' | 'body', schema: object) =>
  validatorCompiler([])({ schema, httpPart: part, method: 'GET', url: '/pets' }) as (data: unknown) => unknown;

describe('request validators, compiled once per process', () => {
  it('gives an app built again the validator of an equal schema, and another to another part or content', () => {
    const query = compile('querystring', Query());
    expect(compile('querystring', Query())).toBe(query);
    expect(compile('body', Query())).not.toBe(query);
    expect(compile('querystring', { ...Query(), required: ['limit'] })).not.toBe(query);
  });

  it('coerces path, query and header values but takes integers in plain decimal only; bodies are not coerced', () => {
    const query = compile('querystring', Query());
    expect(query({ limit: '10' })).toBe(true);
    expect(query({ limit: '0x10' })).toMatchObject({
      error: { validation: [{ instancePath: '/limit', message: 'must be a whole number written in decimal digits' }] },
    });
    expect(compile('body', Query())({ limit: '10' })).toBe(false);
  });
});
