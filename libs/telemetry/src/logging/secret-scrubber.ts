/**
 * Removes secrets from a serialized log line before it is written. Two nets: the values of the
 * process's secret-looking variables (model keys, passwords, tokens, credentials in URLs), and
 * the shapes of keys wherever they come from (Berth API keys, provider keys, bearer tokens,
 * `user:password@` in URLs). Lines are scrubbed as text, so a secret nested anywhere in a field,
 * an error message or a stack is caught too.
 */
export type Scrub = (line: string) => string;

const REDACTED = '[REDACTED]';

/** Variable names whose values are secrets. */
const SECRET_NAME = /(^|_)(KEY|KEYS|TOKEN|SECRET|PASSWORD|PASS|PASSWD|CREDENTIALS?|AUTH|AUTHORIZATION|SEED|NKEY|JWT)(_|$)|API_?KEY/i;
/** Shorter values would scrub ordinary words and numbers out of every line. */
const MIN_SECRET_LENGTH = 8;
const URL_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^/\s:@"]*:([^@\s/"]+)@/gi;

const SHAPES: ReadonlyArray<readonly [RegExp, string]> = [
  // Berth API keys: the prefix is public (it indexes the record) and helps an operator; the secret is not.
  [/\b(bk_[a-z0-9]{12})_[A-Za-z0-9]{32}\b/g, `$1_${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/([a-z][a-z0-9+.-]*:\/\/[^/\s:@"]*):[^@\s/"]+@/gi, `$1:***@`],
];

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The secret values among an environment's variables (and passwords inside URL-valued ones). */
export function secretValuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (SECRET_NAME.test(name) && value.length >= MIN_SECRET_LENGTH) values.add(value);
    for (const match of value.matchAll(URL_PASSWORD)) if (match[1].length >= 4) values.add(decodeURIComponentSafe(match[1]));
  }
  return [...values];
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A scrubber for these secret values plus the known key shapes. */
export function secretScrubber(secrets: readonly string[]): Scrub {
  // Each value also as it appears inside a JSON string (quotes and backslashes escaped).
  const forms = new Set<string>();
  for (const secret of secrets) {
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  const values = forms.size > 0 ? new RegExp([...forms].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g') : null;
  return (line) => {
    let out = values ? line.replace(values, REDACTED) : line;
    for (const [pattern, replacement] of SHAPES) out = out.replace(pattern, replacement);
    return out;
  };
}
