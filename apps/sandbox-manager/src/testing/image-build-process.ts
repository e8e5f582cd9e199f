/**
 * One image build composed as the sandbox-manager composes it (its configuration from the
 * environment, `openSandboxEngines`, the store's lease lock under a manager instance id), alone in
 * a process, for a test to SIGKILL mid-build: builds `BERTH_TEST_RECIPE` (an `ImageRecipe` as
 * JSON) and prints `built <image>`.
 *
 *   node -r @swc-node/register apps/sandbox-manager/src/testing/image-build-process.ts
 */
import { systemClock } from '@berth/core';
import type { ImageRecipe } from '@berth/ports';
import { LeaseLock } from '@berth/sandbox-lifecycle';
import { createStore } from '@berth/store';
import { silentLogger } from '@berth/testing';
import { managerInstanceId } from '../app/instance-id';
import { ManagerConfigSchema } from '../config/manager.config';
import { openSandboxEngines } from '../sandboxes/sandbox-engines';

async function main(): Promise<void> {
  const recipe = process.env['BERTH_TEST_RECIPE'];
  if (recipe === undefined) throw new Error('BERTH_TEST_RECIPE is not set');
  const config = ManagerConfigSchema.parse(process.env);
  const store = createStore(config.storeUrl);
  await store.init();
  const { images, close } = await openSandboxEngines(config, { 'berth.scope': config.scope }, silentLogger, new LeaseLock(store.leases, managerInstanceId(), systemClock));
  const built = await images.ensure(JSON.parse(recipe) as ImageRecipe);
  console.log(`built ${built.image}`);
  close();
  await store.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
