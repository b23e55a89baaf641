// A real SMTP receiver on loopback (smtp-server), keeping each message it accepts with its text decoded.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** the raw header block */
  headers: string;
  subject: string;
  /** the text part, transfer encoding undone, lines ending in \n */
  text: string;
}

export interface SmtpReceiver {
  url: string;
  received: ReceivedMail[];
  /** while set, every message is refused with this SMTP code (e.g. 550) */
  refuseWith: number | undefined;
  close(): Promise<void>;
}

function header(headers: string, name: string): string {
  const m = new RegExp(`^${name}:(.*(?:\\r?\\n[ \\t].*)*)`, 'im').exec(headers);
  return (m?.[1] ?? '').replace(/\r?\n[ \t]/g, ' ').trim();
}

function decodeText(encoding: string, body: string): string {
  if (/quoted-printable/i.test(encoding)) {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  if (/base64/i.test(encoding)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const receiver: SmtpReceiver = { url: '', received: [], refuseWith: undefined, close: async () => {} };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (receiver.refuseWith !== undefined) {
          const refusal = Object.assign(new Error('mailbox unavailable'), { responseCode: receiver.refuseWith });
          callback(refusal);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.search(/\r?\n\r?\n/);
        const headers = raw.slice(0, split);
        const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
        receiver.received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          headers,
          subject: header(headers, 'Subject'),
          text: decodeText(header(headers, 'Content-Transfer-Encoding'), body).replace(/\r\n/g, '\n'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  receiver.url = `smtp://127.0.0.1:${port}`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}

/** The password-reset link of a message: the first URL with a token. */
export function resetLink(mail: ReceivedMail): URL {
  const m = /(https?:\/\/\S+\/password-reset\?token=[\w.-]+)/.exec(mail.text);
  if (!m) throw new Error(`no reset link in: ${mail.text}`);
  return new URL(m[1] as string);
}
