/** One dependency the gateway needs to serve (store, broker); rejects when unreachable. */
export type ReadinessCheck = Readonly<{ name: string; check(): Promise<void> }>;
