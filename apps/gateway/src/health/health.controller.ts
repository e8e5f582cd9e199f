import { Controller, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DEPS } from '../app/tokens';
import type { GatewayDeps } from '../app/gateway-deps';
import { ApiRoute, defineRoute } from '../http/route';

const CHECK_TIMEOUT_MS = 2_000;

export const HealthRoutes = {
  healthz: defineRoute({ method: 'GET', path: '/healthz', tag: 'meta', summary: 'The process is up', public: true }),
  readyz: defineRoute({ method: 'GET', path: '/readyz', tag: 'meta', summary: 'Store and broker reachable (503 otherwise)', public: true }),
} as const;

const withTimeout = (work: Promise<void>): Promise<void> =>
  Promise.race([work, new Promise<void>((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref())]);

@Controller()
export class HealthController {
  constructor(@Inject(DEPS) private readonly deps: GatewayDeps) {}

  @ApiRoute(HealthRoutes.healthz)
  healthz() {
    return { status: 'ok' };
  }

  @ApiRoute(HealthRoutes.readyz)
  async readyz(@Res() res: Response): Promise<void> {
    const results = await Promise.all(
      this.deps.readiness.map(async (c) => {
        try {
          await withTimeout(c.check());
          return [c.name, 'ok'] as const;
        } catch {
          return [c.name, 'unreachable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  }
}
