//! The web application in a real browser: Playwright for Python driving Debian's Chromium
//! (`tests/web/walk.py`), with axe-core run in every page it visits. This test is the walk's
//! other half: it owns the stack, the suite's DNS server (NSD in the NSD pass) and the clock,
//! and answers the walk's requests on a line protocol (`@@ <command> <args>` on the walk's
//! stdout, one line back on its stdin): the emailed code of an address, publishing a record in
//! DNS, running the sweep, importing a report, adding members.
//!
//! Skipped (with a message) when Chromium or Playwright is missing, unless
//! `MAILWARD_REQUIRE_BROWSER=1` (set by `tests/run` once it installed them).

use crate::admin::member;
use crate::common::{call, sweep};
use mailward_api_tests::{TestApp, npm_ci_once, venv_python};
use mailward_dns_fixture::{FixtureServer, Zone};
use mailward_domain::dns::{RecordData, RecordType};
use reqwest::Method;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;

const DOMAIN: &str = "walk.example";
const OTHER: &str = "other.example";

fn browser_present() -> bool {
    let chromium = std::path::Path::new("/usr/bin/chromium").exists();
    let playwright = std::process::Command::new(venv_python())
        .args(["-c", "import playwright"])
        .status()
        .is_ok_and(|s| s.success());
    if chromium && playwright {
        return true;
    }
    assert!(
        std::env::var("MAILWARD_REQUIRE_BROWSER").as_deref() != Ok("1"),
        "MAILWARD_REQUIRE_BROWSER=1 but chromium ({chromium}) or playwright ({playwright}) is missing"
    );
    eprintln!("web: chromium or playwright is missing; the browser walk is skipped");
    false
}

fn zones() -> Vec<Zone> {
    vec![
        Zone::new("test"),
        Zone::new(DOMAIN)
            .ns("@", "ns1.walk.example.")
            .mx("@", 10, "mx.walk.example.")
            .a("mx", "192.0.2.10")
            .txt("@", "v=spf1 include:sendgrid.net -all"),
        Zone::new(OTHER).mx("@", 10, "mx.other.example."),
        Zone::new("113.0.203.in-addr.arpa").ptr("9", "out1.hosting.example."),
        Zone::new("hosting.example").a("out1", "203.0.113.9"),
    ]
}

/// Yesterday's report for the walk's domain: a signing service and a forward-confirmed host.
fn report(app: &TestApp) -> Vec<u8> {
    let today = crate::common::today_start(app);
    format!(
        r#"<feedback><report_metadata><org_name>Receiver</org_name><report_id>walk-1</report_id>
<date_range><begin>{}</begin><end>{}</end></date_range></report_metadata>
<policy_published><domain>{DOMAIN}</domain><p>none</p></policy_published>
<record><row><source_ip>192.0.2.10</source_ip><count>140</count><policy_evaluated><disposition>none</disposition>
<dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>{DOMAIN}</header_from></identifiers>
<auth_results><dkim><domain>{DOMAIN}</domain><selector>s1</selector><result>pass</result></dkim>
<spf><domain>{DOMAIN}</domain><result>pass</result></spf></auth_results></record>
<record><row><source_ip>203.0.113.9</source_ip><count>10</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{DOMAIN}</header_from></identifiers>
<auth_results><spf><domain>{DOMAIN}</domain><result>fail</result></spf></auth_results></record>
</feedback>"#,
        today - 86_400,
        today - 1
    )
    .into_bytes()
}

struct Walk {
    dns: FixtureServer,
    app: TestApp,
    owner: mailward_api_tests::SignedUp,
    /// Route 53 in moto, serving a zone for the walk's domain (with `MOTO_ENDPOINT`).
    route53: Option<aws_sdk_route53::Client>,
}

/// Route 53 in moto with a zone for the walk's domain; `None` without moto (the walk then
/// skips its DNS connection).
async fn moto_route53() -> Option<(
    std::sync::Arc<dyn mailward_domain::dns_connections::DnsHosts>,
    aws_sdk_route53::Client,
)> {
    let endpoint = std::env::var("MOTO_ENDPOINT").ok()?;
    let sdk = mailward_aws::emulator_config(&endpoint).await;
    let route53 = aws_sdk_route53::Client::new(&sdk);
    route53
        .create_hosted_zone()
        .name(DOMAIN)
        .caller_reference(uuid::Uuid::new_v4().to_string())
        .send()
        .await
        .unwrap();
    Some((
        std::sync::Arc::new(mailward_aws::dns_hosts::Route53Hosts::new(sdk)),
        route53,
    ))
}

/// The record sets at `name` in a moto zone, as `TYPE value` lines joined by ` | `.
async fn sets_at(route53: &aws_sdk_route53::Client, zone: &str, name: &str) -> String {
    let sets = route53
        .list_resource_record_sets()
        .hosted_zone_id(zone)
        .send()
        .await
        .unwrap();
    let mut found = Vec::new();
    for set in sets.resource_record_sets() {
        if set.name().trim_end_matches('.') == name {
            for r in set.resource_records() {
                found.push(format!("{} {}", set.r#type().as_str(), r.value()));
            }
        }
    }
    found.join(" | ")
}

impl Walk {
    /// One request of the walk; the line to answer.
    async fn answer(&self, line: &str) -> String {
        let mut words = line.splitn(4, ' ');
        let command = words.next().unwrap_or_default();
        let args: Vec<&str> = words.collect();
        match command {
            "code" => self.app.code_for(args[0]),
            "publish" => {
                let (host, kind, value) = (args[0], args[1], args[2]);
                match kind {
                    "TXT" => self.dns.set_txt(host, value).unwrap(),
                    "CNAME" => self
                        .dns
                        .set(
                            host,
                            RecordType::Cname,
                            vec![RecordData::Cname(value.trim_end_matches('.').to_owned())],
                        )
                        .unwrap(),
                    other => panic!("the walk published a {other} record"),
                }
                "ok".into()
            }
            "sweep" => {
                self.app.clock.advance(time::Duration::seconds(301));
                sweep(&self.app).await;
                "ok".into()
            }
            "import" => {
                crate::common::import_for(&self.app, &self.owner, &report(&self.app)).await;
                let id = self.domain_id(DOMAIN).await;
                crate::common::identify_now(&self.app, &self.owner, &id).await;
                "ok".into()
            }
            "viewer" => {
                member(&self.app, &self.owner, args[0], &["viewer"], &[]).await;
                "ok".into()
            }
            "limited" => {
                let (status, group) = call(
                    &self.app,
                    Method::POST,
                    "/groups",
                    &self.owner.key,
                    Some(json!({"name": "Walk clients"})),
                )
                .await;
                assert_eq!(status, 201, "{group}");
                let group = group["id"].as_str().unwrap().to_owned();
                let id = self.domain_id(DOMAIN).await;
                let (status, body) = call(
                    &self.app,
                    Method::POST,
                    &format!("/domains/{id}"),
                    &self.owner.key,
                    Some(json!({"group_id": group})),
                )
                .await;
                assert_eq!(status, 200, "{body}");
                member(&self.app, &self.owner, args[0], &["editor"], &[&group]).await;
                "ok".into()
            }
            // A fresh organization whose administrator turns on MFA (the owner's sign-ins
            // must stay code-only for the later walks).
            "admin2" => {
                self.app.sign_up(args[0], "Walk Two").await;
                "ok".into()
            }
            // The service's Unix time (the test's clock), after moving it `args[0]` seconds:
            // what an authenticator app's codes are computed from.
            "now" => {
                let by = args.first().map_or(0, |s| s.parse::<i64>().unwrap());
                self.app.clock.advance(time::Duration::seconds(by));
                mailward_domain::clock::Clock::unix(self.app.clock.as_ref()).to_string()
            }
            "route53" => match &self.route53 {
                None => "none".into(),
                Some(_) if args.len() < 2 => "ready".into(),
                Some(client) => sets_at(client, args[0], args[1]).await,
            },
            "other" => {
                let (status, body) = call(
                    &self.app,
                    Method::POST,
                    "/domains",
                    &self.owner.key,
                    Some(json!({"url": OTHER})),
                )
                .await;
                assert_eq!(status, 201, "{body}");
                body["id"].as_str().unwrap().to_owned()
            }
            other => panic!("the walk asked for {other:?}"),
        }
    }

    async fn domain_id(&self, url: &str) -> String {
        let (_, list) = call(
            &self.app,
            Method::GET,
            "/domains?per_page=100",
            &self.owner.key,
            None,
        )
        .await;
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["url"] == url)
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("{url} is not watched: {list}"))
    }
}

#[tokio::test]
async fn a_new_user_walks_the_web_application_in_chromium() {
    if !browser_present() {
        return;
    }
    let web = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../web");
    npm_ci_once(&web, "axe-core");
    let dns = FixtureServer::start(zones()).await.unwrap();
    let addr = dns.addr().to_string();
    let route53 = moto_route53().await;
    let hosts = route53.as_ref().map(|(hosts, _)| hosts.clone());
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        if let Some(hosts) = hosts {
            s.dns_hosts = Some(mailward_local_stack::DnsHostsOverride(hosts));
            // moto's STS evaluates no trust policy (see dns_connections.rs).
            s.role_trust_probe = false;
        }
        // Every person of the walk signs up and in from one address: more than the `signup`
        // bucket's default ten an hour.
        s.rate_limits.push((
            mailward_services::config::Scope::Signup,
            "40/3600".parse().unwrap(),
        ));
    })
    .await;
    let owner = app.sign_up("owner@walk.example", "Walk Org").await;
    let shots = std::env::var_os("MAILWARD_WEB_SHOTS")
        .map_or_else(|| app.dir.path().join("shots"), PathBuf::from);
    let walk = Walk {
        dns,
        app,
        owner,
        route53: route53.map(|(_, client)| client),
    };
    let child = std::process::Command::new(venv_python())
        .arg(web.join("walk.py"))
        .args([
            "--base",
            &walk.app.url(""),
            "--email",
            &walk.owner.email,
            "--domain",
            DOMAIN,
        ])
        .arg("--shots")
        .arg(&shots)
        .arg("--axe")
        .arg(web.join("node_modules/axe-core/axe.min.js"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python runs");
    let mut child = mailward_api_tests::KillOnDrop(child);
    let mut stdin = child.0.stdin.take().unwrap();
    let stdout = child.0.stdout.take().unwrap();
    // The walk's lines, read on a thread of their own (tokio here has no process support).
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut said = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(600);
    while let Ok(Some(line)) = tokio::time::timeout_at(deadline, rx.recv()).await {
        if let Some(request) = line.strip_prefix("@@ ") {
            let reply = walk.answer(request).await;
            stdin.write_all(format!("{reply}\n").as_bytes()).unwrap();
            stdin.flush().unwrap();
        } else {
            eprintln!("walk: {line}");
            said.push(line);
        }
    }
    let status = child.0.wait().unwrap();
    assert!(
        status.success(),
        "the browser walk failed:\n{}",
        said.join("\n")
    );
    assert!(
        said.iter().any(|l| l == "done"),
        "the walk did not finish:\n{}",
        said.join("\n")
    );
}

#[tokio::test]
async fn a_member_signs_in_through_the_identity_provider_in_chromium() {
    if !browser_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ca = mailward_testkit::TestCa::new("Mailward Web SSO Test CA");
    let ca_path = dir.path().join("ca.pem");
    std::fs::write(&ca_path, ca.cert().pem()).unwrap();
    let dns = FixtureServer::start(vec![Zone::new("sso-walk.example")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.webhook_allow_loopback = true;
        s.extra_ca = Some(ca_path);
    })
    .await;
    let idp = crate::sso::Provider::start_for(
        &ca,
        dir.path(),
        &app.url("/oauth/sso/callback"),
        &[("mailward-web", "mailward-web-secret")],
    );
    let admin = app.sign_up("admin@sso-walk.example", "SSO Walk").await;
    let (status, view) = call(
        &app,
        Method::POST,
        "/sso",
        &admin.key,
        Some(json!({
            "issuer": idp.issuer,
            "client_id": "mailward-web",
            "client_secret": "mailward-web-secret",
            "domains": ["sso-walk.example"],
        })),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    dns.set_txt(
        view["domains"][0]["txt_name"].as_str().unwrap(),
        view["domains"][0]["txt_value"].as_str().unwrap(),
    )
    .unwrap();
    let (status, view) = call(&app, Method::POST, "/sso/verify", &admin.key, None).await;
    assert_eq!(status, 200);
    assert_eq!(view["domains"][0]["verified"], true, "{view}");

    let web = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../web");
    let url = app.url("");
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(venv_python())
            .arg(web.join("sso.py"))
            .args(["--base", &url, "--email", "admin@sso-walk.example"])
            .output()
            .expect("python runs")
    })
    .await
    .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && said.lines().any(|l| l == "done"),
        "the SSO walk failed:\n{said}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The session the web opened is the provider's sign-in.
    let sessions = mailward_store::identity::sessions(app.stack.state.store.as_ref(), {
        let account = mailward_store::accounts::get_by_email(
            app.stack.state.store.as_ref(),
            "admin@sso-walk.example",
        )
        .await
        .unwrap()
        .unwrap();
        account.value.id
    })
    .await
    .unwrap();
    assert!(
        sessions.iter().any(|s| s.provider == "oidc"),
        "no session from the provider: {sessions:?}"
    );
}
