//! `TestApp`: the local stack on a random loopback port with a manual clock and a temporary data
//! directory, plus helpers to sign up, read the emailed code and call the API as a client would.

pub mod counting_store;
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

/// The Python of `tests/run`'s `.venv` (with the tools it pins), or `MAILWARD_TEST_PYTHON`.
pub fn venv_python() -> std::path::PathBuf {
    std::env::var_os("MAILWARD_TEST_PYTHON").map_or_else(
        || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python"),
        std::path::PathBuf::from,
    )
}

/// Runs `npm ci` in `dir` (once per test process) unless `node_modules/<package>` is there.
pub fn npm_ci_once(dir: &std::path::Path, package: &str) {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if dir.join("node_modules").join(package).exists() {
        return;
    }
    let status = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--silent"])
        .current_dir(dir)
        .status()
        .expect("npm (Node.js) is needed to run this test's helper process");
    assert!(status.success(), "npm ci in {} failed", dir.display());
}

/// A helper process of a test (an identity provider, a payment stand-in), killed and reaped
/// when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The API version every API-key request sends.
pub const VERSION: &str = "2025-04-30";

/// Which adapters a test's stack runs on: `MAILWARD_TEST_BACKEND=aws` runs the whole service on
/// DynamoDB, SQS, S3, SES and Route 53 (moto at `MOTO_ENDPOINT`, as `tests/run` starts it), each
/// unless the test chose another adapter; anything else, or nothing, on the embedded ones.
pub fn backend_is_aws() -> bool {
    std::env::var("MAILWARD_TEST_BACKEND").is_ok_and(|b| b.eq_ignore_ascii_case("aws"))
}

/// A fresh DynamoDB table and SQS queues on moto, for one test's stack.
async fn moto_ports(clock: Arc<dyn Clock>, max_receives: u32) -> Ports {
    let config = mailward_aws::emulator_config(&moto_endpoint()).await;
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
    let config = mailward_aws::emulator_config(&moto_endpoint()).await;
    let bucket = format!("mailward-api-{}", uuid::Uuid::new_v4().simple());
    let store = mailward_aws::S3ObjectStore::new(&config, bucket);
    store
        .create_bucket()
        .await
        .expect("create the bucket on moto");
    mailward_local_stack::ObjectsOverride(Arc::new(store))
}

/// The moto server the AWS pass runs on (`MOTO_ENDPOINT`).
fn moto_endpoint() -> String {
    std::env::var("MOTO_ENDPOINT").expect(
        "MAILWARD_TEST_BACKEND=aws needs MOTO_ENDPOINT (a moto server, as tests/run starts it)",
    )
}

/// An SES v2 client on moto.
async fn moto_ses() -> aws_sdk_sesv2::Client {
    aws_sdk_sesv2::Client::new(&mailward_aws::emulator_config(&moto_endpoint()).await)
}

/// SES in moto as the mailer, sending from an address of this stack's own (`noreply-<id>`,
/// verified as an email identity, the domain never), so that a test reads only its own mail
/// among everything the shared moto server captured, and can make SES refuse it.
async fn moto_mailer() -> (mailward_local_stack::MailerOverride, String) {
    let ses = moto_ses().await;
    let from = format!(
        "noreply-{}@ses.mailward.test",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    ses.create_email_identity()
        .email_identity(&from)
        .send()
        .await
        .expect("verify the sender on moto");
    let mailer = mailward_aws::SesMailer::new(ses, format!("Mailward <{from}>"));
    (mailward_local_stack::MailerOverride(Arc::new(mailer)), from)
}

/// Route 53 in moto as the hosted zone: a zone of this stack's own for the hosted zone and one
/// for the report host (moto, like Route 53, allows several zones of one name); the stack's
/// authoritative DNS server answers from them.
async fn moto_zone() -> mailward_local_stack::ZoneOverride {
    let config = mailward_aws::emulator_config(&moto_endpoint()).await;
    let route53 = aws_sdk_route53::Client::new(&config);
    let defaults = mailward_services::config::Config::new("http://127.0.0.1", Vec::new());
    let mut zones = Vec::new();
    for apex in [defaults.hosted_zone, defaults.report_domain] {
        let created = route53
            .create_hosted_zone()
            .name(&apex)
            .caller_reference(uuid::Uuid::new_v4().to_string())
            .send()
            .await
            .expect("create a hosted zone on moto");
        let id = created.hosted_zone().expect("zone").id().to_owned();
        zones.push((apex, id.trim_start_matches("/hostedzone/").to_owned()));
    }
    let zone = mailward_aws::route53::Route53Zone::from_config(&config, zones)
        .with_backoff(Duration::from_millis(20));
    mailward_local_stack::ZoneOverride(Arc::new(zone))
}

/// The SES v2 SendEmail requests moto accepted from `from`, oldest first, as the local outbox
/// would have written them (`tests/moto-serve.py` keeps the requests whole).
fn ses_sent(from: &str) -> Vec<String> {
    use std::io::{Read, Write};
    let endpoint = moto_endpoint();
    let authority = endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut stream = std::net::TcpStream::connect(&authority).expect("reach moto");
    write!(
        stream,
        "GET /_mailward/ses-sent HTTP/1.0\r\nHost: {authority}\r\n\r\n"
    )
    .expect("ask moto");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("moto's answer");
    let body = answer.split_once("\r\n\r\n").expect("an HTTP answer").1;
    let sent: Vec<Value> = serde_json::from_str(body).expect("captured requests");
    sent.iter()
        .enumerate()
        .filter(|(_, r)| {
            r["FromEmailAddress"]
                .as_str()
                .is_some_and(|f| f.contains(&format!("<{from}>")))
        })
        .map(|(i, request)| {
            let simple = &request["Content"]["Simple"];
            let text = |part: &str| simple["Body"][part]["Data"].as_str().map(str::to_owned);
            let header = |name: &str| {
                simple["Headers"].as_array().and_then(|all| {
                    all.iter()
                        .find(|h| h["Name"] == name)
                        .and_then(|h| h["Value"].as_str())
                })
            };
            let email = mailward_domain::mailer::OutboundEmail {
                to: request["Destination"]["ToAddresses"][0]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                subject: simple["Subject"]["Data"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                text: text("Text").unwrap_or_default(),
                html: text("Html"),
                unsubscribe_url: header("List-Unsubscribe")
                    .map(|v| v.trim_matches(['<', '>']).to_owned()),
                attachments: simple["Attachments"]
                    .as_array()
                    .map(|all| {
                        all.iter()
                            .map(|a| {
                                use base64::Engine as _;
                                mailward_domain::mailer::Attachment {
                                    file_name: a["FileName"]
                                        .as_str()
                                        .unwrap_or_default()
                                        .to_owned(),
                                    content_type: a["ContentType"]
                                        .as_str()
                                        .unwrap_or_default()
                                        .to_owned(),
                                    data: base64::engine::general_purpose::STANDARD
                                        .decode(a["RawContent"].as_str().unwrap_or_default())
                                        .unwrap_or_default(),
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            let from = request["FromEmailAddress"].as_str().unwrap_or_default();
            mailward_local::render_eml(from, &email, "", &format!("{i}@ses.moto"))
        })
        .collect()
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
    /// The SES sender address of this stack in the AWS pass (its mail is read from moto).
    ses_from: Option<String>,
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
        // An organization purge's final pass right after the first (`org_purge` tests the
        // delay itself).
        settings.purge_final_pass_delay = Some(Duration::ZERO);
        settings.reconcile_interval = None;
        settings.retention_interval = None;
        settings.evaluate_new_domains = false;
        // No registry on the internet either: the registrar tests serve one on loopback.
        settings.rdap_bootstrap_url = None;
        adjust(&mut settings);
        let clock = Arc::new(ManualClock::starting_now());
        let mut ses_from = None;
        if backend_is_aws() && settings.ports.is_none() {
            settings.ports = Some(moto_ports(clock.clone(), settings.max_receives).await);
            if settings.objects.is_none() {
                settings.objects = Some(moto_objects().await);
            }
            if settings.mailer.is_none() {
                let (mailer, from) = moto_mailer().await;
                settings.mailer = Some(mailer);
                ses_from = Some(from);
            }
            if settings.zone.is_none() {
                settings.zone = Some(moto_zone().await);
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
            ses_from,
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
            ses_from,
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
            ses_from,
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

    /// Every mail the stack sent, oldest first, as text: the local outbox's files, or in the
    /// AWS pass what it sent through SES in moto, written the same way.
    pub fn mails(&self) -> Vec<String> {
        if let Some(from) = &self.ses_from {
            return ses_sent(from);
        }
        let outbox = self.settings.data_dir.join("outbox");
        let mut files: Vec<_> = std::fs::read_dir(&outbox)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("read eml"))
            .collect()
    }

    /// Makes sending mail fail (`true`) or work again: SES refuses a sender whose identity was
    /// deleted; the local outbox cannot be written where a file stands in its place.
    pub async fn set_mail_failing(&self, failing: bool) {
        if let Some(from) = &self.ses_from {
            let ses = moto_ses().await;
            if failing {
                ses.delete_email_identity()
                    .email_identity(from)
                    .send()
                    .await
                    .expect("unverify the sender");
            } else {
                ses.create_email_identity()
                    .email_identity(from)
                    .send()
                    .await
                    .expect("verify the sender again");
            }
            return;
        }
        let outbox = self.settings.data_dir.join("outbox");
        if failing {
            let _ = std::fs::remove_dir_all(&outbox);
            std::fs::write(&outbox, b"not a directory").expect("outbox replaced by a file");
        } else if outbox.is_file() {
            std::fs::remove_file(&outbox).expect("outbox file removed");
        }
    }

    /// The newest email, as text (empty when none was sent).
    pub fn last_email(&self) -> String {
        self.mails().pop().unwrap_or_default()
    }

    /// The six-digit code in the newest email to `to`.
    pub fn code_for(&self, to: &str) -> String {
        let mail = self
            .mails()
            .into_iter()
            .rev()
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

    /// Subscribes `org` to `plan` as a person would: a checkout started by its administrator,
    /// paid on the local stack's test-mode Checkout page (whose events reach the webhook route
    /// signed, as Stripe's would). Answers the subscription afterwards.
    pub async fn subscribe(&self, org: &SignedUp, plan: &str) -> Value {
        let token = self.session_token(&org.email, &org.org_id, false).await;
        let res = self
            .with_session(reqwest::Method::POST, "/billing/checkout", &token)
            .json(&json!({ "plan": plan }))
            .send()
            .await
            .expect("send");
        assert_eq!(res.status(), 200, "checkout");
        let url = res.json::<Value>().await.expect("json")["url"]
            .as_str()
            .expect("url")
            .to_owned();
        let page = self.http.post(&url).send().await.expect("pay");
        assert_eq!(
            page.status(),
            303,
            "{}",
            page.text().await.unwrap_or_default()
        );
        let res = self
            .with_session(reqwest::Method::GET, "/billing/subscription", &token)
            .send()
            .await
            .expect("send");
        assert_eq!(res.status(), 200);
        res.json().await.expect("json")
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
            sid: None,
        };
        mint_session_token(&self.stack.state.config.secret_key, &claims).expect("token")
    }
}
