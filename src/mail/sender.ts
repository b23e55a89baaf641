// Sending a message: the small port the use cases call, and its SMTP implementation over nodemailer.
import nodemailer from 'nodemailer';
import { ServiceError } from '../errors.js';

export interface Message {
  /** the display name of the sender; the address is the deployment's SERVICE_SMTP_FROM */
  senderName: string;
  to: string;
  subject: string;
  text: string;
}

export interface MailSender {
  /** Resolves once the SMTP server accepted the message; a refusal or an unreachable server is a 502. */
  send(message: Message): Promise<void>;
}

/** SERVICE_SMTP_URL and SERVICE_SMTP_FROM; one connection per message (no pool), so nothing stays open to close. */
export function createSmtpSender(url: string, from: string): MailSender {
  const transport = nodemailer.createTransport(url);
  return {
    async send(message) {
      try {
        await transport.sendMail({
          from: { name: message.senderName, address: from },
          to: message.to,
          subject: message.subject,
          text: message.text,
        });
      } catch (error) {
        // The server's answer may name hosts or accounts: say only that it failed.
        throw new ServiceError('ERR_BAD_GATEWAY', 'the mail server (SERVICE_SMTP_URL) did not accept the message; try again later', { cause: error });
      }
    },
  };
}
