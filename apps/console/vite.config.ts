import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The gateway serves the built files at /console/, so every asset URL carries that base.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  // Shared libraries the console bundles (keep in step with `paths` in tsconfig.json).
  resolve: { alias: { '@berth/sse': fileURLToPath(new URL('../../libs/sse/src/index.ts', import.meta.url)) } },
  build: { outDir: 'dist', emptyOutDir: true },
  server: { proxy: { '/v1': process.env.BERTH_API_URL ?? 'http://127.0.0.1:8080' } },
});
