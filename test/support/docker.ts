import { execFile } from 'node:child_process';

/** True when a Docker engine answers (not merely a docker client on the PATH). */
export function dockerEngineAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5_000 }, (error, stdout) => {
      resolve(error === null && stdout.trim() !== '');
    });
  });
}
