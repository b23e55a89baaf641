// A browser for the hosted sign-in page, enough for tests: a cookie jar, redirects followed on the service
// and stopped at the client's redirect_uri, and the sign-in form filled in and submitted.
import { Agent, fetch } from 'undici';

export interface Step {
  status: number;
  /** the Location of a redirect */
  location?: string;
  html: string;
  headers: Headers;
}

export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly agent: Agent = new Agent({ keepAliveTimeout: 1000 })) {}

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair as string).indexOf('=');
      const maxAge = /max-age=(\d+)/i.exec(line);
      const name = (pair as string).slice(0, eq).trim();
      if (maxAge && maxAge[1] === '0') this.cookies.delete(name);
      else this.cookies.set(name, (pair as string).slice(eq + 1).trim());
    }
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  async get(url: string | URL): Promise<Step> {
    const res = await fetch(url, { redirect: 'manual', headers: this.cookieHeader(), dispatcher: this.agent });
    this.remember(res.headers);
    const location = res.headers.get('location');
    return { status: res.status, html: await res.text(), headers: res.headers as unknown as Headers, ...(location !== null && { location }) };
  }

  async postForm(url: string | URL, fields: Record<string, string>): Promise<Step> {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
      dispatcher: this.agent,
    });
    this.remember(res.headers);
    const location = res.headers.get('location');
    return { status: res.status, html: await res.text(), headers: res.headers as unknown as Headers, ...(location !== null && { location }) };
  }

  /** Submits the page's sign-in form with these credentials, as a person would. */
  async signIn(page: Step, base: string, handle: string, password: string, handleType = 'email_address'): Promise<Step> {
    return this.submit(page, base, { handle_type: handleType, handle, password });
  }

  /** Submits the page's form with its hidden fields and these typed in. */
  async submit(page: Step, base: string, typed: Record<string, string>): Promise<Step> {
    const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(page.html);
    if (!form) throw new Error(`no form in the page (status ${page.status}): ${page.html.slice(0, 300)}`);
    const fields: Record<string, string> = {};
    for (const m of (form[2] as string).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1] as string] = unescape(m[2] as string);
    return this.postForm(new URL(form[1] as string, base), { ...fields, ...typed });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

function unescape(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
