/**
 * Byte decoding exactly as Python's `json.loads(bytes)` does it: `json.detect_encoding` picks
 * UTF-8 (a BOM is stripped), UTF-16 or UTF-32 from the first bytes, and decoding runs with
 * `surrogatepass`, so an encoded lone surrogate is accepted. The result is one entry per Python
 * code point, because JSONDecodeError positions count code points. `undefined` means Python
 * raised UnicodeDecodeError, which FastAPI answers with a 400.
 */
export function decodeJsonBytes(raw: Uint8Array): Uint32Array | undefined {
  const b = raw;
  if (startsWith(b, [0, 0, 0xfe, 0xff])) return decodeUtf32(b.subarray(4), false);
  if (startsWith(b, [0xff, 0xfe, 0, 0])) return decodeUtf32(b.subarray(4), true);
  if (startsWith(b, [0xfe, 0xff])) return decodeUtf16(b.subarray(2), false);
  if (startsWith(b, [0xff, 0xfe])) return decodeUtf16(b.subarray(2), true);
  if (startsWith(b, [0xef, 0xbb, 0xbf])) return decodeUtf8(b.subarray(3));
  if (b.length >= 4) {
    if (b[0] === 0) return b[1] ? decodeUtf16(b, false) : decodeUtf32(b, false);
    if (b[1] === 0) return b[2] || b[3] ? decodeUtf16(b, true) : decodeUtf32(b, true);
  } else if (b.length === 2) {
    if (b[0] === 0) return decodeUtf16(b, false);
    if (b[1] === 0) return decodeUtf16(b, true);
  }
  return decodeUtf8(b);
}

function startsWith(b: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((byte, i) => b[i] === byte);
}

/** UTF-8 with `surrogatepass`: strict about overlong forms and range, lenient about surrogates. */
export function decodeUtf8(b: Uint8Array): Uint32Array | undefined {
  const out = new Uint32Array(b.length);
  let n = 0;
  for (let i = 0; i < b.length;) {
    const lead = b[i]!;
    if (lead < 0x80) {
      out[n++] = lead;
      i += 1;
      continue;
    }
    const size =
      lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (size === 0 || i + size > b.length) return undefined;
    let cp = lead & (0xff >> (size + 1));
    for (let k = 1; k < size; k++) {
      const cont = b[i + k]!;
      if ((cont & 0xc0) !== 0x80) return undefined;
      cp = (cp << 6) | (cont & 0x3f);
    }
    const min = size === 2 ? 0x80 : size === 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff) return undefined;
    out[n++] = cp;
    i += size;
  }
  return out.subarray(0, n);
}

function decodeUtf16(b: Uint8Array, littleEndian: boolean): Uint32Array | undefined {
  if (b.length % 2 !== 0) return undefined;
  const out = new Uint32Array(b.length / 2);
  let n = 0;
  const unit = (i: number): number => (littleEndian ? b[i]! | (b[i + 1]! << 8) : (b[i]! << 8) | b[i + 1]!);
  for (let i = 0; i < b.length; i += 2) {
    const u = unit(i);
    if (u >= 0xd800 && u <= 0xdbff && i + 2 < b.length) {
      const low = unit(i + 2);
      if (low >= 0xdc00 && low <= 0xdfff) {
        out[n++] = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00);
        i += 2;
        continue;
      }
    }
    out[n++] = u;
  }
  return out.subarray(0, n);
}

function decodeUtf32(b: Uint8Array, littleEndian: boolean): Uint32Array | undefined {
  if (b.length % 4 !== 0) return undefined;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out = new Uint32Array(b.length / 4);
  for (let i = 0; i < out.length; i++) {
    const cp = view.getUint32(i * 4, littleEndian);
    if (cp > 0x10ffff) return undefined;
    out[i] = cp;
  }
  return out;
}

/** JS string of Python code points; lone surrogates stay lone UTF-16 units. */
export function codePointsToString(cps: Uint32Array, start = 0, end = cps.length): string {
  // a plain loop beats spreading into String.fromCodePoint by far for the short runs JSON has
  let s = '';
  for (let i = start; i < end; i++) {
    const cp = cps[i]!;
    s += cp < 0x10000 ? String.fromCharCode(cp) : String.fromCodePoint(cp);
  }
  return s;
}
