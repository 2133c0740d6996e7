//! The local stack as a process of its own, for the tests that kill it with SIGKILL while it
//! works (`tests/api/api/killed.rs`): `stack DATA_DIR LISTEN_ADDR EXTRA_CA_PEM`. Webhook
//! deliveries may go to loopback receivers that present a certificate of `EXTRA_CA_PEM`; no DNS
//! server answers; nothing is swept unless asked.

use mailward_local_stack::{LocalStack, Settings};
use std::path::PathBuf;
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: stack DATA_DIR LISTEN_ADDR EXTRA_CA_PEM";
    let data = PathBuf::from(args.next().ok_or(usage)?);
    let listen = args.next().ok_or(usage)?.parse()?;
    let ca = PathBuf::from(args.next().ok_or(usage)?);
    let mut settings = Settings::new(data);
    settings.listen = listen;
    settings.dns = Some("127.0.0.1:9".into());
    settings.webhook_allow_loopback = true;
    settings.extra_ca = Some(ca);
    settings.poll_interval = Duration::from_millis(50);
    settings.sweep_interval = None;
    settings.reconcile_interval = None;
    settings.evaluate_new_domains = false;
    let _stack = LocalStack::start(settings).await?;
    std::future::pending::<()>().await;
    Ok(())
}
