//! Tenant trust, findings 1 and 2: a report belongs to the domain whose report address
//! received it, never to every organization watching the name, and an unauthenticated report
//! (anyone can mail a report address) cannot suppress an authenticated one. Driven through the
//! SMTP mailbox as a reporter delivers, with report mail DKIM-signed by a reporter whose key a
//! DNS server publishes.

use crate::common::{add_domain, get};
use mail_auth::common::crypto::Ed25519Key;
use mail_auth::common::headers::HeaderWriter as _;
use mail_auth::dkim::DkimSigner;
use mailward_api_tests::TestApp;
use mailward_dns_fixture::{FixtureServer, Zone};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

/// The reporter: its domain publishes the DKIM key its report mail is signed with.
const REPORTER: &str = "receiver.example";
const SELECTOR: &str = "s1";

struct Setup {
    app: TestApp,
    _dns: FixtureServer,
    /// The reporter's signing key (PKCS#8).
    pkcs8: Vec<u8>,
    smtp: std::net::SocketAddr,
}

async fn setup() -> Setup {
    use base64::Engine as _;
    let pkcs8 = Ed25519Key::generate_pkcs8().unwrap();
    let public = Ed25519Key::from_pkcs8_der(&pkcs8).unwrap().public_key();
    let zone = Zone::new(REPORTER).txt(
        &format!("{SELECTOR}._domainkey.{REPORTER}."),
        &format!(
            "v=DKIM1; k=ed25519; p={}",
            base64::engine::general_purpose::STANDARD.encode(public)
        ),
    );
    let dns = FixtureServer::start(vec![zone, Zone::new("shared.example")])
        .await
        .unwrap();
    let addr = dns.addr().to_string();
    let app = TestApp::start_with(|s| {
        s.dns = Some(addr);
        s.publish_outbox = false;
        s.smtp_listen = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    let smtp = app.stack.smtp_addr.expect("listening");
    Setup {
        app,
        _dns: dns,
        pkcs8,
        smtp,
    }
}

/// A one-day DMARC report of yesterday for `domain`: `count` messages from one source.
pub(crate) fn dmarc_xml(app: &TestApp, domain: &str, id: &str, count: u64) -> String {
    let today = crate::common::today_start(app);
    format!(
        "<?xml version=\"1.0\"?><feedback><report_metadata><org_name>Receiver</org_name>\
<email>noreply-dmarc@{REPORTER}</email><report_id>{id}</report_id><date_range><begin>{}</begin>\
<end>{}</end></date_range></report_metadata><policy_published><domain>{domain}</domain><p>none</p>\
</policy_published><record><row><source_ip>192.0.2.10</source_ip><count>{count}</count>\
<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated>\
</row><identifiers><header_from>{domain}</header_from></identifiers></record></feedback>",
        today - 86_400,
        today - 1
    )
}

/// A TLS report of yesterday for `domain`.
fn tls_json(app: &TestApp, domain: &str, id: &str) -> String {
    let at = |t: i64| {
        time::OffsetDateTime::from_unix_timestamp(t)
            .unwrap()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let start = crate::common::today_start(app) - 86_400;
    serde_json::json!({
        "organization-name": "Receiver",
        "date-range": {"start-datetime": at(start), "end-datetime": at(start + 86_399)},
        "contact-info": format!("tlsrpt@{REPORTER}"),
        "report-id": id,
        "policies": [{
            "policy": {"policy-type": "no-policy-found", "policy-domain": domain},
            "summary": {"total-successful-session-count": 12, "total-failure-session-count": 0}
        }]
    })
    .to_string()
}

impl Setup {
    /// Report mail from the reporter carrying `attachment` (`content_type`), DKIM-signed by
    /// the reporter's key when `signed`.
    fn mail(&self, to: &[&str], content_type: &str, attachment: &str, signed: bool) -> String {
        let message = format!(
            "From: DMARC Reports <noreply-dmarc@{REPORTER}>\r\nTo: {}\r\nSubject: Report\r\n\
MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\n\
Content-Type: text/plain\r\n\r\nA report.\r\n--b1\r\nContent-Type: {content_type}\r\n\
Content-Disposition: attachment; filename=\"report\"\r\n\r\n{}\r\n--b1--\r\n",
            to.join(", "),
            attachment.replace('\n', "\r\n")
        );
        if !signed {
            return message;
        }
        let key = Ed25519Key::from_pkcs8_der(&self.pkcs8).unwrap();
        let signature = DkimSigner::from_key(key)
            .domain(REPORTER)
            .selector(SELECTOR)
            .headers(["From", "To", "Subject", "MIME-Version", "Content-Type"])
            .sign(message.as_bytes())
            .unwrap();
        format!("{}{message}", signature.to_header())
    }

    /// Delivers `message` over SMTP to `recipients`: the reply code of its data.
    async fn deliver(&self, recipients: &[&str], message: &str) -> u16 {
        let stream = tokio::net::TcpStream::connect(self.smtp).await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = tokio::io::BufReader::new(read).lines();
        let mut reply = async || loop {
            let line = lines.next_line().await.unwrap().unwrap_or_default();
            if line.len() < 4 || line.as_bytes()[3] == b' ' {
                return line
                    .get(..3)
                    .and_then(|c| c.parse::<u16>().ok())
                    .unwrap_or(0);
            }
        };
        assert_eq!(reply().await, 220);
        let mut commands = vec![
            "EHLO mx.receiver.example\r\n".to_owned(),
            format!("MAIL FROM:<noreply-dmarc@{REPORTER}>\r\n"),
        ];
        commands.extend(recipients.iter().map(|r| format!("RCPT TO:<{r}>\r\n")));
        commands.push("DATA\r\n".into());
        for command in commands {
            write.write_all(command.as_bytes()).await.unwrap();
            let code = reply().await;
            assert!(code == 250 || code == 354, "{command}: {code}");
        }
        // Dot-stuffing: a line starting with a dot gets another.
        let body = message.replace("\r\n.", "\r\n..");
        write
            .write_all(format!("{body}\r\n.\r\n").as_bytes())
            .await
            .unwrap();
        let code = reply().await;
        write.write_all(b"QUIT\r\n").await.unwrap();
        code
    }
}

async fn summary(app: &TestApp, key: &str, domain: &Value) -> Value {
    let id = domain["id"].as_str().unwrap();
    get(app, &format!("/domains/{id}/reports/summary"), key).await
}

#[tokio::test]
async fn two_organizations_watching_one_name_each_see_only_their_own_reports() {
    let s = setup().await;
    let app = &s.app;
    let first = app.sign_up("owner@shared.example", "Owner").await;
    let second = app.sign_up("auditor@auditor.example", "Auditor").await;
    let mine = add_domain(app, &first.key, "shared.example").await;
    let theirs = add_domain(app, &second.key, "shared.example").await;
    let (my_rua, their_rua) = (
        mine["monitoring_email"].as_str().unwrap(),
        theirs["monitoring_email"].as_str().unwrap(),
    );
    assert_ne!(my_rua, their_rua);

    // A report mailed to the first organization's address is the first one's only.
    let xml = dmarc_xml(app, "shared.example", "r-first", 30);
    let message = s.mail(&[my_rua], "text/xml", &xml, true);
    assert_eq!(s.deliver(&[my_rua], &message).await, 250);
    assert_eq!(summary(app, &first.key, &mine).await["volume"], 30);
    assert_eq!(summary(app, &second.key, &theirs).await["volume"], 0);
    let tls = tls_json(app, "shared.example", "t-first");
    let message = s.mail(&[my_rua], "application/tlsrpt+json", &tls, true);
    assert_eq!(s.deliver(&[my_rua], &message).await, 250);
    let tls_of = |key: String, domain: &Value| {
        let path = format!("/domains/{}/tls-reports", domain["id"].as_str().unwrap());
        async move { get(app, &path, &key).await["data"].clone() }
    };
    let listed = tls_of(first.key.clone(), &mine).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["authenticated"], true);
    assert_eq!(
        tls_of(second.key.clone(), &theirs).await,
        serde_json::json!([])
    );

    // One transaction to both addresses: each organization gets its own copy.
    let xml = dmarc_xml(app, "shared.example", "r-both", 5);
    let message = s.mail(&[my_rua, their_rua], "text/xml", &xml, true);
    assert_eq!(s.deliver(&[my_rua, their_rua], &message).await, 250);
    assert_eq!(summary(app, &first.key, &mine).await["volume"], 35);
    assert_eq!(summary(app, &second.key, &theirs).await["volume"], 5);

    // A report about another name, mailed to this domain's address: attributed to no one.
    let xml = dmarc_xml(app, "elsewhere.example", "r-other", 7);
    let message = s.mail(&[my_rua], "text/xml", &xml, true);
    assert_eq!(s.deliver(&[my_rua], &message).await, 250);
    assert_eq!(summary(app, &first.key, &mine).await["volume"], 35);
}

#[tokio::test]
async fn a_forged_unauthenticated_report_cannot_suppress_an_authenticated_one() {
    let s = setup().await;
    let app = &s.app;
    let owner = app.sign_up("owner@shared.example", "Owner").await;
    let domain = add_domain(app, &owner.key, "shared.example").await;
    let rua = domain["monitoring_email"].as_str().unwrap();

    // The forger guesses the real report's identity and mails first, unsigned.
    let forged = dmarc_xml(app, "shared.example", "r-1", 9_999);
    let message = s.mail(&[rua], "text/xml", &forged, false);
    assert_eq!(s.deliver(&[rua], &message).await, 250);
    let before = summary(app, &owner.key, &domain).await;
    assert_eq!(
        (
            &before["volume"],
            &before["reports_authenticated"],
            &before["reports_unauthenticated"]
        ),
        (
            &serde_json::json!(9_999),
            &serde_json::json!(0),
            &serde_json::json!(1)
        ),
        "{before}"
    );

    // The real, signed report of the same identity replaces it.
    let real = dmarc_xml(app, "shared.example", "r-1", 40);
    let message = s.mail(&[rua], "text/xml", &real, true);
    assert_eq!(s.deliver(&[rua], &message).await, 250);
    let after = summary(app, &owner.key, &domain).await;
    assert_eq!(after["volume"], 40, "{after}");
    assert_eq!(
        (
            &after["reports_authenticated"],
            &after["reports_unauthenticated"]
        ),
        (&serde_json::json!(1), &serde_json::json!(0))
    );
    let stored = get(
        app,
        &format!("/domains/{}", domain["id"].as_str().unwrap()),
        &owner.key,
    )
    .await;
    assert_eq!(stored["last_14_days_volume"], 40, "the figures follow");

    // Another forgery afterwards changes nothing, nor does a copy with a broken signature.
    let message = s.mail(&[rua], "text/xml", &forged, false);
    assert_eq!(s.deliver(&[rua], &message).await, 250);
    let tampered = s
        .mail(&[rua], "text/xml", &real, true)
        .replace("<count>40</count>", "<count>41</count>");
    assert_eq!(s.deliver(&[rua], &tampered).await, 250);
    let last = summary(app, &owner.key, &domain).await;
    assert_eq!(last["volume"], 40, "{last}");
    assert_eq!(last["reports_unauthenticated"], 0);
}

/// `POST /tlsrpt/{token}` with `body` as `content_type`: the status and the answer.
async fn upload(app: &TestApp, token: &str, content_type: &str, body: Vec<u8>) -> (u16, Value) {
    let res = app
        .request(reqwest::Method::POST, &format!("/tlsrpt/{token}"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// The domain's TLS reports once `n` are listed.
async fn tls_reports_when(app: &TestApp, key: &str, id: &str, n: usize) -> Vec<Value> {
    let path = format!("/domains/{id}/tls-reports");
    for _ in 0..600 {
        let list = get(app, &path, key).await;
        let data = list["data"].as_array().cloned().unwrap_or_default();
        if data.len() == n {
            return data;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{path} never listed {n} reports");
}

#[tokio::test]
async fn tls_reports_posted_over_https_are_imported_unauthenticated() {
    use std::io::Write as _;
    let s = setup().await;
    let app = &s.app;
    let owner = app.sign_up("owner@shared.example", "Owner").await;
    let domain = add_domain(app, &owner.key, "shared.example").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let token = id.replace('-', "");

    // What is refused, each with its reason.
    let report = tls_json(app, "shared.example", "t-1").into_bytes();
    assert_eq!(
        upload(app, &token, "application/json", report.clone())
            .await
            .0,
        415
    );
    assert_eq!(
        upload(
            app,
            "not-a-domain",
            "application/tlsrpt+json",
            report.clone()
        )
        .await
        .0,
        404
    );
    let (status, err) = upload(app, &token, "application/tlsrpt+json", b"{}".to_vec()).await;
    assert_eq!(
        (status, err["param"].as_str()),
        (400, Some("body")),
        "{err}"
    );
    let dmarc = dmarc_xml(app, "shared.example", "d-1", 5).into_bytes();
    assert_eq!(
        upload(app, &token, "application/tlsrpt+json", dmarc)
            .await
            .0,
        400
    );
    let huge = vec![b' '; 2 * 1024 * 1024];
    assert_eq!(
        upload(app, &token, "application/tlsrpt+json", huge).await.0,
        413
    );

    // JSON, then gzip'd JSON: each shows in the domain's TLS reports, unauthenticated.
    let (status, accepted) = upload(app, &token, "application/tlsrpt+json", report).await;
    assert_eq!(
        (status, &accepted["report_ids"]),
        (202, &serde_json::json!(["t-1"]))
    );
    let listed = tls_reports_when(app, &owner.key, &id, 1).await;
    assert_eq!(listed[0]["report_id"], "t-1");
    assert_eq!(listed[0]["authenticated"], false);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(tls_json(app, "shared.example", "t-2").as_bytes())
        .unwrap();
    let (status, _) = upload(app, &token, "application/tlsrpt+gzip", gz.finish().unwrap()).await;
    assert_eq!(status, 202);
    tls_reports_when(app, &owner.key, &id, 2).await;

    // A report the reporter signed and mailed is not displaced by an upload of its id.
    let rua = domain["monitoring_email"].as_str().unwrap();
    let real = tls_json(app, "shared.example", "t-3");
    let message = s.mail(&[rua], "application/tlsrpt+json", &real, true);
    assert_eq!(s.deliver(&[rua], &message).await, 250);
    tls_reports_when(app, &owner.key, &id, 3).await;
    let forged = real.replace(
        "\"total-successful-session-count\":12",
        "\"total-successful-session-count\":999",
    );
    assert_ne!(forged, real);
    let (status, _) = upload(app, &token, "application/tlsrpt+json", forged.into_bytes()).await;
    assert_eq!(status, 202);
    // The upload is imported (or found a duplicate) by the worker: give it the time a second
    // upload takes to show, then read the signed one back unchanged.
    let fourth = tls_json(app, "shared.example", "t-4").into_bytes();
    assert_eq!(
        upload(app, &token, "application/tlsrpt+json", fourth)
            .await
            .0,
        202
    );
    let listed = tls_reports_when(app, &owner.key, &id, 4).await;
    let signed = listed.iter().find(|r| r["report_id"] == "t-3").unwrap();
    assert_eq!(
        (&signed["authenticated"], &signed["total_successful"]),
        (&serde_json::json!(true), &serde_json::json!(12))
    );

    // Uploads are counted per client address and per domain: a flood gets 429.
    let mut statuses = Vec::new();
    for _ in 0..40 {
        statuses.push(upload(app, &token, "text/plain", b"x".to_vec()).await.0);
    }
    assert!(
        statuses.contains(&415) && statuses.ends_with(&[429]),
        "{statuses:?}"
    );
}

/// A public failure-report sample (see shared/mailward-reports/tests/fixtures/failure).
fn failure_sample(name: &str) -> String {
    let path = format!(
        "{}/../../shared/mailward-reports/tests/fixtures/failure/parsedmarc/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[tokio::test]
async fn failure_reports_are_kept_redacted_listed_analysed_and_expire() {
    let s = setup().await;
    let app = &s.app;
    let owner = app.sign_up("owner@failures.example", "Owner").await;
    let domain = add_domain(app, &owner.key, "example.com").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let rua = domain["monitoring_email"].as_str().unwrap().to_owned();
    // Another organization watching the same name, with its own address, sees none of them.
    let other = app.sign_up("it@other.example", "Other").await;
    let theirs = add_domain(app, &other.key, "example.com").await;

    // LinkedIn's ARF report (twice: one report) and Exim's plain text, mailed to the address.
    let linkedin = failure_sample("dmarc_ruf_report_linkedin.eml");
    for _ in 0..2 {
        assert_eq!(s.deliver(&[&rua], &linkedin).await, 250);
    }
    // The domain opts in: its record's ruf names Mailward's failure-report address, which
    // takes Exim's plain-text report.
    let options = serde_json::json!({"dmarc_options": {"policy": "none", "pct": 100, "sp": "same",
        "strict_spf": false, "strict_dkim": false, "failure_reports": true}});
    let (status, _) = crate::common::call(
        app,
        reqwest::Method::POST,
        &format!("/domains/{id}"),
        &owner.key,
        Some(options),
    )
    .await;
    assert_eq!(status, 200);
    let ruf = rua.replacen("rua+", "ruf+", 1);
    let records = get(app, &format!("/domains/{id}/dns-records"), &owner.key).await;
    assert!(
        records.to_string().contains(&format!("ruf=mailto:{ruf}")),
        "{records}"
    );
    let exim = failure_sample("exim_plain_text_only_no_arf_part.eml");
    assert_eq!(s.deliver(&[&ruf], &exim).await, 250);

    // An aggregate report shows the same source address: identification names its sender.
    let aggregate = dmarc_xml(app, "example.com", "agg-1", 5).replace("192.0.2.10", "10.10.10.10");
    let message = s.mail(&[&rua], "text/xml", &aggregate, true);
    assert_eq!(s.deliver(&[&rua], &message).await, 250);
    let mut sender = Value::Null;
    for _ in 0..600 {
        app.clock.advance(time::Duration::seconds(10));
        let senders = get(app, &format!("/domains/{id}/sources"), &owner.key).await;
        if let Some(found) = senders.as_array().and_then(|a| a.first()) {
            sender = found["id"].clone();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(sender.is_string(), "the sender was identified");

    let path = format!("/domains/{id}/failure-reports");
    let list = get(app, &path, &owner.key).await;
    assert_eq!(list["page_info"]["total_count"], 2, "{list}");
    let data = list["data"].as_array().unwrap();
    assert!(data.iter().all(|r| r["original_headers"].is_null()));
    let arf = data.iter().find(|r| r["arf"] == true).unwrap();
    assert_eq!(arf["auth_failure"], "dmarc");
    assert_eq!(arf["source_ip"], "10.10.10.10");
    assert_eq!(
        arf["original_rcpt_to"],
        serde_json::json!(["redacted@linkedin.com"])
    );
    assert_eq!(arf["sender_id"], sender);
    let plain = data.iter().find(|r| r["arf"] == false).unwrap();
    assert_eq!(
        plain["sender_id"],
        Value::Null,
        "203.0.113.68 sent no aggregate-report mail"
    );
    assert_eq!(plain["source_ip"], "203.0.113.68");
    assert!(
        plain["unread"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u == "Auth-Failure")
    );
    let only = get(app, &format!("{path}?auth_failure=dmarc"), &owner.key).await;
    assert_eq!(only["page_info"]["total_count"], 1);

    // One report: headers only, local parts redacted; its header analysis.
    let one = get(
        app,
        &format!("{path}/{}", arf["id"].as_str().unwrap()),
        &owner.key,
    )
    .await;
    let headers = one["original_headers"].as_str().unwrap();
    assert!(
        headers.contains("From: Sender <redacted@example.com>"),
        "{headers}"
    );
    assert!(!headers.contains("sender@example.com") && !headers.contains("HTML Text"));
    let analysis = get(
        app,
        one["header_analysis_path"].as_str().unwrap(),
        &owner.key,
    )
    .await;
    assert!(
        !analysis["receivedHops"].as_array().unwrap().is_empty(),
        "{analysis}"
    );

    let theirs = format!(
        "/domains/{}/failure-reports",
        theirs["id"].as_str().unwrap()
    );
    assert_eq!(
        get(app, &theirs, &other.key).await["page_info"]["total_count"],
        0
    );
    let (status, _) = crate::common::call(app, reqwest::Method::GET, &path, &other.key, None).await;
    assert_eq!(status, 404);

    // An assistant reads the same list through MCP.
    let tokens = crate::oauth::connect(app, "owner@failures.example", &owner.org_id).await;
    let token = tokens["access_token"].as_str().unwrap().to_owned();
    let args = serde_json::json!({"domain": "example.com", "auth_failure": "dmarc"});
    let result = crate::mcp::call(app, "/mcp", Some(&token), "list_failure_reports", args).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["page_info"]["total_count"], 1,
        "{result}"
    );

    // The raw mail (with the original body) is not kept: only the headers, redacted.
    if let Some(objects) = app.stack.state.objects.as_ref() {
        // Only the aggregate report's delivery is kept raw, never a failure report's mail.
        let raw = objects.list("reports/raw/").await.unwrap();
        assert_eq!(raw.len(), 1, "{raw:?}");
        let kept = objects.get(&raw[0]).await.unwrap().unwrap();
        assert!(!String::from_utf8_lossy(&kept).contains("HTML Text"));
    }

    // An organization that turns redaction off keeps the addresses of reports from then on.
    let settings = serde_json::json!({"settings": {"redact_failure_reports": false}});
    let (status, org) = crate::common::call(
        app,
        reqwest::Method::POST,
        &format!("/organizations/{}", owner.org_id),
        &owner.key,
        Some(settings),
    )
    .await;
    assert_eq!(
        (status.as_u16(), &org["settings"]["redact_failure_reports"]),
        (200, &serde_json::json!(false)),
        "{org}"
    );
    // The relay's report, unchanged, for the organization's second domain.
    let second = add_domain(app, &owner.key, "domain.de").await;
    let second_rua = second["monitoring_email"].as_str().unwrap().to_owned();
    let relay = failure_sample(
        "DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml",
    );
    assert_eq!(s.deliver(&[&second_rua], &relay).await, 250);
    let second_path = format!(
        "/domains/{}/failure-reports",
        second["id"].as_str().unwrap()
    );
    let list = get(app, &second_path, &owner.key).await;
    let kept = list["data"][0].clone();
    assert_eq!(kept["delivery_result"], "smg-policy-action", "{list}");
    assert_eq!(kept["redacted"], false);
    assert_eq!(
        kept["original_rcpt_to"],
        serde_json::json!(["peter.pan@domain.de"])
    );

    // A free plan keeps them a week.
    app.clock.advance(time::Duration::days(8));
    assert_eq!(
        get(app, &path, &owner.key).await["page_info"]["total_count"],
        0
    );
}
