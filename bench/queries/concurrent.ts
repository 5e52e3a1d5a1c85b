import autocannon from 'autocannon';
import { percentile } from './measure.ts';

/** What `clients` concurrent keep-alive clients, each sending its next request on an answer, got. */
export interface Throughput {
  readonly clients: number;
  readonly requestsPerS: number;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly requests: number;
}

/** How long a request may wait for its answer before it counts as an error. */
const ANSWER_TIMEOUT_S = 60;

/**
 * `clients` connections asking `url` back to back for `seconds` (autocannon, as the target is stated),
 * each answer's time recorded. Any answer but a 200, or a request error, fails the run: a figure of
 * errors served fast would mean nothing.
 */
export function measureConcurrent(
  url: string,
  headers: Record<string, string>,
  clients: number,
  seconds: number,
): Promise<Throughput> {
  return new Promise((resolve, reject) => {
    const times: number[] = [];
    let failed = 0;
    // autocannon resets a request after 10 s by default and counts it an error; an answer that slow is a
    // figure here (32 dashboards at 100 million events wait that long), so only a minute is an error.
    const instance = autocannon(
      { url, headers, connections: clients, duration: seconds, timeout: ANSWER_TIMEOUT_S },
      (error, result) => {
        if (error) return reject(error);
        if (failed > 0 || result.errors > 0)
          return reject(new Error(`${url}: ${failed} answers other than 200 and ${result.errors} errors`));
        times.sort((a, b) => a - b);
        // No answer within the load's time (every request slower than that): null percentiles.
        resolve({
          clients,
          requestsPerS: Math.round((times.length / result.duration) * 10) / 10,
          p50: times.length === 0 ? null : round(percentile(times, 50)),
          p95: times.length === 0 ? null : round(percentile(times, 95)),
          requests: times.length,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode === 200) times.push(responseTime);
      else failed += 1;
    });
  });
}

const round = (ms: number) => Math.round(ms * 100) / 100;
