/** A turn whose harness cannot be started, with the named reason the kernel records. */
export class TurnFailure extends Error {
  constructor(
    readonly reason: 'model_error' | 'harness_failed',
    message: string,
  ) {
    super(message);
    this.name = 'TurnFailure';
  }
}

export const NO_MODEL_MESSAGE =
  'no model is configured for this harness: start the sandbox-manager with BERTH_MODEL_BASE_URL (the model server root, e.g. https://api.anthropic.com) ' +
  'and BERTH_MODEL_API_KEY, or set config.model.base_url (and config.model.api_key_env) on the environment';

export const noKeyMessage = (secret: string): string =>
  `no model API key is configured: set ${secret} in the sandbox-manager's environment (the key is handed to the harness only through its process environment)`;
