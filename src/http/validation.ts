import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { toUtcDateTime } from './date-time.js';
import type { InputError } from './problems.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type HttpPart = 'params' | 'querystring' | 'headers' | 'body';

const PART_LOCATION: Record<HttpPart, InputError['in']> = {
  params: 'path',
  querystring: 'query',
  headers: 'header',
  body: 'body',
};

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Request validation with Ajv, every error reported (not just the first). Path, query and header
 * values arrive as strings and are coerced; JSON bodies are not, so `"quantity": "2"` is refused.
 * An integer in the path or query must be written in plain decimal: Ajv alone would take `0x10` or `1e3`.
 * A `date-time` must be one the service can store (./date-time.ts). A validator depends only on its
 * schema's content and the shared schemas, so each is compiled once per process, however many apps
 * are built in it (the suites build hundreds).
 */
export function validatorCompiler(sharedSchemas: readonly object[]): FastifySchemaCompiler<unknown> {
  const key = JSON.stringify(sharedSchemas);
  let compiler = compilers.get(key);
  if (!compiler) compilers.set(key, (compiler = compileValidators(sharedSchemas)));
  return compiler;
}

const compilers = new Map<string, FastifySchemaCompiler<unknown>>();

function compileValidators(sharedSchemas: readonly object[]): FastifySchemaCompiler<unknown> {
  const options = { allErrors: true, useDefaults: true, strict: false, removeAdditional: false } as const;
  const dateTime = { type: 'string', validate: (text: string) => toUtcDateTime(text) !== undefined } as const;
  const coercing = addFormats(new Ajv({ ...options, coerceTypes: 'array' })).addFormat('date-time', dateTime);
  const exact = addFormats(new Ajv({ ...options, coerceTypes: false })).addFormat('date-time', dateTime);
  for (const schema of sharedSchemas) {
    coercing.addSchema(schema);
    exact.addSchema(schema);
  }
  const compiled = new Map<string, ReturnType<FastifySchemaCompiler<unknown>>>();
  return ({ schema, httpPart }) => {
    const key = `${httpPart} ${JSON.stringify(schema)}`;
    let validator = compiled.get(key);
    if (!validator) {
      const closed = httpPart === 'querystring' ? onlyDeclared(schema) : schema;
      compiled.set(
        key,
        (validator = httpPart === 'body' ? exact.compile(schema as object) : compileDecimal(coercing, closed)),
      );
    }
    return validator;
  };
}

/**
 * A query takes only the parameters its route declares: one it does not, in any form (`type[]=`,
 * `version[]=`, a misspelt name), is a `400` naming it rather than silently ignored, so that a client
 * never takes an unfiltered answer for a filtered one.
 */
function onlyDeclared(schema: unknown): unknown {
  const object = schema as { type?: string; additionalProperties?: unknown };
  return object.type === 'object' && object.additionalProperties === undefined
    ? { ...object, additionalProperties: false }
    : schema;
}

/** A validator of path, query or header values: coerced from strings, integers in plain decimal only. */
function compileDecimal(ajv: Ajv, schema: unknown): ReturnType<FastifySchemaCompiler<unknown>> {
  const validate = ajv.compile(schema as object);
  const integers = integerProperties(schema);
  if (integers.length === 0) return validate;
  return (data: unknown) => {
    // Read before Ajv coerces them to numbers; nothing is built for a request whose integers are all plain decimal.
    let notDecimal: ErrorObject[] | undefined;
    for (const [name, int64] of integers) {
      const error = decimalError(data, name, int64);
      if (error) (notDecimal ??= []).push(error);
    }
    const valid = validate(data);
    if (notDecimal === undefined) return valid ? true : { error: ajvError(validate) };
    const others = (validate.errors ?? []).filter((e) => !notDecimal.some((d) => d.instancePath === e.instancePath));
    return { error: validationError([...notDecimal, ...others]) };
  };
}

function integerProperties(schema: unknown): Array<[string, boolean]> {
  const properties = (schema as { properties?: Record<string, { type?: string; format?: string }> }).properties ?? {};
  return Object.entries(properties)
    .filter(([, p]) => p.type === 'integer')
    .map(([name, p]) => [name, p.format === 'int64']);
}

/** The error of an integer not written in plain decimal (or, for int64, out of its range); none for any other value. */
function decimalError(data: unknown, name: string, int64: boolean): ErrorObject | undefined {
  const raw = (data as Record<string, unknown> | null)?.[name];
  if (typeof raw !== 'string') return undefined;
  const decimal = /^-?(0|[1-9][0-9]*)$/.test(raw);
  // 18 digits or fewer always fit in int64: only longer ones need BigInt's exact comparison.
  const inRange = decimal && (!int64 || raw.length <= 18 || (BigInt(raw) >= INT64_MIN && BigInt(raw) <= INT64_MAX));
  if (inRange) return undefined;
  const message = decimal ? 'must be within the int64 range' : 'must be a whole number written in decimal digits';
  return { instancePath: `/${name}`, schemaPath: '#/format', keyword: 'format', params: {}, message };
}

function ajvError(validate: ValidateFunction): Error {
  return validationError(validate.errors ?? []);
}

function validationError(errors: ErrorObject[]): Error {
  return Object.assign(new Error('validation failed'), { validation: errors });
}

/**
 * Ajv's errors in the form of the `errors` member of a `400`: one entry per input, every broken rule in its message.
 */
export function inputErrors(part: HttpPart, errors: ErrorObject[]): InputError[] {
  const byInput = new Map<string, InputError>();
  for (const error of errors.map((e) => inputError(part, e))) {
    const earlier = byInput.get(error.name);
    if (!earlier) byInput.set(error.name, error);
    else if (!earlier.message.split('; ').includes(error.message)) earlier.message += `; ${error.message}`;
  }
  return [...byInput.values()];
}

function inputError(part: HttpPart, e: ErrorObject): InputError {
  const location = PART_LOCATION[part];
  const missing = e.keyword === 'required' ? String(e.params.missingProperty) : null;
  const extra = e.keyword === 'additionalProperties' ? String(e.params.additionalProperty) : null;
  const child = missing ?? extra;
  const pointer = child === null ? e.instancePath : `${e.instancePath}/${child}`;
  // Parameters are named plainly; body members by JSON pointer.
  const name = part === 'body' ? pointer : pointer.replace(/^\//, '');
  const message = missing
    ? 'is required'
    : extra
      ? part === 'body'
        ? 'is not a known member'
        : 'is not a known parameter'
      : (e.message ?? 'is invalid');
  return { in: location, name, message };
}

const PARTS: HttpPart[] = ['params', 'querystring', 'headers', 'body'];
const PART_VALUE: Record<HttpPart, (r: FastifyRequest) => unknown> = {
  params: (r) => r.params,
  querystring: (r) => r.query,
  headers: (r) => r.headers,
  body: (r) => r.body,
};

/**
 * Fastify stops at the first part that fails. On that (rare) path, run every part's validator so
 * that one `400` lists every invalid input at once.
 */
export function allInputErrors(request: FastifyRequest, failed: { part: string; errors: ErrorObject[] }): InputError[] {
  const found: InputError[] = [];
  for (const part of PARTS) {
    if (part === failed.part) {
      found.push(...inputErrors(part, failed.errors));
      continue;
    }
    const validate = request.getValidationFunction(part) as ((data: unknown) => unknown) | undefined;
    if (!validate) continue;
    const result = validate(PART_VALUE[part](request));
    const errors =
      (result as { error?: { validation?: ErrorObject[] } })?.error?.validation ??
      (validate as { errors?: ErrorObject[] }).errors;
    if (result !== true && errors) found.push(...inputErrors(part, errors));
  }
  return found;
}
