//! Report ingestion into the local stack: attribution to the domains a delivery is addressed
//! to, idempotency across deliveries and encodings, unattributed and refused inputs, rows
//! per UTC day, and the raw delivery kept in object storage.

use crate::common::quiet_app;
use crate::common::{add_domain, to};
use mailward_domain::Clock as _;
use mailward_reports::Limits;
use mailward_workers::ingest::{Status, ingest};

fn fixture(path: &str) -> Vec<u8> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/mailward-reports/tests/fixtures/dmarc-aggregate");
    std::fs::read(root.join(path)).unwrap()
}

#[tokio::test]
async fn reports_import_once_per_addressed_domain() {
    let app = quiet_app().await;
    let state = &app.stack.state;
    let limits = Limits::default();
    let s = app.sign_up("dmarc@test.example", "Test Net Owner").await;
    let domain = add_domain(&app, &s.key, "test.net").await;
    let mine = to(&domain);

    // A report for another name, even at this domain's address: unattributed, nothing imported.
    let other = ingest(
        state,
        &fixture("dmarc-report-viewer/acme.xml"),
        &mine,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(other[0].status, Status::Unattributed, "{other:?}");

    let first = ingest(
        state,
        &fixture("dmarc-report-converter/test.xml"),
        &mine,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(
        (first[0].status, first[0].organizations),
        (Status::Imported, 1),
        "{first:?}"
    );
    assert_eq!((first[0].records, first[0].messages), (2, 7));
    // The same report again, plain or packed, changes nothing.
    for again in [
        "dmarc-report-converter/test.xml",
        "dmarc-report-converter/test.xml.gz.gz",
        "dmarc-report-converter/test.xml.zip",
    ] {
        let out = ingest(state, &fixture(again), &mine, &limits)
            .await
            .unwrap();
        assert_eq!(out[0].status, Status::Duplicate, "{again}");
    }
    // The first delivery is the raw copy kept: a later one of the same report (here packed,
    // but it could be anyone's forgery) never replaces it.
    let (org, domain_id): (uuid::Uuid, uuid::Uuid) = (
        s.org_id.parse().unwrap(),
        domain["id"].as_str().unwrap().parse().unwrap(),
    );
    let kept = mailward_store::reports::list(state.store.as_ref(), org, domain_id)
        .await
        .unwrap();
    let raw_key = kept[0].raw_key.as_deref().expect("raw kept");
    let raw = state.objects.as_ref().unwrap().get(raw_key).await.unwrap();
    assert_eq!(raw, Some(fixture("dmarc-report-converter/test.xml")));
    // Same id, other range: a different report (reporters reuse ids).
    let reused = ingest(
        state,
        &fixture("dmarc-report-converter/test2.xml"),
        &mine,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(reused[0].status, Status::Imported);

    let day = time::macros::date!(2018 - 04 - 20);
    let rows =
        mailward_store::reports::rows_between(state.store.as_ref(), org, domain_id, day, day)
            .await
            .unwrap();
    let volume: u64 = rows.iter().map(|(_, r)| r.volume).sum();
    let passing: u64 = rows.iter().map(|(_, r)| r.dmarc_pass).sum();
    assert_eq!((volume, passing), (7, 5), "{rows:?}");
    assert!(rows.iter().all(|(d, _)| d == "2018-04-20"));

    // A second organization watching the same name gets its own copy, once, when its own
    // address receives it.
    let t = app.sign_up("dmarc@second.example", "Second Watcher").await;
    let theirs = to(&add_domain(&app, &t.key, "test.net").await);
    let out = ingest(
        state,
        &fixture("dmarc-report-converter/test.xml.gz"),
        &theirs,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!((out[0].status, out[0].organizations), (Status::Imported, 1));
    let out = ingest(
        state,
        &fixture("dmarc-report-converter/test.xml"),
        &theirs,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(out[0].status, Status::Duplicate);
    let reports = mailward_store::reports::list(state.store.as_ref(), org, domain_id)
        .await
        .unwrap();
    assert_eq!(
        reports.len(),
        2,
        "the first organization's reports are untouched"
    );

    // The raw delivery is kept, named by the report's identity (a duplicate delivery is the
    // same object), and never served.
    let raw = reports[0].raw_key.clone().expect("raw kept");
    assert!(raw.starts_with("reports/raw/"));
    assert!(raw.ends_with(&format!("/{}", reports[0].key)), "{raw}");
    assert!(
        state
            .objects
            .as_ref()
            .unwrap()
            .head(&raw)
            .await
            .unwrap()
            .is_some()
    );

    // A shared buffer is kept raw as it is (the same bytes), and its owner gets it back once
    // ingestion returns, to read the next file into.
    let xml = fixture("dmarc-report-viewer/acme.xml");
    let shared = bytes::Bytes::from(xml.clone());
    let out = mailward_workers::ingest::ingest_shared(state, shared.clone(), &mine, &limits)
        .await
        .unwrap();
    assert_eq!(out[0].status, Status::Unattributed, "{out:?}");
    let back = shared
        .try_into_mut()
        .expect("the store let go of the buffer");
    assert_eq!(&back[..], &xml[..]);

    // Garbage, bombs and failure reports are refused with a reason, never an error.
    let refused = ingest(state, b"unused", &mine, &limits).await.unwrap();
    assert_eq!(refused[0].status, Status::Refused);
    assert!(
        refused[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("not a report")
    );
    let tiny = Limits {
        max_decompressed_bytes: 10,
        ..Limits::default()
    };
    let bomb = ingest(
        state,
        &fixture("dmarc-report-converter/test.xml.gz"),
        &mine,
        &tiny,
    )
    .await
    .unwrap();
    assert!(
        bomb[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("decompression limit")
    );
}

/// A one-day report of `domain` for the day before the app's clock.
pub(crate) fn yesterday_report(
    app: &mailward_api_tests::TestApp,
    domain: &str,
    id: &str,
) -> Vec<u8> {
    let today = crate::common::today_start(app);
    let (begin, end) = (today - 86_400, today - 1);
    format!(
        r#"<?xml version="1.0"?><feedback><report_metadata><org_name>Receiver</org_name>
<report_id>{id}</report_id><date_range><begin>{begin}</begin><end>{end}</end></date_range></report_metadata>
<policy_published><domain>{domain}</domain><p>none</p></policy_published>
<record><row><source_ip>192.0.2.10</source_ip><count>30</count><policy_evaluated><disposition>none</disposition>
<dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>
<record><row><source_ip>198.51.100.7</source_ip><count>10</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>
<record><row><source_ip>203.0.113.9</source_ip><count>10</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>
</feedback>"#
    )
    .into_bytes()
}

#[tokio::test]
async fn reports_feed_the_domain_group_and_usage_figures() {
    let app = quiet_app().await;
    let state = &app.stack.state;
    let s = app.sign_up("figures@fig.example", "Figures").await;
    let group = crate::admin::group(&app, &s.key, "Brand").await;
    let (status, domain) = crate::common::call(
        &app,
        reqwest::Method::POST,
        "/domains",
        &s.key,
        Some(serde_json::json!({"url": "fig.example", "group_id": group["id"]})),
    )
    .await;
    assert_eq!(status, 201);
    let path = format!("/domains/{}", domain["id"].as_str().unwrap());
    let before = crate::common::get(&app, &path, &s.key).await;
    assert_eq!(before["last_14_days_volume"], 0);
    assert_eq!(before["monitoring_since"], serde_json::Value::Null);

    let out = ingest(
        state,
        &yesterday_report(&app, "fig.example", "r1"),
        &to(&domain),
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(out[0].status, Status::Imported, "{out:?}");
    let after = crate::common::get(&app, &path, &s.key).await;
    // 203.0.113.9 never passes: its 10 failures are unknown mail, outside the percentages.
    assert_eq!(after["last_14_days_volume"], 50);
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 100.0);
    assert_eq!(after["last_14_days_spf_pass_pct"], 100.0);
    assert_eq!(after["last_14_days_dkim_pass_pct"], 75.0);
    let yesterday = app.clock.now().date().previous_day().unwrap();
    assert_eq!(
        after["monitoring_since"],
        mailward_store::reports::day_string(yesterday)
    );

    let groups = crate::common::get(&app, "/groups?expand[]=domains", &s.key).await;
    assert_eq!(groups["data"][0]["domains"]["last_14_days_volume"], 50);
    assert_eq!(
        groups["data"][0]["domains"]["last_14_days_dmarc_pass_pct"],
        100.0
    );
    let usage = crate::common::get(&app, "/usage?expand[]=aligned_messages", &s.key).await;
    // Yesterday may fall in the previous month; then this month has none yet.
    let same_month = yesterday.month() == app.clock.now().date().month();
    assert_eq!(usage["aligned_messages"], if same_month { 40 } else { 0 });
    let sorted =
        crate::common::get(&app, "/domains?sort=last_14_days_volume&order=desc", &s.key).await;
    assert_eq!(sorted["data"][0]["url"], "fig.example");

    // The first report's figures were its own rows; a second report adds to them.
    let out = ingest(
        state,
        &yesterday_report(&app, "fig.example", "r2"),
        &to(&domain),
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(out[0].status, Status::Imported, "{out:?}");
    let after = crate::common::get(&app, &path, &s.key).await;
    assert_eq!(after["last_14_days_volume"], 100);
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 100.0);
}

/// A report of `domain` for the day `days_ago` days before the app's clock, one record per
/// `(source, count, dkim, spf, override)`.
fn report_with_reasons(
    app: &mailward_api_tests::TestApp,
    domain: &str,
    id: &str,
    days_ago: i64,
    records: &[(&str, u64, &str, &str, Option<&str>)],
) -> Vec<u8> {
    let begin = crate::common::today_start(app) - 86_400 * days_ago;
    let end = begin + 86_399;
    let mut xml = format!(
        r#"<?xml version="1.0"?><feedback><report_metadata><org_name>Receiver</org_name>
<report_id>{id}</report_id><date_range><begin>{begin}</begin><end>{end}</end></date_range></report_metadata>
<policy_published><domain>{domain}</domain><p>none</p></policy_published>"#
    );
    for (ip, count, dkim, spf, reason) in records {
        let reason = reason
            .map(|r| format!("<reason><type>{r}</type></reason>"))
            .unwrap_or_default();
        xml.push_str(&format!(
            r#"<record><row><source_ip>{ip}</source_ip><count>{count}</count><policy_evaluated><disposition>none</disposition>
<dkim>{dkim}</dkim><spf>{spf}</spf>{reason}</policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>"#
        ));
    }
    xml.push_str("</feedback>");
    xml.into_bytes()
}

#[tokio::test]
async fn pass_percentages_count_compliant_and_non_compliant_mail_only() {
    let (_dns, app) =
        crate::common::app_on(vec![mailward_dns_fixture::Zone::new("pct.example")]).await;
    let state = &app.stack.state;
    let s = app.sign_up("pct@pct.example", "Pct").await;
    let domain = add_domain(&app, &s.key, "pct.example").await;
    let path = format!("/domains/{}", domain["id"].as_str().unwrap());
    // Day 2: a sender passing (30, DKIM only), one failing that has not passed yet (10).
    let first = report_with_reasons(
        &app,
        "pct.example",
        "p1",
        2,
        &[
            ("192.0.2.10", 30, "pass", "fail", None),
            ("198.51.100.7", 10, "fail", "fail", None),
        ],
    );
    ingest(state, &first, &to(&domain), &Limits::default())
        .await
        .unwrap();
    let after = crate::common::get(&app, &path, &s.key).await;
    assert_eq!(after["last_14_days_volume"], 40);
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 100.0, "{after}");
    assert_eq!(after["last_14_days_spf_pass_pct"], 0.0);
    assert_eq!(after["last_14_days_dkim_pass_pct"], 100.0);

    // Day 1: 198.51.100.7 passes with SPF (10), and mail forwarded by a list (20, failing)
    // is left out whatever its result.
    let second = report_with_reasons(
        &app,
        "pct.example",
        "p2",
        1,
        &[
            ("198.51.100.7", 10, "fail", "pass", None),
            ("203.0.113.9", 20, "fail", "fail", Some("mailing_list")),
        ],
    );
    ingest(state, &second, &to(&domain), &Limits::default())
        .await
        .unwrap();
    let after = crate::common::get(&app, &path, &s.key).await;
    assert_eq!(after["last_14_days_volume"], 70);
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 100.0, "{after}");

    // 198.51.100.7 has now passed in the window, so its earlier 10 failures are
    // non-compliant: the sweep sums the window again, 40 passing of 50 counted.
    mailward_workers::sweep::sweep_now(state).await.unwrap();
    let after = crate::common::get(&app, &path, &s.key).await;
    assert_eq!(after["last_14_days_volume"], 70);
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 80.0, "{after}");
    assert_eq!(after["last_14_days_spf_pass_pct"], 20.0);
    assert_eq!(after["last_14_days_dkim_pass_pct"], 60.0);
    let summary = crate::common::get(
        &app,
        &format!("{path}/reports/summary?period=last_14_days"),
        &s.key,
    )
    .await;
    let totals = &summary["totals"];
    assert_eq!(
        (
            totals["compliant"].as_u64(),
            totals["non_compliant"].as_u64()
        ),
        (Some(40), Some(10)),
        "{summary}"
    );
    assert_eq!(totals["forwarded"], 20);
}

#[tokio::test]
async fn the_report_window_slides_with_the_sweep() {
    // A DNS fixture answers the sweep at once (the default resolver address never answers).
    let (_dns, app) =
        crate::common::app_on(vec![mailward_dns_fixture::Zone::new("slide.example")]).await;
    let state = &app.stack.state;
    let s = app.sign_up("slide@slide.example", "Slide").await;
    let domain = add_domain(&app, &s.key, "slide.example").await;
    let path = format!("/domains/{}", domain["id"].as_str().unwrap());
    ingest(
        state,
        &yesterday_report(&app, "slide.example", "s1"),
        &to(&domain),
        &Limits::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        crate::common::get(&app, &path, &s.key).await["last_14_days_volume"],
        50
    );
    // Fifteen days later the report has left the window; the sweep notices.
    app.clock.advance(time::Duration::days(15));
    mailward_workers::sweep::sweep_now(state).await.unwrap();
    let after = crate::common::get(&app, &path, &s.key).await;
    assert_eq!(after["last_14_days_volume"], 0, "{after}");
    assert_eq!(after["last_14_days_dmarc_pass_pct"], 0.0);
    assert!(
        after["monitoring_since"].is_string(),
        "the first report day stays"
    );
}

/// Speaks SMTP to `addr`: sends each command, returns every reply line's code.
async fn smtp(addr: std::net::SocketAddr, conversation: &[&[u8]]) -> Vec<u16> {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = tokio::io::BufReader::new(read).lines();
    let mut codes = Vec::new();
    let next_code = async |lines: &mut tokio::io::Lines<_>| loop {
        let line: String = lines.next_line().await.unwrap().unwrap_or_default();
        // Multi-line replies continue with "250-"; the last one has a space.
        if line.len() < 4 || line.as_bytes()[3] == b' ' {
            return line
                .get(..3)
                .and_then(|c| c.parse::<u16>().ok())
                .unwrap_or(0);
        }
    };
    codes.push(next_code(&mut lines).await);
    for chunk in conversation {
        write.write_all(chunk).await.unwrap();
        // A data body gets no reply until its final dot.
        if chunk.ends_with(b"\r\n.\r\n") || !chunk.starts_with(b"From:") {
            codes.push(next_code(&mut lines).await);
        }
    }
    codes
}

#[tokio::test]
async fn the_smtp_mailbox_takes_reports_for_the_report_domain_only() {
    let app = mailward_api_tests::TestApp::start_with(|s| {
        s.publish_outbox = false;
        s.smtp_listen = Some("127.0.0.1:0".parse().unwrap());
        s.smtp_max_bytes = 64 * 1024;
    })
    .await;
    let addr = app.stack.smtp_addr.expect("listening");
    let s = app.sign_up("mailbox@mbx.example", "Mailbox").await;
    let domain = add_domain(&app, &s.key, "mbx.example").await;
    let rua = domain["monitoring_email"].as_str().unwrap().to_owned();
    let xml = String::from_utf8(yesterday_report(&app, "mbx.example", "smtp-1")).unwrap();
    let message = format!(
        "From: noreply@receiver.example\r\nTo: {rua}\r\nSubject: Report domain: mbx.example\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nThis is a DMARC report.\r\n\
--b1\r\nContent-Type: text/xml\r\nContent-Disposition: attachment; filename=\"report.xml\"\r\n\r\n{}\r\n--b1--\r\n.\r\n",
        xml.replace('\n', "\r\n")
    );
    let rcpt = format!("RCPT TO:<{rua}>\r\n");
    // Only report addresses and postmaster (RFC 5321 §4.5.1) are accepted at the report
    // domain; postmaster names no domain, so it attributes nothing.
    let report_domain = &app.stack.state.config.report_domain;
    let other_local = format!("RCPT TO:<dmarc@{report_domain}>\r\n");
    let postmaster = format!("RCPT TO:<Postmaster@{report_domain}>\r\n");
    let codes = smtp(
        addr,
        &[
            b"EHLO receiver.example\r\n",
            b"MAIL FROM:<noreply@receiver.example>\r\n",
            b"RCPT TO:<someone@elsewhere.example>\r\n",
            other_local.as_bytes(),
            postmaster.as_bytes(),
            rcpt.as_bytes(),
            b"DATA\r\n",
            message.as_bytes(),
            b"QUIT\r\n",
        ],
    )
    .await;
    assert_eq!(codes, [220, 250, 250, 550, 550, 250, 250, 354, 250, 221]);
    let path = format!("/domains/{}", domain["id"].as_str().unwrap());
    assert_eq!(
        crate::common::get(&app, &path, &s.key).await["last_14_days_volume"],
        50
    );

    // Over the size cap: refused with 552, nothing imported.
    let big = format!(
        "From: x@y.example\r\nSubject: big\r\n\r\n{}\r\n.\r\n",
        format!("{}\r\n", "a".repeat(998)).repeat(72)
    );
    let codes = smtp(
        addr,
        &[
            b"HELO r.example\r\n",
            b"MAIL FROM:<x@y.example>\r\n",
            rcpt.as_bytes(),
            b"DATA\r\n",
            big.as_bytes(),
            b"QUIT\r\n",
        ],
    )
    .await;
    assert_eq!(codes, [220, 250, 250, 250, 354, 552, 221]);
}

/// A payload of `tests/api/fixtures/lambda` (its README names the AWS shape of each).
fn lambda_fixture(name: &str) -> serde_json::Value {
    let path = format!("{}/fixtures/lambda/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The Lambda event SNS delivers for an SES receipt whose S3 action stored `key`
/// (`sns-ses-receipt.json`: the SNS record around the SES notification, itself a JSON string),
/// with the recipients and SES's DKIM and DMARC verdicts of this message.
fn ses_receipt_event(key: &str, recipients: &[&str], dkim: &str, dmarc: &str) -> serde_json::Value {
    let mut event = lambda_fixture("sns-ses-receipt.json");
    let message = &mut event["Records"][0]["Sns"]["Message"];
    let mut notification: serde_json::Value =
        serde_json::from_str(message.as_str().unwrap()).unwrap();
    notification["mail"]["destination"] = serde_json::json!(recipients);
    notification["mail"]["commonHeaders"]["to"] = serde_json::json!(recipients);
    let receipt = &mut notification["receipt"];
    receipt["recipients"] = serde_json::json!(recipients);
    receipt["dkimVerdict"]["status"] = serde_json::json!(dkim);
    receipt["dmarcVerdict"]["status"] = serde_json::json!(dmarc);
    receipt["action"]["objectKey"] = serde_json::json!(key);
    *message = serde_json::json!(notification.to_string());
    event
}

/// Tenant trust, finding 1 on AWS: SES's receipt (through SNS) says whom the mail was for and
/// whether it passed DKIM and DMARC; the message is ingested for the domains its recipients
/// name, once.
#[tokio::test]
async fn the_aws_mailbox_handler_ingests_each_receipt_for_its_recipients_once() {
    let app = quiet_app().await;
    let state = &app.stack.state;
    let s = app.sign_up("ses@ses.example", "SES").await;
    let domain = add_domain(&app, &s.key, "ses.example").await;
    let other = app.sign_up("ses@watcher.example", "Watcher").await;
    let theirs = add_domain(&app, &other.key, "ses.example").await;
    let objects = state.objects.as_ref().unwrap();
    let rua = domain["monitoring_email"].as_str().unwrap();
    let message = format!(
        "From: noreply-dmarc-support@receiver.example\r\nTo: {rua}\r\nSubject: report\r\nMIME-Version: 1.0\r\n\
Content-Type: text/xml\r\n\r\n{}",
        String::from_utf8(yesterday_report(&app, "ses.example", "ses-1")).unwrap()
    );
    objects
        .put(
            "inbound/0a1b2c-msg",
            message.into_bytes().into(),
            "message/rfc822",
        )
        .await
        .unwrap();
    let event = ses_receipt_event("inbound/0a1b2c-msg", &[rua], "PASS", "PASS");
    let answer = worker_ingest::handle_sns_event(state, &event)
        .await
        .unwrap();
    let report = &answer["messages"][0]["reports"][0];
    assert_eq!(report["status"], "imported", "{answer}");
    assert_eq!(report["authenticated"], true, "SES's verdicts: {answer}");
    assert!(
        objects.head("inbound/0a1b2c-msg").await.unwrap().is_none(),
        "the inbound copy is removed"
    );
    let volume = |key: &str, domain: &serde_json::Value| {
        let path = format!("/domains/{}", domain["id"].as_str().unwrap());
        let key = key.to_owned();
        let app = &app;
        async move { crate::common::get(app, &path, &key).await["last_14_days_volume"].clone() }
    };
    assert_eq!(volume(&s.key, &domain).await, 50);
    assert_eq!(
        volume(&other.key, &theirs).await,
        0,
        "another organization watching the name gets nothing"
    );
    // The same notification again (Lambda retries) finds nothing left to do.
    let again = worker_ingest::handle_sns_event(state, &event)
        .await
        .unwrap();
    assert_eq!(again["messages"], serde_json::json!([]));
    // A receipt naming an object outside inbound/, or of another action, is never read.
    objects
        .put("support/x", b"x".to_vec().into(), "text/plain")
        .await
        .unwrap();
    let stray = ses_receipt_event("support/x", &[rua], "PASS", "PASS");
    assert_eq!(
        worker_ingest::handle_sns_event(state, &stray)
            .await
            .unwrap()["messages"],
        serde_json::json!([])
    );
    // Without SES's DKIM pass the report is unauthenticated.
    let xml = yesterday_report(&app, "ses.example", "ses-2");
    objects
        .put("inbound/3d4e-msg", xml.into(), "message/rfc822")
        .await
        .unwrap();
    let event = ses_receipt_event("inbound/3d4e-msg", &[rua], "FAIL", "PASS");
    let answer = worker_ingest::handle_sns_event(state, &event)
        .await
        .unwrap();
    let report = &answer["messages"][0]["reports"][0];
    assert_eq!(
        (&report["status"], &report["authenticated"]),
        (&serde_json::json!("imported"), &serde_json::json!(false)),
        "{answer}"
    );
    // The function is subscribed to the SNS topic only: an S3 notification of the inbound
    // object (which names no recipient) is refused, and the object is left for the receipt.
    let xml = yesterday_report(&app, "ses.example", "ses-3");
    let key = "inbound/o3vrnil0e2ic28trm7dfhrc2v0clambda";
    objects
        .put(key, xml.into(), "message/rfc822")
        .await
        .unwrap();
    let s3 = lambda_fixture("s3-object-created.json");
    assert!(worker_ingest::handle_sns_event(state, &s3).await.is_err());
    assert!(objects.head(key).await.unwrap().is_some());
}

/// A one-day report for yesterday with `records` of (ip, count, dkim pass, spf pass).
fn report_of(
    app: &mailward_api_tests::TestApp,
    domain: &str,
    id: &str,
    records: &[(&str, u64, bool, bool)],
) -> Vec<u8> {
    let today = crate::common::today_start(app);
    let verdict = |pass: bool| if pass { "pass" } else { "fail" };
    let rows: String = records
        .iter()
        .map(|(ip, n, dkim, spf)| {
            format!(
                "<record><row><source_ip>{ip}</source_ip><count>{n}</count><policy_evaluated><disposition>none</disposition>\
<dkim>{}</dkim><spf>{}</spf></policy_evaluated></row><identifiers><header_from>{domain}</header_from></identifiers></record>",
                verdict(*dkim),
                verdict(*spf)
            )
        })
        .collect();
    format!(
        "<feedback><report_metadata><org_name>Receiver</org_name><report_id>{id}</report_id><date_range><begin>{}</begin>\
<end>{}</end></date_range></report_metadata><policy_published><domain>{domain}</domain><p>none</p></policy_published>{rows}</feedback>",
        today - 86_400,
        today - 1
    )
    .into_bytes()
}

#[tokio::test]
async fn the_summary_and_senders_read_the_imported_reports() {
    let app = quiet_app().await;
    let state = &app.stack.state;
    let s = app.sign_up("views@views.example", "Views").await;
    let domain = add_domain(&app, &s.key, "views.example").await;
    let id = domain["id"].as_str().unwrap().to_owned();
    let summary_path = format!("/domains/{id}/reports/summary");
    let empty = crate::common::get(&app, &summary_path, &s.key).await;
    assert_eq!(empty["volume"], 0);
    assert_eq!(empty["next_action"]["code"], "wait_for_reports");
    assert_eq!(empty["recommendation"]["status"], "hold");

    ingest(
        state,
        &yesterday_report(&app, "views.example", "v1"),
        &to(&domain),
        &Limits::default(),
    )
    .await
    .unwrap();
    let summary = crate::common::get(&app, &summary_path, &s.key).await;
    let yesterday =
        mailward_store::reports::day_string(app.clock.now().date().previous_day().unwrap());
    assert_eq!(summary["date_to"], yesterday.as_str());
    assert_eq!(
        (
            summary["volume"].as_u64(),
            summary["dmarc_pass_pct"].as_f64()
        ),
        (Some(50), Some(80.0))
    );
    assert_eq!(
        (
            summary["spf_pass_pct"].as_f64(),
            summary["dkim_pass_pct"].as_f64()
        ),
        (Some(80.0), Some(60.0))
    );
    assert_eq!(
        summary["totals"],
        serde_json::json!({"compliant": 40, "non_compliant": 0, "forwarded": 0, "unknown": 10, "undetermined": 0})
    );
    assert_eq!(summary["previous_period"]["volume"], 0);
    assert_eq!(summary["delta"]["volume"], 50);
    assert_eq!(summary["stored"]["last_14_days_volume"], 50);
    assert_eq!(summary["policy_state"], "none");
    assert_eq!(
        summary["recommendation"]["status"], "hold",
        "too little data"
    );
    assert_eq!(summary["probe_tasks_total"], 0);

    // A bigger report where every known sender passes: advancing is recommended.
    let report = report_of(
        &app,
        "views.example",
        "v2",
        &[
            ("192.0.2.10", 300, true, true),
            ("203.0.113.99", 3, false, false),
        ],
    );
    ingest(state, &report, &to(&domain), &Limits::default())
        .await
        .unwrap();
    let summary =
        crate::common::get(&app, &format!("{summary_path}?period=last_14_days"), &s.key).await;
    assert_eq!(
        summary["recommendation"]["status"], "advance_recommended",
        "{summary}"
    );
    assert_eq!(summary["recommendation"]["next_policy"], "quarantine");
    assert_eq!(summary["next_action"]["code"], "advance_policy");
    // A known sender failing holds it back.
    let report = report_of(
        &app,
        "views.example",
        "v3",
        &[("192.0.2.10", 20, false, false)],
    );
    ingest(state, &report, &to(&domain), &Limits::default())
        .await
        .unwrap();
    let summary = crate::common::get(&app, &summary_path, &s.key).await;
    assert_eq!(summary["totals"]["non_compliant"], 20);
    assert_eq!(summary["recommendation"]["status"], "hold");
    assert_eq!(summary["next_action"]["code"], "fix_failing_senders");
    let total: u64 = [
        "compliant",
        "non_compliant",
        "forwarded",
        "unknown",
        "undetermined",
    ]
    .iter()
    .map(|k| summary["totals"][k].as_u64().unwrap())
    .sum();
    assert_eq!(total, summary["volume"].as_u64().unwrap());

    let senders = crate::common::get(
        &app,
        &format!("/domains/{id}/reports/senders?limit=2"),
        &s.key,
    )
    .await;
    assert_eq!(senders["sender_count"], 4);
    assert_eq!(senders["truncated"], true);
    assert_eq!(senders["senders"].as_array().unwrap().len(), 2);
    assert_eq!(senders["senders"][0]["source_ip"], "192.0.2.10");
    assert_eq!(senders["senders"][0]["volume"], 350);
    assert_eq!(
        senders["senders"][0]["header_from"],
        serde_json::json!(["views.example"])
    );
    assert_eq!(senders["senders"][0]["last_seen"], yesterday.as_str());
    assert_eq!(senders["total_volume"], summary["volume"]);

    for (query, param) in [
        ("reports/summary?period=forever", "period"),
        ("reports/senders?limit=21", "limit"),
        ("reports/senders?limit=0", "limit"),
    ] {
        let (status, body) = crate::common::call(
            &app,
            reqwest::Method::GET,
            &format!("/domains/{id}/{query}"),
            &s.key,
            None,
        )
        .await;
        assert_eq!(
            (status.as_u16(), body["param"].as_str()),
            (400, Some(param)),
            "{query}"
        );
    }
    let other = app
        .sign_up("views@other-views.example", "Other Views")
        .await;
    let (status, _) =
        crate::common::call(&app, reqwest::Method::GET, &summary_path, &other.key, None).await;
    assert_eq!(status, 404);
}

/// A one-day report of `records` records from distinct sources (every third one failing
/// DMARC), `count` 1 + i % 5 each.
fn big_report(domain: &str, id: &str, begin: i64, records: u64) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut xml = format!(
        r#"<?xml version="1.0"?><feedback><report_metadata><org_name>Big Receiver</org_name>
<report_id>{id}</report_id><date_range><begin>{begin}</begin><end>{end}</end></date_range></report_metadata>
<policy_published><domain>{domain}</domain><p>none</p></policy_published>
"#,
        end = begin + 86_399
    );
    for i in 0..records {
        let ip = std::net::Ipv4Addr::from(0x2d00_0000u32 + i as u32);
        let pass = if i % 3 == 2 { "fail" } else { "pass" };
        let _ = writeln!(
            xml,
            "<record><row><source_ip>{ip}</source_ip><count>{}</count><policy_evaluated>\
             <disposition>none</disposition><dkim>{pass}</dkim><spf>{pass}</spf></policy_evaluated></row>\
             <identifiers><header_from>{domain}</header_from></identifiers><auth_results><dkim>\
             <domain>{domain}</domain><selector>s1</selector><result>{pass}</result></dkim></auth_results></record>",
            1 + i % 5
        );
    }
    xml.push_str("</feedback>\n");
    xml.into_bytes()
}

/// Reports of 100,000 records (the size real large reporters send) import whole, plain and
/// gzip-compressed (read as it is decompressed): every record counted, every message in the
/// day's rows.
#[tokio::test]
async fn reports_of_100000_records_import_whole() {
    use std::io::Write as _;
    const RECORDS: u64 = 100_000;
    let app = quiet_app().await;
    let state = &app.stack.state;
    let s = app.sign_up("big@big-reports.example", "Big Reports").await;
    let domain = add_domain(&app, &s.key, "big-reports.example").await;
    let org: uuid::Uuid = s.org_id.parse().unwrap();
    let domain_id: uuid::Uuid = domain["id"].as_str().unwrap().parse().unwrap();
    let messages: u64 = (0..RECORDS).map(|i| 1 + i % 5).sum();
    let passing: u64 = (0..RECORDS).filter(|i| i % 3 != 2).map(|i| 1 + i % 5).sum();
    let today = app.clock.now().date();
    for (n, gzip) in [(1i64, false), (2, true)] {
        let day = today - time::Duration::days(n);
        let begin = day.midnight().assume_utc().unix_timestamp();
        let mut bytes = big_report("big-reports.example", &format!("big-{n}"), begin, RECORDS);
        if gzip {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(&bytes).unwrap();
            bytes = enc.finish().unwrap();
        }
        let out = ingest(state, &bytes, &to(&domain), &Limits::default())
            .await
            .unwrap();
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            (out[0].status, out[0].records, out[0].messages),
            (Status::Imported, RECORDS, messages),
            "gzip {gzip}: {:?}",
            out[0]
        );
        let rows =
            mailward_store::reports::rows_between(state.store.as_ref(), org, domain_id, day, day)
                .await
                .unwrap();
        assert_eq!(rows.len() as u64, RECORDS, "one row per source");
        let volume: u64 = rows.iter().map(|(_, r)| r.volume).sum();
        let pass: u64 = rows.iter().map(|(_, r)| r.dmarc_pass).sum();
        assert_eq!((volume, pass), (messages, passing), "gzip {gzip}");
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(files_under(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// Tenant trust, finding 2: a delivery nobody owns (junk, a refused report, a report for a name
/// no organization watches) leaves no raw copy behind; an imported one keeps its copy. Checked
/// through the object store port, so on S3 (moto) as on the local directory.
#[tokio::test]
async fn unowned_deliveries_leave_no_raw_copy() {
    let app = quiet_app().await;
    let state = &app.stack.state;
    let objects = state.objects.as_ref().expect("object storage");
    let limits = Limits::default();
    let s = app.sign_up("raw@test.example", "Raw Co").await;
    let domain = add_domain(&app, &s.key, "test.net").await;
    let mine = to(&domain);
    let junk = ingest(
        state,
        b"not a report at all, just bytes".to_vec(),
        &mine,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(junk[0].status, Status::Refused, "{junk:?}");
    if !mailward_api_tests::backend_is_aws() {
        // The local store's directory: nothing written for the junk (its name is its hash).
        assert_eq!(
            files_under(app.dir.path())
                .iter()
                .filter(|p| p.to_string_lossy().contains("raw"))
                .count(),
            0
        );
    }
    let unwatched = ingest(
        state,
        fixture("dmarc-report-viewer/acme.xml"),
        &mine,
        &limits,
    )
    .await
    .unwrap();
    let o = &unwatched[0];
    assert_eq!(o.status, Status::Unattributed, "{unwatched:?}");
    let unix = |t: &Option<String>| {
        time::OffsetDateTime::parse(
            t.as_deref().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
        .unix_timestamp()
    };
    let identity = mailward_domain::reports::ReportIdentity {
        kind: mailward_domain::reports::ReportKind::Dmarc,
        reporter: o.reporter.clone().unwrap(),
        report_id: o.report_id.clone().unwrap(),
        policy_domain: o.policy_domain.clone().unwrap(),
        begin: unix(&o.begin),
        end: unix(&o.end),
    };
    let day = mailward_store::reports::day_string(app.clock.now().date());
    let unwatched_key = format!("reports/raw/{day}/{}", identity.key());
    assert!(
        objects.head(&unwatched_key).await.unwrap().is_none(),
        "no copy of a report nobody watches"
    );
    let owned = ingest(
        state,
        fixture("dmarc-report-converter/test.xml"),
        &mine,
        &limits,
    )
    .await
    .unwrap();
    assert_eq!(owned[0].status, Status::Imported, "{owned:?}");
    let stored = mailward_store::reports::list(
        state.store.as_ref(),
        s.org_id.parse().unwrap(),
        domain["id"].as_str().unwrap().parse().unwrap(),
    )
    .await
    .unwrap();
    let kept = stored[0].raw_key.clone().expect("a raw key");
    assert!(
        objects.head(&kept).await.unwrap().is_some(),
        "the imported report's copy is kept"
    );
}

/// Tenant trust, finding 2: anyone may connect to the mailbox, so it bounds what one client
/// holds: sessions at once (the next is answered 421), and messages per session (the next
/// `MAIL` is answered 421 and the session closed).
#[tokio::test]
async fn the_smtp_mailbox_bounds_sessions_and_messages() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let app = mailward_api_tests::TestApp::start_with(|s| {
        s.publish_outbox = false;
        s.smtp_listen = Some("127.0.0.1:0".parse().unwrap());
        s.smtp_max_sessions = 2;
    })
    .await;
    let addr = app.stack.smtp_addr.expect("listening");
    let greeting = |stream: tokio::net::TcpStream| async move {
        let mut lines = tokio::io::BufReader::new(stream).lines();
        lines.next_line().await.unwrap().unwrap_or_default()
    };
    let first = tokio::net::TcpStream::connect(addr).await.unwrap();
    let second = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut first_lines, mut second_lines) = (
        tokio::io::BufReader::new(first).lines(),
        tokio::io::BufReader::new(second).lines(),
    );
    assert!(
        first_lines
            .next_line()
            .await
            .unwrap()
            .unwrap()
            .starts_with("220")
    );
    assert!(
        second_lines
            .next_line()
            .await
            .unwrap()
            .unwrap()
            .starts_with("220")
    );
    let third = tokio::net::TcpStream::connect(addr).await.unwrap();
    assert!(
        greeting(third).await.starts_with("421"),
        "a third session at once"
    );
    drop((first_lines, second_lines));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;

    // One session, message after message: the one past the cap is refused.
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = tokio::io::BufReader::new(read).lines();
    let code = async |lines: &mut tokio::io::Lines<_>| -> String {
        loop {
            let line: String = lines.next_line().await.unwrap().unwrap_or_default();
            if line.len() < 4 || line.as_bytes()[3] == b' ' {
                return line;
            }
        }
    };
    assert!(code(&mut lines).await.starts_with("220"));
    write.write_all(b"EHLO r.example\r\n").await.unwrap();
    assert!(code(&mut lines).await.starts_with("250"));
    let rcpt = format!(
        "RCPT TO:<rua+{}@{}>\r\n",
        uuid::Uuid::new_v4().simple(),
        app.stack.state.config.report_domain
    );
    for n in 0..mailward_local_stack::smtp::DEFAULT_MAX_MESSAGES {
        write
            .write_all(b"MAIL FROM:<r@r.example>\r\n")
            .await
            .unwrap();
        assert!(code(&mut lines).await.starts_with("250"), "message {n}");
        write.write_all(rcpt.as_bytes()).await.unwrap();
        assert!(code(&mut lines).await.starts_with("250"));
        write.write_all(b"DATA\r\n").await.unwrap();
        assert!(code(&mut lines).await.starts_with("354"));
        write
            .write_all(b"Subject: x\r\n\r\nnot a report\r\n.\r\n")
            .await
            .unwrap();
        assert!(code(&mut lines).await.starts_with("250"));
    }
    write
        .write_all(b"MAIL FROM:<r@r.example>\r\n")
        .await
        .unwrap();
    assert!(
        code(&mut lines).await.starts_with("421"),
        "one message too many"
    );
    assert_eq!(
        lines.next_line().await.unwrap(),
        None,
        "and the session is closed"
    );
}
