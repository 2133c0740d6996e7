//! The state the functions run on (the embedded adapters, configured as
//! `mailward_lambda::state_from_env` configures the AWS ones where it matters: behind a proxy),
//! the fixtures, and the calls that push a payload through a function's entry point.

use lambda_http::request::LambdaRequest;
use lambda_http::{Context, LambdaEvent, Service as _};
use mailward_api_tests::faulty_store::{FaultRule, FaultyStore};
use mailward_domain::queue::QueueName;
use mailward_domain::{Clock, ManualClock};
use mailward_http::{AppState, Config, Routes};
use mailward_local::{Database, DirObjectStore, EmbeddedQueue, EmbeddedStore, FileMailer};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;

/// The service's public URL (`MAILWARD_BASE_URL`).
pub const BASE_URL: &str = "https://api.mailward.test";

/// A fixture of `tests/api/fixtures/lambda` (its README names the AWS shape of each).
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/lambda/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One function's world: the state every invocation shares, its clock and data directory.
pub struct Lambda {
    /// The state, as a cold start builds it.
    pub state: AppState,
    /// The clock it runs on.
    pub clock: Arc<ManualClock>,
    /// Mail outbox and objects (kept alive for the test).
    pub dir: tempfile::TempDir,
}

impl Lambda {
    /// A state whose store never fails, resolving nothing (no DNS server answers).
    pub fn new() -> Self {
        Self::build(None, Box::new(|_| Ok(())))
    }

    /// A state whose DNS is `dns` (a fixture server).
    pub fn with_dns(dns: SocketAddr) -> Self {
        Self::build(Some(dns), Box::new(|_| Ok(())))
    }

    /// A state whose store fails the calls `rule` fails.
    pub fn with_store_rule(rule: FaultRule) -> Self {
        Self::build(None, rule)
    }

    fn build(dns: Option<SocketAddr>, rule: FaultRule) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let clock = Arc::new(ManualClock::starting_now());
        let shared: Arc<dyn Clock> = clock.clone();
        let db = Database::in_memory().expect("database");
        let secret = b"lambda-entry-points-test-secret-0123456789".to_vec();
        let mut config = Config::new(BASE_URL.to_owned(), secret.clone());
        // As on AWS: the client address is the last X-Forwarded-For hop API Gateway appended.
        config.trust_proxy = true;
        let store = FaultyStore::new(
            Arc::new(EmbeddedStore::new(db.clone(), shared.clone())),
            rule,
        );
        let server = dns.unwrap_or_else(|| "127.0.0.1:9".parse().expect("addr"));
        let resolver =
            Arc::new(mailward_dns::HickoryResolver::with_servers(vec![server]).expect("resolver"));
        let objects = DirObjectStore::new(
            dir.path().join("objects"),
            format!("{BASE_URL}/uploads"),
            secret,
            shared.clone(),
        );
        let mailer = FileMailer::new(
            dir.path().join("outbox"),
            "Mailward <no-reply@mailward.test>".into(),
            shared.clone(),
        );
        let state = AppState::new(
            Arc::new(store),
            Arc::new(EmbeddedQueue::new(db, shared.clone(), 5)),
            Arc::new(mailer),
            shared.clone(),
            resolver.clone(),
            config,
        )
        .with_direct_dns(resolver)
        .with_objects(Arc::new(objects));
        Self { state, clock, dir }
    }

    /// Pushes one API Gateway HTTP API event (payload format 2.0) through `routes` as the
    /// function's Lambda serves them: the JSON bytes are read as `lambda_http` reads what the
    /// runtime receives, converted by its adapter (the one `lambda_http::run` wraps the service
    /// in) and the answer serialized as the runtime posts it back to Lambda.
    pub async fn http(&self, routes: Routes, event: &Value) -> Value {
        let bytes = serde_json::to_vec(event).expect("json");
        let request: LambdaRequest =
            serde_json::from_slice(&bytes).expect("an API Gateway HTTP API payload");
        let service = mailward_lambda::http_service(routes, self.state.clone());
        let mut adapter = lambda_http::Adapter::from(service);
        std::future::poll_fn(|cx| adapter.poll_ready(cx))
            .await
            .expect("ready");
        let response = adapter
            .call(LambdaEvent::new(request, Context::default()))
            .await
            .expect("a response");
        serde_json::to_value(&response).expect("a serializable response")
    }

    /// Receives and acknowledges every visible message of `queue`: their bodies as sent.
    pub async fn drain(&self, queue: QueueName) -> Vec<String> {
        let mut bodies = Vec::new();
        loop {
            let batch = self
                .state
                .queue
                .receive(queue, 10, 60)
                .await
                .expect("receive");
            if batch.is_empty() {
                return bodies;
            }
            for message in batch {
                let acked = self.state.queue.ack(queue, &message.receipt).await;
                acked.expect("ack");
                bodies.push(message.body);
            }
        }
    }

    /// [`Self::drain`], keeping the envelopes of job `name` (parsed).
    pub async fn drain_jobs(&self, queue: QueueName, name: &str) -> Vec<Value> {
        self.drain(queue)
            .await
            .iter()
            .filter_map(|body| serde_json::from_str::<Value>(body).ok())
            .filter(|envelope| envelope["job"] == name)
            .collect()
    }

    /// The newest mail to `to` (the signup code's).
    pub fn code_for(&self, to: &str) -> String {
        let mut files: Vec<_> = std::fs::read_dir(self.dir.path().join("outbox"))
            .expect("outbox")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        files.sort();
        let mail = files
            .iter()
            .rev()
            .map(|p| std::fs::read_to_string(p).expect("mail"))
            .find(|m| m.contains(&format!("To: {to}\r\n")))
            .expect("a mail to the address");
        let start = mail.find("code is ").expect("code in mail") + "code is ".len();
        mail[start..start + 6].to_owned()
    }

    /// Signs up through `api-public`'s Lambda (the signup fixture, its body base64-encoded as
    /// API Gateway may pass it, then the verification): the organization and its API key.
    pub async fn sign_up(&self) -> SignedUp {
        let started = self
            .http(
                api_public::routes(),
                &fixture("apigw-v2-signup-base64.json"),
            )
            .await;
        assert_eq!(started["statusCode"], 201, "{started}");
        let signup: Value = serde_json::from_str(started["body"].as_str().expect("body")).unwrap();
        let code = self.code_for("owner@lambda.example");
        let verify = ApiRequest::new("POST", "/signup/verify")
            .json(&json!({"signup_id": signup["signup_id"], "code": code}));
        let verified = self.http(api_public::routes(), &verify.event()).await;
        assert_eq!(verified["statusCode"], 201, "{verified}");
        let body = json_body(&verified);
        SignedUp {
            org_id: body["organization"]["id"].as_str().expect("org").to_owned(),
            key: body["api_key"]["key"].as_str().expect("key").to_owned(),
        }
    }
}

/// An organization and its API key.
pub struct SignedUp {
    /// The organization's id.
    pub org_id: String,
    /// Its API key.
    pub key: String,
}

/// The JSON of a response's body (not base64-encoded).
pub fn json_body(response: &Value) -> Value {
    assert_eq!(response["isBase64Encoded"], false, "{response}");
    serde_json::from_str(response["body"].as_str().expect("a body"))
        .unwrap_or_else(|e| panic!("{e}: {response}"))
}

/// A request shaped from `apigw-v2-request.json` as API Gateway would send it.
pub struct ApiRequest(Value);

impl ApiRequest {
    /// `method` on `path` (route key `METHOD path`, the `$default` stage).
    pub fn new(method: &str, path: &str) -> Self {
        let mut event = fixture("apigw-v2-request.json");
        let route = format!("{method} {path}");
        event["routeKey"] = json!(route);
        event["rawPath"] = json!(path);
        event["requestContext"]["routeKey"] = json!(route);
        event["requestContext"]["http"]["method"] = json!(method);
        event["requestContext"]["http"]["path"] = json!(path);
        Self(event)
    }

    /// The route key of a path with parameters (`GET /domains/{id}`).
    pub fn route(mut self, route_path: &str) -> Self {
        let method = self.0["requestContext"]["http"]["method"].clone();
        let route = format!("{} {route_path}", method.as_str().unwrap_or_default());
        self.0["routeKey"] = json!(route);
        self.0["requestContext"]["routeKey"] = json!(route);
        self
    }

    /// The raw query string as the client sent it, and the decoded parameters API Gateway
    /// adds beside it (a repeated name's values joined by commas).
    pub fn query(mut self, raw: &str, decoded: Value) -> Self {
        self.0["rawQueryString"] = json!(raw);
        self.0["queryStringParameters"] = decoded;
        self
    }

    /// A header (API Gateway lower-cases the names).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.0["headers"][name.to_ascii_lowercase()] = json!(value);
        self
    }

    /// The organization's API key, with the version header.
    pub fn key(self, key: &str) -> Self {
        use base64::Engine as _;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("{key}:"));
        self.header("authorization", &format!("Basic {basic}"))
            .header("mailward-version", mailward_api_tests::VERSION)
    }

    /// A JSON body, as text.
    pub fn json(self, body: &Value) -> Self {
        let text = body.to_string();
        let mut this = self
            .header("content-type", "application/json")
            .header("content-length", &text.len().to_string());
        this.0["body"] = json!(text);
        this.0["isBase64Encoded"] = json!(false);
        this
    }

    /// The event.
    pub fn event(self) -> Value {
        self.0
    }
}
