// A Stripe stand-in on loopback for the Stripe adapter's end-to-end test
// (tests/api/api/billing_stripe.rs): stripe-stateful-mock (customers, prices, products,
// subscriptions and their items), plus what it lacks, kept here:
//   - a recorder of every request (method, path, headers, raw form body): GET /__recorded;
//   - Checkout Sessions (POST /v1/checkout/sessions, GET /v1/checkout/sessions/:id) and
//     Billing Portal sessions (POST /v1/billing_portal/sessions), with idempotency keys;
//   - POST /__complete/:session {subscription}: what Stripe does when the person pays;
//   - POST /v1/subscription_items/:id setting any quantity, 0 included (the mock ignores 0);
//   - POST /v1/subscriptions/:id with pause_collection (set, or "" to resume), which the
//     mock refuses;
//   - DELETE /v1/customers/:id as Stripe does it: the customer answers `deleted: true` from
//     then on, and its subscriptions are canceled at once.
// Prints {"port": N} on its first line.
"use strict";
const express = require("express");
const bodyParser = require("body-parser");
const { createExpressApp } = require("stripe-stateful-mock");
const { subscriptions } = require("stripe-stateful-mock/dist/api/subscriptions");
const { customers } = require("stripe-stateful-mock/dist/api/customers");

const recorded = [];
const sessions = new Map();
const deletedCustomers = new Set();
const byKey = new Map();
let counter = 0;
const id = (prefix) => `${prefix}_test_${Date.now().toString(36)}${(counter++).toString(36)}`;

const app = express();
app.use(bodyParser.urlencoded({
  extended: true,
  verify: (req, _res, buf) => { req.rawBody = buf.toString("utf8"); },
}));
app.use((req, _res, next) => {
  if (!req.path.startsWith("/__")) {
    recorded.push({
      method: req.method,
      path: req.path,
      headers: {
        authorization: req.header("authorization") || null,
        "stripe-version": req.header("stripe-version") || null,
        "idempotency-key": req.header("idempotency-key") || null,
        "content-type": req.header("content-type") || null,
        "x-test-setup": req.header("x-test-setup") || null,
      },
      body: req.rawBody || "",
    });
  }
  next();
});

const authorized = (req, res) => {
  if (!/^Bearer sk_test_/.test(req.header("authorization") || "")) {
    res.status(401).json({ error: { type: "invalid_request_error", message: "bad key" } });
    return false;
  }
  return true;
};
// A create repeated with the same Idempotency-Key answers the first response.
const idempotent = (req, res, make) => {
  const key = req.header("idempotency-key");
  if (key && byKey.has(key)) return res.json(byKey.get(key));
  const made = make();
  if (key) byKey.set(key, made);
  return res.json(made);
};
const base = (req) => `http://${req.header("host")}`;

app.post("/v1/checkout/sessions", (req, res) => {
  if (!authorized(req, res)) return;
  if (req.body.mode !== "subscription" || !req.body.customer || !req.body.success_url) {
    return res.status(400).json({ error: { type: "invalid_request_error", message: "mode, customer and success_url are required here" } });
  }
  idempotent(req, res, () => {
    const session = {
      id: id("cs"), object: "checkout.session", mode: "subscription", status: "open",
      customer: req.body.customer, client_reference_id: req.body.client_reference_id || null,
      metadata: req.body.metadata || {}, subscription: null, success_url: req.body.success_url,
    };
    session.url = `${base(req)}/c/pay/${session.id}`;
    sessions.set(session.id, session);
    return session;
  });
});
app.get("/v1/checkout/sessions/:id", (req, res) => {
  if (!authorized(req, res)) return;
  const session = sessions.get(req.params.id);
  if (!session) return res.status(404).json({ error: { type: "invalid_request_error", message: "No such checkout.session" } });
  res.json(session);
});
app.post("/v1/billing_portal/sessions", (req, res) => {
  if (!authorized(req, res)) return;
  if (!req.body.customer) {
    return res.status(400).json({ error: { type: "invalid_request_error", message: "customer is required" } });
  }
  idempotent(req, res, () => {
    const session = { id: id("bps"), object: "billing_portal.session", customer: req.body.customer, return_url: req.body.return_url || null };
    session.url = `${base(req)}/p/session/${session.id}`;
    return session;
  });
});
app.post("/v1/subscription_items/:id", (req, res, next) => {
  if (!authorized(req, res)) return;
  try {
    const item = subscriptions.retrieveItem("acct_default", req.params.id, "id");
    if (req.body.quantity !== undefined) item.quantity = +req.body.quantity;
    res.json(item);
  } catch (e) {
    next(e);
  }
});
app.post("/v1/subscriptions/:id", (req, res, next) => {
  if (req.body.pause_collection === undefined) return next();
  if (!authorized(req, res)) return;
  try {
    const sub = subscriptions.retrieve("acct_default", req.params.id, "id");
    const pause = req.body.pause_collection;
    sub.pause_collection = pause === "" ? null : { behavior: pause.behavior, resumes_at: null };
    res.json(sub);
  } catch (e) {
    next(e);
  }
});
app.delete("/v1/customers/:id", (req, res, next) => {
  if (!authorized(req, res)) return;
  try {
    if (!deletedCustomers.has(req.params.id)) {
      customers.retrieve("acct_default", req.params.id, "id");
      for (const sub of subscriptions.list("acct_default", { customer: req.params.id, limit: 100 }).data) {
        sub.status = "canceled";
        sub.canceled_at = Math.floor(Date.now() / 1000);
      }
      deletedCustomers.add(req.params.id);
    }
    res.json({ id: req.params.id, object: "customer", deleted: true });
  } catch (e) {
    next(e);
  }
});
app.get("/v1/customers/:id", (req, res, next) => {
  if (deletedCustomers.has(req.params.id)) {
    return res.json({ id: req.params.id, object: "customer", deleted: true });
  }
  next();
});
app.post("/__complete/:id", express.json(), (req, res) => {
  const session = sessions.get(req.params.id);
  if (!session) return res.status(404).end();
  session.status = "complete";
  session.subscription = req.body.subscription;
  res.json(session);
});
app.get("/__recorded", (_req, res) => res.json(recorded));
app.use(createExpressApp());

const server = app.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
