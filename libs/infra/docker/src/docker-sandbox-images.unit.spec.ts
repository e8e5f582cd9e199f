import type { ImageRecipe } from '@berth/ports';
import { commitChanges, environmentImageHash } from './docker-sandbox-images';

const recipe: ImageRecipe = {
  base: 'berth/harness:latest',
  steps: [['npm', 'install', '--global', 'cowsay']],
  env: { HTTPS_PROXY: 'http://127.0.0.1:3128', npm_config_registry: 'http://registry.npm.test/' },
  files: [],
  keepalive: ['/bin/sh', '-c', 'sleep infinity'],
  grant: { environmentId: 'env_a', ecosystems: ['npm'], allowedHosts: [] },
};

describe('the tag of an environment image', () => {
  it('names what the steps install with: base image, steps, variables, files', () => {
    const hash = environmentImageHash('sha256:base', recipe);
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    expect(environmentImageHash('sha256:other', recipe)).not.toBe(hash);
    expect(environmentImageHash('sha256:base', { ...recipe, steps: [['npm', 'install', '--global', 'cowsay@2']] })).not.toBe(hash);
    expect(environmentImageHash('sha256:base', { ...recipe, env: { ...recipe.env, npm_config_registry: 'http://other.test/' } })).not.toBe(hash);
    expect(environmentImageHash('sha256:base', { ...recipe, files: [{ path: '/tmp/berth-build/k', base64: 'AA==' }] })).not.toBe(hash);
  });

  it('does not depend on what the build may reach, nor on the order of the variables (another environment with the same packages shares it)', () => {
    const hash = environmentImageHash('sha256:base', recipe);
    expect(environmentImageHash('sha256:base', { ...recipe, grant: { environmentId: 'env_b', ecosystems: ['npm'], allowedHosts: ['x.example'] } })).toBe(hash);
    expect(environmentImageHash('sha256:base', { ...recipe, env: { npm_config_registry: 'http://registry.npm.test/', HTTPS_PROXY: 'http://127.0.0.1:3128' } })).toBe(hash);
  });
});

describe('the config an environment image is committed with', () => {
  it('is the base image\'s workdir, command and entrypoint, uid 1000 and the image\'s labels: nothing of the build container\'s', () => {
    const base = { WorkingDir: '/workspace', Cmd: ['/bin/sh', '-c', "trap 'exit 0' TERM; sleep infinity & wait"], Entrypoint: null } as never;
    expect(commitChanges(base, '0123456789abcdef')).toEqual([
      'WORKDIR /workspace',
      `CMD ["/bin/sh","-c","trap 'exit 0' TERM; sleep infinity & wait"]`,
      'ENTRYPOINT []',
      'USER 1000:1000',
      'LABEL berth.image=environment berth.inputs=0123456789abcdef',
    ]);
    expect(commitChanges({ WorkingDir: '', Cmd: null, Entrypoint: ['/init'] } as never, 'h')).toEqual(['WORKDIR /', 'CMD []', 'ENTRYPOINT ["/init"]', 'USER 1000:1000', 'LABEL berth.image=environment berth.inputs=h']);
  });
});
