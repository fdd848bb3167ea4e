/**
 * Just enough of the D-Bus wire format for dbus-notifications.ts: little-endian messages whose
 * header fields are strings, object paths, signatures or uint32s, bodies of flat s/o/u/i/g/as
 * arguments, and the leading s/u arguments of a body read back.
 */

export type Value = string | number | string[];
/** A message as read: its header fields and, for Notify, the strings it starts with. */
export interface Message {
  type: number;
  serial: number;
  path?: string;
  iface?: string;
  member?: string;
  sender?: string;
  replySerial?: number;
  signature?: string;
  body: Buffer;
}

class Writer {
  parts: number[] = [];
  get length() {
    return this.parts.length;
  }
  align(n: number) {
    while (this.parts.length % n) this.parts.push(0);
  }
  byte(b: number) {
    this.parts.push(b & 0xff);
  }
  u32(v: number) {
    this.align(4);
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    this.parts.push(...b);
  }
  str(s: string) {
    const b = Buffer.from(s);
    this.u32(b.length);
    this.parts.push(...b, 0);
  }
  sig(s: string) {
    this.byte(s.length);
    this.parts.push(...Buffer.from(s), 0);
  }
  /** Values of a flat signature of s, o, u, i, g and as. */
  values(signature: string, values: Value[]) {
    const types = signature.match(/as|[souig]/g) ?? [];
    types.forEach((t, i) => {
      const v = values[i] as Value;
      if (t === 's' || t === 'o') this.str(v as string);
      else if (t === 'u' || t === 'i') this.u32(v as number);
      else if (t === 'g') this.sig(v as string);
      else {
        this.u32(0);
        const at = this.length;
        for (const s of v as string[]) this.str(s);
        const len = this.length - at;
        const b = Buffer.alloc(4);
        b.writeUInt32LE(len);
        this.parts.splice(at - 4, 4, ...b);
      }
    });
  }
  buffer() {
    return Buffer.from(this.parts);
  }
}

/** Encodes one message; `fields` maps header field codes to [signature, value]. */
export function encode(
  type: number,
  serial: number,
  fields: Array<[number, string, string | number]>,
  signature: string,
  values: Value[],
): Buffer {
  const body = new Writer();
  body.values(signature, values);
  const h = new Writer();
  h.byte(0x6c); // 'l'
  h.byte(type);
  h.byte(0);
  h.byte(1);
  h.u32(body.length);
  h.u32(serial);
  const all = signature ? [...fields, [8, 'g', signature] as [number, string, string]] : fields;
  h.u32(0);
  const start = h.length;
  for (const [code, sig, value] of all) {
    h.align(8);
    h.byte(code);
    h.sig(sig);
    h.values(sig, [value]);
  }
  const fieldsLen = h.length - start;
  const lenBytes = Buffer.alloc(4);
  lenBytes.writeUInt32LE(fieldsLen);
  h.parts.splice(12, 4, ...lenBytes);
  h.align(8);
  return Buffer.concat([h.buffer(), body.buffer()]);
}

/** One complete message from the front of `buf`, or undefined until more bytes come. */
export function decode(buf: Buffer): { message: Message; size: number } | undefined {
  if (buf.length < 16) return undefined;
  const bodyLen = buf.readUInt32LE(4);
  const fieldsLen = buf.readUInt32LE(12);
  const bodyAt = Math.ceil((16 + fieldsLen) / 8) * 8;
  const size = bodyAt + bodyLen;
  if (buf.length < size) return undefined;
  const m: Message = {
    type: buf[1] as number,
    serial: buf.readUInt32LE(8),
    body: buf.subarray(bodyAt, size),
  };
  let at = 16;
  while (at < 16 + fieldsLen) {
    at = Math.ceil(at / 8) * 8;
    const code = buf[at] as number;
    const sigLen = buf[at + 1] as number;
    const sig = buf.toString('latin1', at + 2, at + 2 + sigLen);
    at += 3 + sigLen;
    let value: string | number;
    if (sig === 'u') {
      at = Math.ceil(at / 4) * 4;
      value = buf.readUInt32LE(at);
      at += 4;
    } else if (sig === 'g') {
      const n = buf[at] as number;
      value = buf.toString('utf8', at + 1, at + 1 + n);
      at += n + 2;
    } else {
      at = Math.ceil(at / 4) * 4;
      const n = buf.readUInt32LE(at);
      value = buf.toString('utf8', at + 4, at + 4 + n);
      at += n + 5;
    }
    if (code === 1) m.path = value as string;
    else if (code === 2) m.iface = value as string;
    else if (code === 3) m.member = value as string;
    else if (code === 5) m.replySerial = value as number;
    else if (code === 7) m.sender = value as string;
    else if (code === 8) m.signature = value as string;
  }
  return { message: m, size };
}

/** The leading `s`/`u` arguments of a body (Notify's: app, replaces, icon, summary, body). */
export function leading(body: Buffer, signature: string): Value[] {
  const out: Value[] = [];
  let at = 0;
  for (const t of signature) {
    if (t !== 's' && t !== 'u') break;
    at = Math.ceil(at / 4) * 4;
    const n = body.readUInt32LE(at);
    if (t === 'u') {
      out.push(n);
      at += 4;
    } else {
      out.push(body.toString('utf8', at + 4, at + 4 + n));
      at += n + 5;
    }
  }
  return out;
}
