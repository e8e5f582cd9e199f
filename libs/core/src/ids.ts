import { ValidationError } from './errors';

declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

/** Ids travel in NATS subjects and file names: letters, digits, `_` and `-` only, never user text. */
export const SAFE_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

export type SessionId = Brand<string, 'SessionId'>;
export type TurnId = Brand<string, 'TurnId'>;
export type CommandId = Brand<string, 'CommandId'>;
export type OwnerId = Brand<string, 'OwnerId'>;
export type AgentId = Brand<string, 'AgentId'>;
export type EnvironmentId = Brand<string, 'EnvironmentId'>;
export type SandboxId = Brand<string, 'SandboxId'>;

/** 32-bit FNV-1a; two seeds give a 64-bit digest (16 hex digits), plenty to keep derived ids apart. */
const fnv1a = (text: string, seed: number): string => {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
};

/** A short stable digest of `text`, for ids derived from parts that may not fit a token. */
export const digest64 = (text: string): string => `${fnv1a(text, 0x811c9dc5)}${fnv1a(text, 0x050c5d1f)}`;

export const isSafeToken = (value: unknown): value is string => typeof value === 'string' && SAFE_TOKEN.test(value);

export function safeToken<B extends string>(value: unknown, field: string): Brand<string, B> {
  if (!isSafeToken(value)) {
    throw new ValidationError(`${field} must be 1-128 characters of letters, digits, '_' or '-'`, field);
  }
  return value as Brand<string, B>;
}

export const asSessionId = (v: unknown, field = 'session_id'): SessionId => safeToken<'SessionId'>(v, field);
export const asTurnId = (v: unknown, field = 'turn_id'): TurnId => safeToken<'TurnId'>(v, field);
export const asCommandId = (v: unknown, field = 'command_id'): CommandId => safeToken<'CommandId'>(v, field);
export const asOwnerId = (v: unknown, field = 'owner_id'): OwnerId => safeToken<'OwnerId'>(v, field);
export const asAgentId = (v: unknown, field = 'agent_id'): AgentId => safeToken<'AgentId'>(v, field);
export const asEnvironmentId = (v: unknown, field = 'environment_id'): EnvironmentId => safeToken<'EnvironmentId'>(v, field);
export const asSandboxId = (v: unknown, field = 'sandbox_id'): SandboxId => safeToken<'SandboxId'>(v, field);

/** Public id prefixes, as the Managed Agents API spells them. */
export const IdPrefix = {
  agent: 'agent',
  environment: 'env',
  session: 'sesn',
  event: 'sevt',
  turn: 'turn',
  command: 'cmd',
  sandbox: 'sbx',
  apiKey: 'bk',
  natsCredential: 'ncred',
  webhook: 'whk',
  webhookDelivery: 'whd',
  vault: 'vlt',
  credential: 'vcrd',
} as const;
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];
