import { defineConfig } from 'vite';

// The example uses the packages as shipped: @herald/react's dist/ and the SDK's browser build.
// `make example` serves it (serve.ts); `npx vite --config clients/react/example/vite.config.ts`
// does too, over plain http, once both packages are built.
export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic' } },
  // Found by the dev server only inside @herald/react's dist/, after the first page load, and
  // then re-bundled with a reload (the 404 for lucide-react.js a first visit saw): named up front.
  optimizeDeps: {
    include: [
      'lucide-react',
      'react',
      'react-dom/client',
      'react/jsx-runtime',
      'react/jsx-dev-runtime',
    ],
  },
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
});
