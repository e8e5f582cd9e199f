import { z } from 'zod';

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Everything the gateway reads from its environment. */
export const GatewayConfigSchema = z
  .object({
    NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    BERTH_STORE_URL: z.string().min(1).default('sqlite:./.berth/berth.db'),
    PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
    HOST: z.string().min(1).default('127.0.0.1'),
    BERTH_COMMAND_TIMEOUT_MS: int(10_000),
    BERTH_SSE_HEARTBEAT_MS: int(15_000),
    BERTH_BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i).default('1mb'),
    BERTH_PROBE_TIMEOUT_MS: int(1_000),
    BERTH_CONSOLE_DIR: z.string().min(1).default('apps/console/dist'),
    /** Largest file upload in bytes (the reference API's limit: 500 MB). */
    BERTH_FILE_MAX_BYTES: int(500 * 1024 * 1024),
    /** SQLite store only: where file contents live (default `blobs/` beside the database). */
    BERTH_BLOB_DIR: z.string().min(1).optional(),
    /** How long a workspace read (archive, file, listing) may take the sandbox-manager. */
    BERTH_WORKSPACE_TIMEOUT_MS: int(120_000),
  })
  .transform((env) => ({
    natsUrl: env.NATS_URL,
    storeUrl: env.BERTH_STORE_URL,
    port: env.PORT,
    host: env.HOST,
    commandTimeoutMs: env.BERTH_COMMAND_TIMEOUT_MS,
    heartbeatMs: env.BERTH_SSE_HEARTBEAT_MS,
    bodyLimit: env.BERTH_BODY_LIMIT,
    probeTimeoutMs: env.BERTH_PROBE_TIMEOUT_MS,
    consoleDir: env.BERTH_CONSOLE_DIR,
    fileMaxBytes: env.BERTH_FILE_MAX_BYTES,
    blobDir: env.BERTH_BLOB_DIR,
    workspaceTimeoutMs: env.BERTH_WORKSPACE_TIMEOUT_MS,
  }));
