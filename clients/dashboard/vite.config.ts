import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built to dist/, which auth serves (DASHBOARD_DIR) on the account API's own origin.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
});
