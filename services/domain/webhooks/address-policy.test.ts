import { describe, expect, it } from 'vitest';
import { checkedLookup, refusedRange, webhookUrlProblem, type Resolve } from './address-policy.ts';

const resolvingTo =
  (...addresses: string[]): Resolve =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('which addresses a webhook may reach', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusedRange(address)).toBe(range);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '::ffff:93.184.215.14'])(
    'allows the global unicast address %s',
    (address) => expect(refusedRange(address)).toBeNull(),
  );

  it('says so when a text is not an address', () => {
    expect(refusedRange('example.com')).toBe('not an IP address');
  });
});

describe('registering a webhook URL', () => {
  const check = (url: string, resolve: Resolve = resolvingTo('93.184.215.14'), allowPrivate = false) =>
    webhookUrlProblem(url, { allowPrivate, resolve });

  it('accepts a public host and literal', async () => {
    expect(await check('https://hooks.example.com/in')).toBeNull();
    expect(await check('http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/in')).toBeNull();
  });

  it('refuses literals and names that reach a refused address, unless private addresses are allowed', async () => {
    expect(await check('http://[::1]:9000/')).toContain('loopback');
    expect(await check('http://internal.example/', resolvingTo('93.184.215.14', '10.0.0.7'))).toContain(
      'resolves to 10.0.0.7, a private address',
    );
    expect(await check('http://127.0.0.1/', resolvingTo(), true)).toBeNull();
  });

  it('refuses what is not an http(s) URL, credentials in it, and a name that does not resolve', async () => {
    expect(await check('not a url')).toBe('is not a valid URL');
    expect(await check('file:///etc/passwd')).toBe('must be an http or https URL');
    expect(await check('https://user:pw@hooks.example.com/')).toBe('must not carry credentials');
    const failing: Resolve = async () => Promise.reject(new Error('ENOTFOUND'));
    expect(await check('https://nowhere.invalid/', failing)).toContain('does not resolve');
  });
});

describe('the lookup a delivery connects through', () => {
  const lookup = (resolve: Resolve, hostname = 'hooks.example.com') =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: unknown }>((done) =>
      checkedLookup(resolve)(hostname, {}, (error, address, family) => done({ error, address, family })),
    );

  it('hands the socket the address it checked', async () => {
    expect(await lookup(resolvingTo('93.184.215.14'))).toEqual({ error: null, address: '93.184.215.14', family: 4 });
  });

  it('hands every checked address when Node asks for all (autoSelectFamily, Node 20’s default)', async () => {
    const all = await new Promise<unknown>((done) =>
      checkedLookup(resolvingTo('93.184.215.14'))('hooks.example.com', { all: true }, (error, addresses) =>
        done({ error, addresses }),
      ),
    );
    expect(all).toEqual({ error: null, addresses: [{ address: '93.184.215.14', family: 4 }] });
  });

  it('refuses, inside a real request, a name resolving to a refused address (not a malformed lookup)', async () => {
    const { default: http } = await import('node:http');
    const error = await new Promise<NodeJS.ErrnoException>((done) => {
      const request = http.request('http://rebinding.example/', {
        agent: false,
        lookup: checkedLookup(resolvingTo('127.0.0.1')),
      });
      request.on('error', done);
      request.end();
    });
    expect(error.code).toBe('EWEBHOOKADDRESS');
  });

  it('refuses a name that resolves (now: DNS rebinding) to a refused address', async () => {
    const { error } = await lookup(resolvingTo('169.254.169.254'));
    expect(error?.code).toBe('EWEBHOOKADDRESS');
    expect(error?.message).toContain('linkLocal');
  });
});
