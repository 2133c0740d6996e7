// A real, OpenID-certified provider (panva's oidc-provider) for Mailward's single sign-on tests:
// HTTPS on loopback with the test's certificate, the clients the test names, accounts whose id
// is the email address, and interactions that finish by themselves (the account is the
// `login_hint`; a hint starting with "mfa-" signs in with `amr` ["pwd", "mfa"] and `acr`
// "urn:test:mfa", one starting with "acr-" with `amr` ["pwd"] and that `acr`). Prints one JSON line {"issuer": ...} once listening.
//
// Usage: node provider.mjs CERT.pem KEY.pem REDIRECT_URI CLIENT_ID:SECRET [CLIENT_ID:SECRET...]
import fs from 'node:fs';
import https from 'node:https';
import Provider from 'oidc-provider';

const [certPath, keyPath, redirectUri, ...clientArgs] = process.argv.slice(2);
const clients = clientArgs.map((pair) => {
  const [client_id, client_secret] = pair.split(':');
  return {
    client_id,
    client_secret,
    redirect_uris: [redirectUri],
    response_types: ['code'],
    // Refresh tokens (with the offline_access scope and prompt=consent) serve the report
    // mailbox tests: a refresh token obtained once, exchanged by Mailward for access tokens.
    grant_types: ['authorization_code', 'refresh_token'],
  };
});

const server = https.createServer({
  cert: fs.readFileSync(certPath),
  key: fs.readFileSync(keyPath),
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `https://localhost:${port}`;
  const provider = new Provider(issuer, {
    clients,
    claims: {
      acr: null,
      amr: null,
      auth_time: null,
      sid: null,
      openid: ['sub', 'acr', 'amr', 'auth_time'],
      email: ['email', 'email_verified'],
    },
    async findAccount(_ctx, sub) {
      return {
        accountId: sub,
        async claims() {
          return { sub, email: sub, email_verified: true };
        },
      };
    },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    cookies: { keys: ['mailward-test-cookie-key'] },
  });
  provider.use(async (ctx, next) => {
    const match = ctx.path.match(/^\/interaction\/([^/]+)$/);
    if (!match) {
      return next();
    }
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    let result;
    if (details.prompt.name === 'login') {
      const hint = details.params.login_hint || 'nobody@example.invalid';
      const mfa = hint.startsWith('mfa-');
      // "acr-" accounts show their second factor by the acr value alone.
      const acrOnly = hint.startsWith('acr-');
      result = {
        login: {
          accountId: hint,
          amr: mfa ? ['pwd', 'mfa'] : ['pwd'],
          acr: mfa || acrOnly ? 'urn:test:mfa' : 'urn:test:pwd',
        },
      };
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({
          accountId: details.session.accountId,
          clientId: details.params.client_id,
        });
      const asked = String(details.params.scope || '').split(' ');
      grant.addOIDCScope(['openid', 'email', 'offline_access'].filter((s) => asked.includes(s)).join(' '));
      result = { consent: { grantId: await grant.save() } };
    }
    ctx.respond = false;
    await provider.interactionFinished(ctx.req, ctx.res, result, {
      mergeWithLastSubmission: false,
    });
    return undefined;
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
