// @peculiar/x509 resolves its parts through tsyringe, which needs the Reflect metadata API (the library's README: "Reflect Polyfill Required").
import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509CertificateGenerator,
} from '@peculiar/x509';
import { canonicalIp } from '../common/network-allow-list.ts';

/** ECDSA P-256: every TLS client the sandbox runs (OpenSSL, Node, curl, pip, cargo, git) accepts it, and keys are made in a millisecond. */
const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60_000;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
/** Node's WebCrypto, which the library types as the DOM's `Crypto`. */
const PROVIDER = webcrypto as unknown as Parameters<typeof X509CertificateGenerator.create>[1];

/** A certificate and its key, as node:tls takes them. */
export interface HostCertificate {
  cert: string;
  key: string;
}

/**
 * The per-workspace certificate authority of the mailbox proxy (mailbox-proxy.ts). A command's
 * TLS to an allow-listed host ends at the runner, which must read the request to put it in the
 * mailbox; the command trusts this CA (its certificate only, in a bundle file) and so accepts
 * the per-host certificates it signs. The CA's private key lives in the runner's memory only:
 * never in a file, never in the sandbox, so a command cannot sign a certificate itself. The CA
 * is made when the workspace first needs one and dies with the runner process.
 */
export interface MailboxCa {
  /** The CA certificate (PEM): what the command's trust variables point at. */
  readonly certPem: string;
  /** A certificate for `host` (a name or an IP literal), signed by the CA; made once per host. */
  certificateFor(host: string): Promise<HostCertificate>;
}

export async function createMailboxCa(workspaceId: string, now = Date.now()): Promise<MailboxCa> {
  const caKeys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const caName = `CN=Stratus sandbox egress CA ${workspaceId.slice(0, 40)}, O=Stratus`;
  const caCert = await X509CertificateGenerator.createSelfSigned(
    {
      name: caName,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + 30 * DAY_MS),
      signingAlgorithm: SIGNING,
      keys: caKeys,
      extensions: [new BasicConstraintsExtension(true, 0, true), new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true)],
    },
    PROVIDER,
  );
  const issued = new Map<string, Promise<HostCertificate>>();
  return {
    certPem: caCert.toString('pem'),
    certificateFor(host) {
      let cert = issued.get(host);
      if (!cert) {
        cert = issueHostCertificate(host, { name: caName, key: caKeys.privateKey }, now);
        issued.set(host, cert);
        // A failure is not kept: the next connection tries again.
        cert.catch(() => issued.delete(host));
      }
      return cert;
    },
  };
}

async function issueHostCertificate(host: string, ca: { name: string; key: webcrypto.CryptoKey }, now: number): Promise<HostCertificate> {
  const keys = (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ip = canonicalIp(host);
  const cert = await X509CertificateGenerator.create(
    {
      subject: `CN=${ip ? 'sandbox egress' : host.replace(/[,+="\\<>;]/g, '')}`,
      issuer: ca.name,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + 30 * DAY_MS),
      signingAlgorithm: SIGNING,
      publicKey: keys.publicKey,
      signingKey: ca.key,
      extensions: [
        new BasicConstraintsExtension(false, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment, true),
        new ExtendedKeyUsageExtension([SERVER_AUTH]),
        // Clients check the name against the subject alternative name only.
        new SubjectAlternativeNameExtension([ip ? { type: 'ip', value: ip } : { type: 'dns', value: host }]),
      ],
    },
    PROVIDER,
  );
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' }).toString();
  return { cert: cert.toString('pem'), key };
}
