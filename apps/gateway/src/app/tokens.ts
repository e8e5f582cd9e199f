/** Nest injection token for the composed dependencies (see create-gateway-app.ts). */
export const DEPS = Symbol('berth.gateway.deps');
