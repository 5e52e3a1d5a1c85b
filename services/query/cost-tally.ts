import type { serviceCostSchema } from '../../schemas/http/cost-responses.ts';
import type { WireOf } from '../../schemas/http/response-parts.ts';
import type { UsageEventType } from '../../schemas/http/usage-event.ts';
import { Exact } from '../shared/exact-decimal.ts';

/**
 * One aggregated row of a cost query: money and quantities as ClickHouse's quoted decimals. Its
 * event type is one ingest accepts: no usage record is written with another.
 */
export interface CostLine {
  readonly provider?: string;
  readonly service: string;
  readonly event_type: UsageEventType;
  readonly unit: string;
  readonly cost_sum: string;
  readonly quantity_sum: string;
  readonly events_sum?: string;
}

export type ServiceCost = WireOf<typeof serviceCostSchema>;

/** Sums use the exact clone: decimal.js's default 20 significant digits would round a total of 1,000.000000000000000001. */
export const ZERO = new Exact(0);

/** Text order by UTF-16 code units, as ClickHouse orders ASCII keys. */
export const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Money on the wire: a plain decimal string, exact, no exponent ("0.0000003", "0"). */
export const money = (value: Exact | string): string => new Exact(value).toFixed();

/** Sums cost lines exactly into a total, a by-provider map and a by-service list. */
export class CostTally {
  private total = ZERO;
  private eventCount = 0;
  private readonly providers = new Map<string, Exact>();
  private readonly services = new Map<
    string,
    { event_type: UsageEventType; service: string; unit: string; quantity: Exact; cost: Exact }
  >();

  add(line: CostLine): void {
    const cost = new Exact(line.cost_sum);
    this.total = this.total.plus(cost);
    this.eventCount += Number(line.events_sum ?? 0);
    if (line.provider !== undefined)
      this.providers.set(line.provider, (this.providers.get(line.provider) ?? ZERO).plus(cost));
    const key = `${line.event_type}\u0000${line.service}\u0000${line.unit}`;
    const entry = this.services.get(key) ?? {
      event_type: line.event_type,
      service: line.service,
      unit: line.unit,
      quantity: ZERO,
      cost: ZERO,
    };
    this.services.set(key, { ...entry, quantity: entry.quantity.plus(line.quantity_sum), cost: entry.cost.plus(cost) });
  }

  get totalCost(): Exact {
    return this.total;
  }

  get events(): number {
    return this.eventCount;
  }

  /** Providers in name order. */
  byProvider(): Record<string, string> {
    return Object.fromEntries(
      [...this.providers].sort(([a], [b]) => compareText(a, b)).map(([provider, cost]) => [provider, money(cost)]),
    );
  }

  /** Services in event-type order. */
  byService(): ServiceCost[] {
    return [...this.services.values()]
      .sort((a, b) => (a.event_type < b.event_type ? -1 : a.event_type > b.event_type ? 1 : a.unit < b.unit ? -1 : 1))
      .map((s) => ({
        event_type: s.event_type,
        service: s.service,
        unit: s.unit,
        quantity: money(s.quantity),
        cost: money(s.cost),
      }));
  }
}
