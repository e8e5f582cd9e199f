import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { checkDocker, checkEgress, checkGateway, checkModel, checkNats, checkStore, type DoctorTargets } from '../doctor/probes';
import { renderReport, type CheckResult } from '../doctor/report';
import { ReportedFailure } from '../exit-codes';
import type { OptionValues } from '../args';
import { str, type Command } from './command';

/** Where npm start writes doctor's creds (under BERTH_HOME, as scripts/run.sh lays it out). */
const npmStartDoctorCreds = (env: Readonly<Record<string, string | undefined>>): string => join(env.BERTH_HOME ?? '.berth', 'nats-auth', 'creds', 'doctor.creds');

/** The targets, from options first, then the variables the services read, then their defaults. */
function targets(o: OptionValues, env: Readonly<Record<string, string | undefined>>, apiUrl: string | null): DoctorTargets {
  const opt = (name: string) => str(o, name);
  const seconds = Number(opt('timeout') ?? '3');
  return {
    // As npm start chooses: DOCKER_HOST, else the system engine's socket when there is one, else Berth's own.
    dockerHost: opt('docker-host') ?? env.DOCKER_HOST ?? (existsSync('/var/run/docker.sock') ? 'unix:///var/run/docker.sock' : 'unix:///run/berth-docker.sock'),
    sandboxImage: opt('image') ?? env.BERTH_SANDBOX_IMAGE ?? 'berth/harness:latest',
    natsUrl: opt('nats-url') ?? env.NATS_URL ?? 'nats://127.0.0.1:4222',
    // Doctor's own read-only user, as npm start writes it.
    natsCreds: opt('nats-creds') ?? env.NATS_CREDS ?? (existsSync(npmStartDoctorCreds(env)) ? npmStartDoctorCreds(env) : null),
    storeUrl: opt('store') ?? env.BERTH_STORE_URL ?? 'sqlite:./.berth/berth.db',
    modelBaseUrl: opt('model-url') ?? (env.BERTH_MODEL_BASE_URL?.trim() || null),
    // As the services default, except where npm start puts it (beside its database).
    egressDir: opt('egress-dir') ?? env.BERTH_EGRESS_DIR ?? (existsSync('.berth/egress') ? '.berth/egress' : '/run/berth/egress'),
    apiUrl,
    timeoutMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 3000,
  };
}

export const doctorCommands: readonly Command[] = [
  {
    name: ['doctor'],
    args: [],
    options: {
      'docker-host': { type: 'string', help: 'Docker engine (default: $DOCKER_HOST, else the system socket if any, else unix:///run/berth-docker.sock)' },
      image: { type: 'string', help: 'sandbox image (default: $BERTH_SANDBOX_IMAGE, else berth/harness:latest)' },
      'nats-url': { type: 'string', help: 'NATS (default: $NATS_URL, else nats://127.0.0.1:4222)' },
      'nats-creds': { type: 'string', help: 'NATS credentials (default: $NATS_CREDS, else $BERTH_HOME/nats-auth/creds/doctor.creds as npm start writes it)' },
      store: { type: 'string', help: 'store URL (default: $BERTH_STORE_URL, else sqlite:./.berth/berth.db)' },
      'model-url': { type: 'string', help: 'model endpoint (default: $BERTH_MODEL_BASE_URL)' },
      'egress-dir': { type: 'string', help: 'egress directory (default: $BERTH_EGRESS_DIR, else .berth/egress if there, else /run/berth/egress)' },
      gateway: { type: 'boolean', help: 'also ask the gateway at --api-url for /readyz' },
      timeout: { type: 'string', help: 'seconds each check may take (default 3)' },
    },
    summary: 'check the engine, images, NATS, store, model endpoint, egress (and gateway) of this machine; says what is wrong',
    local: true,
    run: async (ctx, _a, o) => {
      const t = targets(o, ctx.env, o['gateway'] === true ? ctx.api.baseUrl : null);
      const [docker, nats, store, model, egress, gateway] = await Promise.all([checkDocker(t), checkNats(t), checkStore(t), checkModel(t), checkEgress(t), checkGateway(t)]);
      const results: CheckResult[] = [...docker, nats, store, model, egress, ...(gateway ? [gateway] : [])];
      const output = { json: { ok: results.every((r) => r.ok), checks: results }, human: renderReport(results) };
      if (!output.json.ok) throw new ReportedFailure(output);
      return output;
    },
  },
];
