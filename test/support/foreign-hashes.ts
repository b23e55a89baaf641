// Password hashes made by implementations other than the service's: Debian's python3-bcrypt and python3-argon2,
// and Python's hashlib for pbkdf2, as a team migrating from another system would hold them.
import { execFileSync } from 'node:child_process';

const SCRIPT = String.raw`
import sys, json, base64, hashlib, os, bcrypt
from argon2 import PasswordHasher, Type
pw = sys.argv[1].encode()
std = lambda b: base64.b64encode(b).decode().rstrip('=')
B = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
S = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
from_bcrypt = lambda t: ''.join(S[B.index(c)] for c in t)
b2b = bcrypt.hashpw(pw, bcrypt.gensalt(rounds=10)).decode()
b2a = bcrypt.hashpw(pw, bcrypt.gensalt(rounds=10, prefix=b'2a')).decode()
tail = b2b[7:]
salt = os.urandom(16)
salt512 = os.urandom(16)
print(json.dumps({
  'bcrypt-2a': b2a,
  'bcrypt-2b': b2b,
  # PHP's $2y$ is the same function as $2b$
  'bcrypt-2y': '$2y$' + b2b[4:],
  'bcrypt-phc': '$bcrypt$v=98$r=10$' + from_bcrypt(tail[:22]) + '$' + from_bcrypt(tail[22:]),
  'pbkdf2-sha256': '$pbkdf2-sha256$i=100000,l=32$' + std(salt) + '$' + std(hashlib.pbkdf2_hmac('sha256', pw, salt, 100000, 32)),
  # passlib's form: bare iterations, '.' for '+'
  'pbkdf2-sha512': '$pbkdf2-sha512$25000$' + std(salt512).replace('+', '.') + '$' + std(hashlib.pbkdf2_hmac('sha512', pw, salt512, 25000)).replace('+', '.'),
  'argon2id': PasswordHasher().hash(pw),
  'argon2i': PasswordHasher(type=Type.I).hash(pw),
}))
`;

/** The first Python that has both modules: Debian's own, then whatever python3 is on PATH. */
function python(): string {
  for (const candidate of ['/usr/bin/python3', 'python3']) {
    try {
      execFileSync(candidate, ['-c', 'import bcrypt, argon2'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error('python3 with the bcrypt and argon2 modules is needed (Debian: python3-bcrypt python3-argon2)');
}

export type ForeignFormat = 'bcrypt-2a' | 'bcrypt-2b' | 'bcrypt-2y' | 'bcrypt-phc' | 'pbkdf2-sha256' | 'pbkdf2-sha512' | 'argon2id' | 'argon2i';

/** One hash of password per format, argon2 with argon2-cffi's default parameters (m = 64 MiB, t = 3, p = 4). */
export function foreignHashes(password: string): Record<ForeignFormat, string> {
  return JSON.parse(execFileSync(python(), ['-c', SCRIPT, password], { encoding: 'utf8' })) as Record<ForeignFormat, string>;
}
