//! Measures one audit of a typical fixture domain through a DNS server with 20 ms injected
//! latency per query, against the critical-path lower bound (DESIGN §8: under 1.5×).
//!
//! Run: `cargo run -p mailward-audit --example audit_latency --release`
//!
//! The domain `typical.test` (tests/common/mod.rs) has two MX hosts, an SPF record with `mx` and
//! a nested include, a DKIM key, DMARC with an external report destination
//! (`reports.mailward.test`, authorized), MTA-STS and TLS-RPT. Its longest chains of dependent
//! lookups, in rounds:
//!
//! | dimension | chain | rounds |
//! |---|---|---|
//! | spf | TXT typical.test → TXT _spf.provider.test (and MX typical.test) → TXT _spf2.provider.test (and A/AAAA of the MX hosts) | 3 |
//! | dmarc | TXT _dmarc.typical.test → every name of the rua host's tree walk at once (+ the authorization TXT) | 2 (3 with the NODATA note below) |
//! | mx | MX → A/AAAA of each host | 2 (3 with the NODATA note below) |
//! | ns, dkim, bimi, mtaSts, tlsRpt | one query (or one fetch) each | 1 |
//!
//! NODATA note: `mailward-dns` follows every NODATA answer with a CNAME query (to rebuild a CNAME
//! chain hickory drops), so a NODATA lookup costs two round trips: `AAAA mx1.typical.test` (A
//! only) and `TXT _dmarc.reports.mailward.test` (an empty non-terminal) do. Neither lengthens
//! the SPF chain, which stays the longest.
//!
//! So the lower bound is 3 rounds × 20 ms = 60 ms (plus loopback and CPU time, which are small).

#[path = "../tests/common/mod.rs"]
mod common;

use mailward_audit::audit;
use mailward_dns_fixture::{Fault, FixtureServer, Scope};
use std::time::{Duration, Instant};

const LATENCY_MS: u64 = 20;
const CRITICAL_ROUNDS: u64 = 3;
const RUNS: usize = 15;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = FixtureServer::start(common::zones()).await?;
    let resolver = server.resolver()?;
    let fetcher = common::fetcher();
    let input = common::input("typical.test");

    // Warm-up without latency (connection setup, allocations), and a correctness check.
    let warm = audit(&resolver, &fetcher, &input).await;
    assert_eq!(warm.summary.score, 100, "{:#?}", warm.summary);

    server.inject(
        Scope::Global,
        Fault::Latency(Duration::from_millis(LATENCY_MS)),
    );
    server.reset_stats();
    let cpu_before = process_cpu();
    let mut walls = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let result = audit(&resolver, &fetcher, &input).await;
        walls.push(start.elapsed());
        assert_eq!(result, warm, "latency must not change the result");
    }
    let cpu_per_audit = process_cpu().saturating_sub(cpu_before) / u32::try_from(RUNS).unwrap_or(1);
    let queries = server.query_count() / RUNS;
    walls.sort();
    let bound = Duration::from_millis(CRITICAL_ROUNDS * LATENCY_MS);
    let median = walls[RUNS / 2];
    println!("audit of typical.test, {LATENCY_MS} ms injected latency per query, {RUNS} runs");
    println!("  queries per audit:     {queries}");
    println!(
        "  CPU per audit:         {:.1} ms (whole process: the audit and the in-process DNS server)",
        ms(cpu_per_audit)
    );
    println!("  wall time min:         {:.1} ms", ms(walls[0]));
    println!("  wall time median:      {:.1} ms", ms(median));
    println!("  wall time max:         {:.1} ms", ms(walls[RUNS - 1]));
    println!(
        "  critical-path bound:   {:.1} ms ({CRITICAL_ROUNDS} rounds x {LATENCY_MS} ms)",
        ms(bound)
    );
    println!(
        "  median / bound:        {:.2}x (target < 1.5x)",
        ms(median) / ms(bound)
    );
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// User plus system CPU time of this process so far (Linux `/proc/self/stat`, clock ticks of
/// 10 ms); zero where unavailable.
fn process_cpu() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}
