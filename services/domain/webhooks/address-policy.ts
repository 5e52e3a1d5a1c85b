import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where a webhook may be sent (SSRF): only to a global unicast address. Loopback, private, link-local,
 * unique-local, unspecified, multicast, shared (100.64/10), reserved and documentation ranges, and every
 * IPv6 form that embeds an IPv4 address (mapped, NAT64, 6to4, Teredo) are refused, the embedded address
 * judged by the same rule. ipaddr.js names the range; anything it does not call `unicast` is refused.
 */
export function refusedRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    return refusedRange((parsed as ipaddr.IPv6).toIPv4Address().toString());
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

export type Resolve = (hostname: string) => Promise<readonly LookupAddress[]>;

/** Every address the system resolver gives for a name (what a connection would use). */
export const resolveAll: Resolve = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error === null ? resolve(addresses) : reject(error),
    ),
  );

/** The host of a URL as the resolver and isIP take it: IPv6 literals without their brackets. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Why a webhook URL cannot be registered, or null: not http(s), credentials in it, or a host that is,
 * or resolves to, a refused address (unless private addresses are allowed). A name that does not
 * resolve now is refused too: nothing could be delivered to it.
 */
export async function webhookUrlProblem(
  text: string,
  { allowPrivate, resolve = resolveAll }: { allowPrivate: boolean; resolve?: Resolve },
): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (allowPrivate) return null;
  const host = bareHost(url);
  if (isIP(host) !== 0) {
    const range = refusedRange(host);
    return range === null ? null : `is a ${range} address, where webhooks are not sent`;
  }
  let addresses: readonly LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch {
    return `has a host name that does not resolve (${host})`;
  }
  for (const { address } of addresses) {
    const range = refusedRange(address);
    if (range !== null) return `resolves to ${address}, a ${range} address, where webhooks are not sent`;
  }
  return addresses.length === 0 ? `has a host name that does not resolve (${host})` : null;
}

/**
 * A `lookup` for http.request: resolves the name, refuses it if any address is refused, and hands the
 * socket the addresses it checked, so that the connection goes to one of them and no second resolution
 * (DNS rebinding) can send it elsewhere. Node asks for every address (`all: true`) when it tries the
 * families in turn (autoSelectFamily, on by default since Node 20), else for one.
 */
export function checkedLookup(resolve: Resolve = resolveAll): LookupFunction {
  return (hostname, options, callback): void => {
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.find(({ address }) => refusedRange(address) !== null);
        if (refused !== undefined || addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(
            refused === undefined
              ? `${hostname} did not resolve`
              : `${hostname} resolves to ${refused.address}, a ${refusedRange(refused.address)} address: refused`,
          );
          error.code = 'EWEBHOOKADDRESS';
          callback(error, '', 0);
          return;
        }
        if (options?.all === true) callback(null, [...addresses]);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
