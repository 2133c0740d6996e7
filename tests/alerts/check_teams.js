// Checks Microsoft Teams workflow messages with Microsoft's own Adaptive Cards SDK
// (the `adaptivecards` package, pinned in package-lock.json).
//
// Usage: node check_teams.js MESSAGE.json... Each file holds one message body as Mailward posted
// it: a `message` with one attachment of content type application/vnd.microsoft.card.adaptive
// whose card the SDK parses without an event (unknown element, action or property value) and
// validates without a failure (a required property missing). Exits non-zero naming the first.
"use strict";
const fs = require("fs");
const AC = require("adaptivecards/dist/adaptivecards.js");

function fail(path, why) {
  console.error(`${path}: ${why}`);
  process.exit(1);
}

function check(path) {
  const body = JSON.parse(fs.readFileSync(path, "utf8"));
  if (body.type !== "message") fail(path, "type is not message");
  if (!Array.isArray(body.attachments) || body.attachments.length !== 1) {
    fail(path, "not exactly one attachment");
  }
  const attachment = body.attachments[0];
  if (attachment.contentType !== "application/vnd.microsoft.card.adaptive") {
    fail(path, `content type ${attachment.contentType}`);
  }
  const card = attachment.content;
  if (card.type !== "AdaptiveCard") fail(path, "the content is not an AdaptiveCard");
  const version = AC.Version.parse(card.version, new AC.SerializationContext());
  if (!version || !version.isValid || version.major !== 1 || version.minor > 5) {
    fail(path, `version ${card.version}: Teams renders 1.0 to 1.5`);
  }
  const context = new AC.SerializationContext();
  const parsed = new AC.AdaptiveCard();
  parsed.parse(card, context);
  for (let i = 0; i < context.eventCount; i++) {
    const e = context.getEventAt(i);
    fail(path, `parse: ${e.message}`);
  }
  const results = parsed.validateProperties();
  for (const e of results.validationEvents || []) {
    fail(path, `validation: ${e.message}`);
  }
  // Round trip: what the SDK reads is what was sent (nothing dropped as unknown).
  const again = parsed.toJSON(new AC.SerializationContext());
  const sent = JSON.stringify(card.body.map((b) => b.type));
  const read = JSON.stringify((again.body || []).map((b) => b.type));
  if (sent !== read) fail(path, `body reads back as ${read}, sent ${sent}`);
  if ((again.actions || []).length !== (card.actions || []).length) {
    fail(path, "an action was dropped");
  }
}

const files = process.argv.slice(2);
files.forEach(check);
console.log(`adaptivecards: ${files.length} cards valid`);
