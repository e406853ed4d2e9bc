// The QA benchmark's Playwright side (crates/vaider-bench/src/bin/qa.rs): the fixture project's
// own config, with the benchmark's ten steps as its tests and Vaider's viewport (1280x800).
import { defineConfig } from '@playwright/test';
import project from '../playwright.config.mjs';

export default defineConfig({
  ...project,
  testDir: '.',
  use: { ...project.use, viewport: { width: 1280, height: 800 } },
});
