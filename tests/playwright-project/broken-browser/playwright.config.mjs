// A config whose browser cannot launch: the executable does not exist.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: '.',
  workers: 1,
  use: {
    browserName: 'chromium',
    launchOptions: { executablePath: '/nonexistent/vaider-test/chromium' },
  },
});
