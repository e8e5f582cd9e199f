import { isModelKeySecretName } from './environment-settings';

describe('model key names an environment may use', () => {
  it.each(['BERTH_MODEL_API_KEY', 'BERTH_MODEL_KEY_TEAM_A', 'BERTH_MODEL_KEY_1'])('accepts %s', (name) => {
    expect(isModelKeySecretName(name)).toBe(true);
  });

  it.each(['BERTH_STORE_URL', 'NATS_URL', 'PATH', 'HOME', 'BERTH_MODEL_KEY_', 'berth_model_key_x', 'BERTH_MODEL_BASE_URL'])(
    'refuses %s (its value must never reach a harness)',
    (name) => {
      expect(isModelKeySecretName(name)).toBe(false);
    },
  );
});
