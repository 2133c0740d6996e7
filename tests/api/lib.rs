//! `TestApp`: the local stack on a random loopback port with a manual clock and a temporary data
//! directory, plus helpers to sign up, read the emailed code and call the API as a client would.

pub mod faulty_queue;
pub mod faulty_store;
pub mod receiver;
pub mod smtp_tls;

use mailward_domain::{Clock, ManualClock};
use mailward_http::auth::{JWT_AUDIENCE, JWT_ISSUER, SessionClaims, mint_session_token};
use mailward_local_stack::{LocalStack, Ports, Settings};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The API version every API-key request sends.
pub const VERSION: &str = "2025-04-30";

/// Which adapters a test's stack runs on: `MAILWARD_TEST_BACKEND=aws` runs the whole service on
/// DynamoDB and SQS (moto at `MOTO_ENDPOINT`, as `tests/run` starts it); anything else, or
/// nothing, on the embedded SQLite store and queue.
pub fn backend_is_aws() -> bool {
    std::env::var("MAILWARD_TEST_BACKEND").is_ok_and(|b| b.eq_ignore_ascii_case("aws"))
}

/// A fresh DynamoDB table and SQS queues on moto, for one test's stack.
async fn moto_ports(clock: Arc<dyn Clock>, max_receives: u32) -> Ports {
    let endpoint = std::env::var("MOTO_ENDPOINT").expect(
        "MAILWARD_TEST_BACKEND=aws needs MOTO_ENDPOINT (a moto server, as tests/run starts it)",
    );
    let config = mailward_aws::emulator_config(&endpoint).await;
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    let dynamo = aws_sdk_dynamodb::Client::new(&config);
    let table = format!("mailward-api-{suffix}");
    mailward_aws::create_table(&dynamo, &table)
        .await
        .expect("create the table on moto");
    let sqs = aws_sdk_sqs::Client::new(&config);
    let urls = mailward_aws::create_queues(&sqs, &suffix[..12], max_receives)
        .await
        .expect("create the queues on moto");
    Ports {
        store: Arc::new(mailward_aws::DynamoStore::new(dynamo, table, clock)),
        // Delays are held on SQS for a second at most: the jobs' own `not_before`, checked
        // against the manual clock, decides when they run (a moved clock releases them).
        queue: Arc::new(mailward_aws::SqsQueue::new(sqs, urls).with_max_delay(1)),
    }
}

/// A fresh S3 bucket on moto, for one test's stack.
async fn moto_objects() -> mailward_local_stack::ObjectsOverride {
    let endpoint = std::env::var("MOTO_ENDPOINT").expect("MOTO_ENDPOINT");
    let config = mailward_aws::emulator_config(&endpoint).await;
    let bucket = format!("mailward-api-{}", uuid::Uuid::new_v4().simple());
    let store = mailward_aws::S3ObjectStore::new(&config, bucket);
    store
        .create_bucket()
        .await
        .expect("create the bucket on moto");
    mailward_local_stack::ObjectsOverride(Arc::new(store))
}

/// A running local stack for one test.
pub struct TestApp {
    /// The stack.
    pub stack: LocalStack,
    /// The clock it runs on.
    pub clock: Arc<ManualClock>,
    /// HTTP client.
    pub http: reqwest::Client,
    /// Data directory (kept alive for the test).
    pub dir: tempfile::TempDir,
    settings: Settings,
}

/// Organization and key returned by a completed signup.
#[derive(Debug, Clone)]
pub struct SignedUp {
    /// Organization id.
    pub org_id: String,
    /// API key.
    pub key: String,
    /// API key id.
    pub key_id: String,
    /// The account's email.
    pub email: String,
    /// Full verify response.
    pub body: Value,
}

impl TestApp {
    /// Starts a stack with default settings.
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Starts a stack after letting the test adjust the settings.
    pub async fn start_with(adjust: impl FnOnce(&mut Settings)) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut settings = Settings::new(dir.path().to_path_buf());
        settings.listen = "127.0.0.1:0".parse().expect("addr");
        settings.poll_interval = Duration::from_millis(20);
        // Never the machine's resolvers: tests that need DNS point this at a fixture server.
        settings.dns = Some("127.0.0.1:9".into());
        // Tests run the sweep explicitly (`mailward_workers::sweep::sweep_now`), so a new
        // domain is not evaluated behind their back either (one test turns it back on).
        settings.sweep_interval = None;
        settings.reconcile_interval = None;
        settings.evaluate_new_domains = false;
        // No registry on the internet either: the registrar tests serve one on loopback.
        settings.rdap_bootstrap_url = None;
        adjust(&mut settings);
        let clock = Arc::new(ManualClock::starting_now());
        if backend_is_aws() && settings.ports.is_none() {
            settings.ports = Some(moto_ports(clock.clone(), settings.max_receives).await);
            if settings.objects.is_none() {
                settings.objects = Some(moto_objects().await);
            }
        }
        let stack = LocalStack::start_with_clock(settings.clone(), clock.clone())
            .await
            .expect("stack starts");
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        Self {
            stack,
            clock,
            http,
            dir,
            settings,
        }
    }

    /// Stops the stack and starts a new one on the same data directory and clock (a restart of
    /// the local process: only what was persisted survives).
    pub async fn restart(self) -> Self {
        let Self {
            stack,
            clock,
            http,
            dir,
            mut settings,
        } = self;
        settings.listen = stack.addr;
        stack.stop().await;
        let stack = LocalStack::start_with_clock(settings.clone(), clock.clone())
            .await
            .expect("stack restarts");
        Self {
            stack,
            clock,
            http,
            dir,
            settings,
        }
    }

    /// Absolute URL of a path.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.stack.addr, path)
    }

    /// A request builder without credentials.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, self.url(path))
    }

    /// A request with an API key and the version header.
    pub fn with_key(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
    ) -> reqwest::RequestBuilder {
        self.request(method, path)
            .basic_auth(key, Some(""))
            .header("Mailward-Version", VERSION)
    }

    /// A request with a session token.
    pub fn with_session(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
    ) -> reqwest::RequestBuilder {
        self.request(method, path).bearer_auth(token)
    }

    /// The newest email in the outbox, as text.
    pub fn last_email(&self) -> String {
        let outbox = self.settings.data_dir.join("outbox");
        let mut files: Vec<_> = std::fs::read_dir(&outbox)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
            .last()
            .map(|p| std::fs::read_to_string(p).expect("read eml"))
            .unwrap_or_default()
    }

    /// The six-digit code in the newest email to `to`.
    pub fn code_for(&self, to: &str) -> String {
        let outbox = self.settings.data_dir.join("outbox");
        let mut files: Vec<_> = std::fs::read_dir(&outbox)
            .expect("outbox")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        files.sort();
        let mail = files
            .iter()
            .rev()
            .map(|p| std::fs::read_to_string(p).expect("read eml"))
            .find(|m| m.contains(&format!("To: {}\r\n", to.to_ascii_lowercase())))
            .expect("a mail to the address");
        let start = mail.find("code is ").expect("code in mail") + "code is ".len();
        mail[start..start + 6].to_owned()
    }

    /// The six-digit code in the newest email.
    pub fn last_code(&self) -> String {
        let mail = self.last_email();
        let start = mail.find("code is ").expect("code in mail") + "code is ".len();
        mail[start..start + 6].to_owned()
    }

    /// Starts a signup and returns its id.
    pub async fn start_signup(&self, email: &str, org: &str) -> String {
        self.start_priced_signup(email, org, None).await
    }

    /// Starts a signup on a pricing plan (`free`, `it_teams`, `msp`; `None`: the default).
    pub async fn start_priced_signup(
        &self,
        email: &str,
        org: &str,
        pricing: Option<&str>,
    ) -> String {
        let mut body = json!({ "email": email, "organization_name": org });
        if let Some(pricing) = pricing {
            body["pricing_type"] = json!(pricing);
        }
        let res = self
            .request(reqwest::Method::POST, "/signup")
            .json(&body)
            .send()
            .await
            .expect("send");
        assert_eq!(
            res.status(),
            201,
            "signup: {}",
            res.text().await.unwrap_or_default()
        );
        let body: Value = res.json().await.expect("json");
        body["signup_id"].as_str().expect("signup_id").to_owned()
    }

    /// Signs up and verifies; returns the organization and its key.
    pub async fn sign_up(&self, email: &str, org: &str) -> SignedUp {
        self.sign_up_priced(email, org, None).await
    }

    /// Signs up on a pricing plan and verifies; returns the organization and its key.
    pub async fn sign_up_priced(&self, email: &str, org: &str, pricing: Option<&str>) -> SignedUp {
        let id = self.start_priced_signup(email, org, pricing).await;
        let code = self.code_for(email);
        let res = self
            .request(reqwest::Method::POST, "/signup/verify")
            .json(&json!({ "signup_id": id, "code": code }))
            .send()
            .await
            .expect("send");
        assert_eq!(res.status(), 201);
        let body: Value = res.json().await.expect("json");
        SignedUp {
            org_id: body["organization"]["id"]
                .as_str()
                .expect("org id")
                .to_owned(),
            key: body["api_key"]["key"].as_str().expect("key").to_owned(),
            key_id: body["api_key"]["id"].as_str().expect("key id").to_owned(),
            email: email.to_owned(),
            body,
        }
    }

    /// A dashboard session token for the account behind `email` in `org`.
    pub async fn session_token(&self, email: &str, org: &str, mfa: bool) -> String {
        let store = self.stack.state.store.as_ref();
        let account = mailward_store::accounts::get_by_email(store, email)
            .await
            .expect("store")
            .expect("account")
            .value;
        let membership =
            mailward_store::accounts::membership(store, org.parse().expect("uuid"), account.id)
                .await
                .expect("store")
                .expect("member");
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let claims = SessionClaims {
            sub: account.id,
            org: membership.org_id,
            role: membership.roles[0],
            amr: if mfa {
                vec!["pwd".into(), "mfa".into()]
            } else {
                vec!["pwd".into()]
            },
            iss: JWT_ISSUER.into(),
            aud: JWT_AUDIENCE.into(),
            iat: now,
            exp: now + 600,
        };
        mint_session_token(&self.stack.state.config.secret_key, &claims).expect("token")
    }
}
