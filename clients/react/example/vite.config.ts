import { defineConfig } from 'vite';

// The example uses the packages as shipped: @herald/react's dist/ and the SDK's browser build.
export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    rollupOptions: {
      // lucide-react marks its modules "use client" (for Next.js); meaningless in a Vite bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  logLevel: 'warn',
});
