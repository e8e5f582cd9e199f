import type { z } from 'zod';

/**
 * Parses a service's configuration from the environment once, at boot. A bad or missing value
 * stops the service with one line per problem, naming the variable.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`).join('\n');
  throw new Error(`invalid configuration:\n${problems}`);
}
