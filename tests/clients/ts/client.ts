// Drives the local stack through openapi-fetch typed by openapi-typescript's rendering of
// /swagger.json: signup, verify, POST /domains, GET /domains, GET /domains/{id}/dns-records.
// tsc type-checks every path, body and response field used here against the document.
// Usage: node client.js BASE_URL OUTBOX_DIR
import createClient from "openapi-fetch";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { paths } from "./schema.js";

const [baseUrl, outbox] = process.argv.slice(2);
const email = `client-${Date.now()}@ts-client.example`;
const pub = createClient<paths>({ baseUrl });

function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Error(`TypeScript client: ${what}`);
}

const started = await pub.POST("/signup", { body: { email, organization_name: "TS client" } });
check(started.data, `signup: ${JSON.stringify(started.error)}`);
const mail = readdirSync(outbox)
  .sort()
  .map((f) => readFileSync(join(outbox, f), "utf8"))
  .find((m) => m.includes(email));
const code = mail?.match(/code is (\d{6})/)?.[1];
check(code, "no code in the outbox");
const verified = await pub.POST("/signup/verify", {
  body: { signup_id: started.data.signup_id, code },
});
check(verified.data, `verify: ${JSON.stringify(verified.error)}`);
const key: string = verified.data.api_key.key;

const api = createClient<paths>({
  baseUrl,
  headers: {
    Authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}`,
    "Mailward-Version": "2025-04-30",
  },
});
const created = await api.POST("/domains", { body: { url: "ts-client.example" } });
check(created.data, `create: ${JSON.stringify(created.error)}`);
const id: string = created.data.id;
const listed = await api.GET("/domains", {});
check(listed.data, `list: ${JSON.stringify(listed.error)}`);
check(listed.data.page_info.total_count === 1, "one domain listed");
check(listed.data.data[0].url === "ts-client.example", "the domain listed");
const records = await api.GET("/domains/{id}/dns-records", { params: { path: { id } } });
check(records.data, `records: ${JSON.stringify(records.error)}`);
check(
  records.data.records.some((r) => r.host === "_dmarc.ts-client.example"),
  "a DMARC record planned",
);
console.log(
  `typescript client: signup, verify, create, list and dns-records typed (${records.data.records.length} records)`,
);
