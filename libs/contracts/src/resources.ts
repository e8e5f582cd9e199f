import { posix } from 'node:path';
import { z } from 'zod';
import { IsoTimeSchema, TokenSchema } from './tokens';

/**
 * Session resources (`BetaManagedAgentsSessionResource`: `file`, `github_repository`) as the
 * journal records them, and the paths a sandbox lays out for a session. A repository's
 * `authorization_token` is never part of a resource: it is kept in the store's session secrets
 * under the resource id, so no event, snapshot or log holds it.
 */
export const SessionPaths = {
  /** The agent's working tree; kept per session across sandboxes. */
  workspace: '/workspace',
  /** Uploads and outputs; kept per session across sandboxes. */
  session: '/mnt/session',
  uploads: '/mnt/session/uploads',
  /** Files the agent writes here become Files API files scoped to the session after each turn. */
  outputs: '/mnt/session/outputs',
  home: '/home/agent',
} as const;

/** Where a resource may be mounted: below one of these, never Berth's own files or the outputs. */
const MOUNT_ROOTS = [SessionPaths.workspace, SessionPaths.uploads, SessionPaths.home] as const;
const FORBIDDEN_UNDER = [`${SessionPaths.home}/.berth`] as const;

/** Why a mount path is refused, or null when it is fine. */
export function mountPathProblem(path: string): string | null {
  if (path.length > 1024 || /[\u0000-\u001f\u007f]/.test(path)) return 'must be at most 1024 printable characters';
  if (!path.startsWith('/')) return 'must be an absolute path';
  if (posix.normalize(path) !== path || path.endsWith('/') || path.split('/').includes('..')) return 'must be a normalized path (no `..`, `//` or trailing `/`)';
  if (!MOUNT_ROOTS.some((root) => path.startsWith(`${root}/`))) return `must be below ${MOUNT_ROOTS.join(', ')}`;
  if (FORBIDDEN_UNDER.some((root) => path === root || path.startsWith(`${root}/`))) return `must not be below ${FORBIDDEN_UNDER.join(', ')}`;
  return null;
}

export const MountPathSchema = z.string().superRefine((path, ctx) => {
  const problem = mountPathProblem(path);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

/** A git branch name as git accepts it (check-ref-format, simplified to a safe subset). */
const BRANCH = /^(?!\/|.*\/\/|.*\.\.|.*@\{|.*\.lock$|.*\/$|-)[A-Za-z0-9._\/-]{1,255}$/;

export const CheckoutSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('branch'), name: z.string().regex(BRANCH, 'must be a branch name') }),
  z.object({ type: z.literal('commit'), sha: z.string().regex(/^[0-9a-fA-F]{7,64}$/, 'must be a commit SHA') }),
]);
export type Checkout = z.infer<typeof CheckoutSchema>;

/** Why a repository URL is refused, or null: http(s) only, no credentials in it (use `authorization_token`). */
export function repositoryUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be a URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be an http(s) URL';
  if (parsed.username !== '' || parsed.password !== '') return 'must not carry credentials: pass the token as authorization_token';
  if (parsed.hash !== '' || url.length > 2048) return 'must be a plain repository URL of at most 2048 characters';
  return null;
}

export const RepositoryUrlSchema = z.string().superRefine((url, ctx) => {
  const problem = repositoryUrlProblem(url);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

/** `/workspace/<repo>`: the last path segment of the URL without `.git`. */
export function defaultRepositoryMountPath(url: string): string {
  const segment = new URL(url).pathname.split('/').filter(Boolean).pop() ?? '';
  const name = segment.replace(/\.git$/, '').replace(/[^A-Za-z0-9._-]/g, '-').replace(/^\.+/, '');
  return `${SessionPaths.workspace}/${name || 'repo'}`;
}

export const defaultFileMountPath = (fileId: string): string => `${SessionPaths.uploads}/${fileId}`;

const stamps = { id: TokenSchema, mount_path: MountPathSchema, created_at: IsoTimeSchema, updated_at: IsoTimeSchema };

export const SessionResourceSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('file'), file_id: TokenSchema, ...stamps }),
  z.object({ type: z.literal('github_repository'), url: RepositoryUrlSchema, checkout: CheckoutSchema.nullable(), ...stamps }),
]);
export type SessionResource = z.infer<typeof SessionResourceSchema>;

/** At most this many resources per session. */
export const MAX_SESSION_RESOURCES = 100;
