import { defineConfig } from '@playwright/test';
import base from '../playwright.config';

/**
 * The same project recording its own video with Playwright's action overlays: Vaider must
 * keep `show`, and must give the verdict plain `npx playwright test` gives, with or without
 * Playwright's ffmpeg.
 */
export default defineConfig(base, {
  testDir: '../tests',
  use: {
    video: { mode: 'on', show: { actions: { position: 'top-left' }, test: { position: 'top-right' } } },
  },
});
